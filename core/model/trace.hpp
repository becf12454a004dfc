#pragma once
// The immutable result of one computation: every stage, per batch item and head.
// Stages are shared pointers so a recompute can reuse the ones an edit did not
// reach, and so stages that are identical (no mask -> masked == scaled, no
// dropout -> dropped == weights) are stored once.
#include <array>
#include <bitset>
#include <initializer_list>
#include <optional>
#include <string>

#include "model/session.hpp"

namespace al {

// Enumerator values are stable indices (arrays of stages are indexed by them);
// kAllStages lists them in the order the computation produces them.
enum class Stage {
  Q,        // (B, h, Lq, d_k)
  K,        // (B, h_kv, Lk, d_k)
  V,        // (B, h_kv, Lk, d_k)
  Scores,   // (B, h, Lq, Lk)  Q·Kᵀ (rotated Q and K with RoPE); query head h reads K/V head h ÷ (h / h_kv)
  Scaled,   // (B, h, Lq, Lk)  scores · scale
  Masked,   // (B, h, Lq, Lk)  biased (or scaled), with masked cells set to the fill value
  Weights,  // (B, h, Lq, Lk)  softmax over the last axis
  Dropped,  // (B, h, Lq, Lk)  dropout(weights)
  Context,  // (B, h, Lq, d_k) dropped · V
  Concat,   // (B, Lq, d_model) heads side by side
  Output,   // (B, Lq, d_model) concat · W_O + b_O (== concat without W_O)
  // Present only when their option is on (Trace::has):
  XPos,     // (B, Lq, d_model) x + sinusoidal positions (positional.type = sinusoidal)
  XKvPos,   // (B, Lk, d_model) x_kv + sinusoidal positions (cross attention)
  QRot,     // (B, h, Lq, d_k)  Q rotated by position (RoPE)
  KRot,     // (B, h_kv, Lk, d_k) K rotated by position (RoPE)
  Biased,   // (B, h, Lq, Lk)  scaled − m_h·|i − j| (ALiBi)
};
constexpr int kStageCount = 16;
constexpr std::array<Stage, kStageCount> kAllStages = {
    Stage::XPos,    Stage::XKvPos,  Stage::Q,      Stage::K,       Stage::V,       Stage::QRot,
    Stage::KRot,    Stage::Scores,  Stage::Scaled, Stage::Biased,  Stage::Masked,  Stage::Weights,
    Stage::Dropped, Stage::Context, Stage::Concat, Stage::Output};
// The stages every trace has.
// A set of stages, indexed by Stage (ComputeOptions::keep).
using StageSet = std::bitset<kStageCount>;
inline StageSet stage_set(std::initializer_list<Stage> stages) {
  StageSet set;
  for (Stage s : stages) set.set(static_cast<size_t>(s));
  return set;
}
// The (B, h, Lq, Lk) stages, in computation order.
constexpr std::array<Stage, 6> kSquareStages = {Stage::Scores,  Stage::Scaled,  Stage::Biased,
                                                Stage::Masked, Stage::Weights, Stage::Dropped};

// "weights,scores" -> those stages; only the (B, h, Lq, Lk) ones can be left out (ComputeOptions::keep).
// Null for a name that is not one of them.
std::optional<StageSet> square_stages_from_names(const std::string& comma_list);

constexpr bool always_present(Stage s) { return static_cast<int>(s) <= static_cast<int>(Stage::Output); }

const char* stage_name(Stage s);                        // "q", "scores", ...
std::optional<Stage> stage_from_name(const std::string& name);

struct Dims {
  Index batch = 0, heads = 0, len_q = 0, len_kv = 0, d_model = 0, d_k = 0;
  Index kv_heads = 0;  // K/V heads: heads for multi-head, fewer for grouped-query attention
  Index group() const { return kv_heads > 0 ? heads / kv_heads : 1; }  // query heads per K/V head
  Index kv_head(Index head) const { return head / group(); }
};

// What the views of one per-head stage derive from it, computed together with
// the trace when ComputeOptions::summarize is set (the app does, so its UI thread
// never rescans (n, n) matrices when a new trace arrives).
struct StageSummary {
  TensorPtr head_mean;  // (B, R, C): the mean over heads, sum in head order then ÷ h
  // Per matrix (b·h + head): the largest |finite value| (0 if none; for the
  // Masked stage only over cells the mask attends) and the largest finite
  // value (-inf if none).
  std::vector<float> max_abs;
  std::vector<float> max_value;
  // With ComputeOptions::peak_texels, for a stage longer than that on a side: each matrix and
  // each batch item's head mean reduced to at most peak_texels texels a side, a texel the peak
  // of its block of cells (numerics/block_peaks.hpp), so the frame that shows a new trace
  // uploads them instead of reading (n, n) matrices. Null otherwise.
  TensorPtr peaks;        // (B, h, Tr, Tc)
  TensorPtr mean_peaks;   // (B, Tr, Tc)
  Index peak_texels = 0;  // the side they were reduced for
};

// Checks a learner can read to trust the softmax: both over rows that are not
// fully masked, on the weights before dropout.
struct TraceChecks {
  double masked_weight_max = 0;  // largest weight on a masked cell (0 with no mask)
  double masked_share_max = 0;   // largest sum of one row's weights on masked cells
  double row_sum_error_max = 0;  // largest |Σⱼ wᵢⱼ − 1| (NaN if a row's sum is NaN)
};

struct Trace {
  Dims dims;
  double scale = 1.0;   // the factor actually applied to QKᵀ
  double mask_fill = 0;
  std::array<TensorPtr, kStageCount> stages;  // null for a stage whose option is off
  std::vector<double> alibi_slopes;            // (h) m_h when positional is ALiBi, else empty

  TensorPtr mask;           // (B, Lq, Lk) of 1/0: the combined mask (null if none)
  TensorPtr row_max;        // (B, h, Lq) max subtracted by the stable softmax
  TensorPtr row_sum;        // (B, h, Lq) sum of exp(x - max) divided by
  std::vector<unsigned char> fully_masked_rows;  // (B, Lq): every key masked
  TraceChecks checks;
  Index memory_bytes = 0;   // bytes held by this trace's distinct tensors
  double compute_ms = 0;    // wall time of the computation
  // Per stage, for the per-head stages (all but x_pos, x_kv_pos, concat, output) when summarized; stages
  // that share a tensor share its summary. Null otherwise. Not in memory_bytes
  // (B·R·C floats per distinct stage: 1/h of it; the peaks (h + 1)·B·Tr·Tc).
  std::array<std::shared_ptr<const StageSummary>, kStageCount> summaries;

  bool has(Stage s) const { return stages[static_cast<int>(s)] != nullptr; }
  const Tensor& stage(Stage s) const { return *stages[static_cast<int>(s)]; }
  // The stage scores read for Q and K: the rotated ones with RoPE.
  Stage scored_q() const { return has(Stage::QRot) ? Stage::QRot : Stage::Q; }
  Stage scored_k() const { return has(Stage::KRot) ? Stage::KRot : Stage::K; }
  // The stage the mask is applied to: biased with ALiBi, else scaled (whether or not
  // the trace kept it, ComputeOptions::keep).
  Stage before_mask() const { return alibi_slopes.empty() ? Stage::Scaled : Stage::Biased; }
  TensorPtr stage_ptr(Stage s) const { return stages[static_cast<int>(s)]; }
  const StageSummary* summary(Stage s) const { return summaries[static_cast<int>(s)].get(); }
  bool any_fully_masked() const;
};

// Folds the checks of some rows into `into` (NaN errors win).
void merge_checks(const TraceChecks& part, TraceChecks& into);

}  // namespace al
