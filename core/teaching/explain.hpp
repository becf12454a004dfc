#pragma once
// "Explain this cell": how one number of a trace was made, with the real values
// that went into it (the terms of its dot product, the scale, the mask, the
// softmax's max/exp/sum, the dropout decision), and which rows and columns of
// which matrices it came from, so a view can highlight them.
#include <optional>
#include <string>
#include <vector>

#include "editing/edits.hpp"
#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

// One cell of a trace stage. `head` is ignored for x_pos, x_kv_pos, Concat and
// Output; head -1 of a per-head stage means the average over heads (as the
// heatmaps show it). For K, V and k_rot `head` is the K/V head (fewer than the
// query heads with grouped-query attention), for the other stages the query head.
struct CellAddress {
  Stage stage = Stage::Scores;
  Index batch = 0, head = 0, row = 0, col = 0;
};

// One addend of a sum: factor_a × factor_b (index = the summation index p or j).
struct SumTerm {
  Index index = 0;
  double factor_a = 0, factor_b = 0;
  double value = 0;  // factor_a × factor_b
};

// Σ terms (+ bias). When there are many terms only the largest |value| are
// listed (largest first) and the others are summed into `rest`.
struct TermSum {
  std::vector<SumTerm> terms;   // in index order, or largest first when capped
  Index total_terms = 0;        // how many terms the full sum has
  double rest = 0;              // sum of the terms not listed
  bool has_bias = false;
  double bias = 0;
  double total = 0;             // Σ every term + bias, in double
  bool capped() const { return static_cast<Index>(terms.size()) < total_terms; }
};

// A row or column of a matrix the cell came from. `matrix` is a trace stage name
// ("q", "weights", "concat", ...), a session input name ("x", "w_q", "w_o", ...)
// or "mask". Weight columns are in the separate matrix's coordinates even when
// the session holds a fused W_qkv; a fused session's projection adds a "w_qkv"
// column (see Explanation::fused_slice).
struct SourceLine {
  std::string matrix;
  Index batch = 0;
  Index head = -1;   // -1: not per head
  bool is_row = true;
  Index index = 0;
};

// A projection's weight column on a session with a fused W_qkv (d_model,
// 3·d_model) = [W_Q | W_K | W_V]: the block W_qkv[:, begin:end] is the
// separate matrix `weight`, and `column` is this cell's column of W_qkv.
struct FusedWeightSlice {
  InputId weight = InputId::WQ;  // WQ, WK or WV
  Index begin = 0, end = 0;
  Index column = 0;
};

enum class ExplainKind {
  Given,       // direct-mode Q/K/V: the value was typed in, not computed
  Projection,  // Q/K/V = x · W + b
  Score,       // q_i · k_j
  Scaled,      // score × scale
  Masked,      // kept, or replaced by the fill
  Weight,      // softmax
  Dropped,     // dropout
  Context,     // Σ_j α′_ij v_j[c]
  Concat,      // a head's context column
  Output,      // concat · W_O + b_O (or concat when there is no W_O)
  Average,     // mean over heads of a per-head stage
  Positional,  // x_pos: x + sin/cos(p / 10000^(2i/d_model))
  Rotated,     // q_rot, k_rot: one dimension of a pair turned by θ = p·base^(−2·pair/d_k)
  Biased,      // ALiBi: scaled − m_h·|i − j|
};

struct Explanation {
  CellAddress cell;
  ExplainKind kind = ExplainKind::Score;
  float value = 0;      // the cell's value in the trace
  TermSum sum;          // Projection, Score, Context, Output, Average (factor_b = 1/h)

  // Scaled: value = input × scale.
  ScaleMode scale_mode = ScaleMode::SqrtDk;
  double scale = 1;
  Index d_k = 0;
  float input = 0;      // Scaled: the score; Masked: the scaled score (B with ALiBi);
                        // Weight: the masked score; Dropped: the weight
  // Masked
  bool biased = false;  // the mask's input is B = S′ − ALiBi's penalty, not S′
  bool has_mask = false;
  bool masked = false;
  double fill = 0;
  // Weight: value = exp(input − row_max) / row_sum
  float row_max = 0, row_sum = 0;
  double exp_shifted = 0;           // exp(input − row_max)
  std::vector<SumTerm> row_exps;    // index j, factor_a = masked score, value = exp(· − max); capped
  Index row_length = 0;
  bool row_fully_masked = false;    // every key masked
  // Dropped
  bool dropout_active = false;      // training and p > 0
  double dropout_p = 0;
  bool kept = true;
  double keep_scale = 1;            // 1 / (1 − p)
  // Concat
  Index source_head = 0, source_col = 0;
  // Projection on a fused session: where its weight column sits in W_qkv (the
  // bias likewise in b_qkv); the terms are the same as with separate weights.
  std::optional<FusedWeightSlice> fused_slice;
  // Positional: value = input + encoding, encoding = sin(angle) (even column) or
  // cos(angle) (odd), angle = position / 10000^(2·(col ÷ 2)/d_model).
  // Rotated: value = x_a·cos θ − x_b·sin θ (the cell is dim_a) or x_b·cos θ + x_a·sin θ
  // (dim_b), θ = angle = position · base^(−2·pair/d_k).
  Index position = 0;
  double angle = 0;
  double encoding = 0;
  Index pair = 0, dim_a = 0, dim_b = 0;
  double x_a = 0, x_b = 0;
  double rope_base = 10000;
  // Biased: value = input − slope·distance, distance = |i − j|.
  double slope = 0;
  Index distance = 0;
  // The K/V head a query head reads (Score, Context) or the K/V head of a K/V
  // stage's cell; equal to the head without grouped-query attention.
  Index kv_head = 0;

  std::vector<SourceLine> sources;
};

// How many terms a sum lists before it groups the rest.
constexpr Index kExplainMaxTerms = 8;

// `session` must be the one the trace was computed from (Trace doesn't keep
// x or the weights). Errors name the cell and the trace's dims; a cell whose input
// stage the trace did not keep (ComputeOptions::keep) gets one with the param
// not_kept = that stage's name.
Result<Explanation> explain_cell(const Trace& trace, const Session& session,
                                 const CellAddress& cell, Index max_terms = kExplainMaxTerms);

// "1.0×1.0 + 0.0×0.5 = 1.0" (with "+ 3 smaller terms (0.012)" and "+ b (0.1)"
// when present), numbers written by lab_number(); `bias_symbol` names the bias
// ("b_c"), `smaller_terms` the grouped rest in the reader's language.
std::string format_term_sum(const TermSum& sum, const std::string& bias_symbol = "b",
                            const std::string& smaller_terms = "smaller terms");

// The weights α·V multiplies, as the step's formula names them: the dropped weights α′ when
// dropout is on (training, p > 0), else the weights α themselves (the two stages hold the same
// values then, and the step shows and explains α).
Stage context_weights(const Session& session);

// e^(x − m) as the softmax explanation writes it: a negative m in parentheses ("e^(−0.9 − (−0.5))",
// not "e^(−0.9−−0.5)").
std::string format_shifted_exp(double x, double row_max);

}  // namespace al
