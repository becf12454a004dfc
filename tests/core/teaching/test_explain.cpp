// "Explain this cell", the snapshot diff and the heads-as-a-reshape check:
// hand-checked values on seed 003, and for every cell of several presets, that
// each explanation's arithmetic gives back the trace's own value.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "model/stage_heads.hpp"
#include "numerics/attention.hpp"
#include "editing/edits.hpp"
#include "teaching/explain.hpp"
#include "numerics/heads.hpp"
#include "teaching/lab_numbers.hpp"
#include "io/session_io.hpp"
#include "teaching/trace_diff.hpp"

using al::CellAddress;
using al::ExplainKind;
using al::Stage;

namespace {

al::Session preset(const char* name) {
  auto s = al::load_preset(name);
  REQUIRE_MESSAGE(s.ok(), name);
  return *s;
}

std::shared_ptr<const al::Trace> trace_of(const al::Session& s) {
  auto t = al::compute(s);
  REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  return *t;
}

bool close(double a, double b, double tolerance = 1e-5) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tolerance * std::max(1.0, std::fabs(b));
}

al::Explanation explain(const al::Trace& t, const al::Session& s, CellAddress cell, al::Index max_terms = 8) {
  auto e = al::explain_cell(t, s, cell, max_terms);
  REQUIRE_MESSAGE(e.ok(), (e.ok() ? "" : e.error().message));
  return *e;
}

// The listed terms, the grouped rest and the bias add up to the total, and the
// total is the trace's value.
void check_sum(const al::Explanation& e) {
  double listed = e.sum.rest + (e.sum.has_bias ? e.sum.bias : 0.0);
  for (const auto& term : e.sum.terms) {
    CHECK(close(term.value, term.factor_a * term.factor_b, 1e-12));
    listed += term.value;
  }
  CHECK(close(listed, e.sum.total, 1e-9));
  CHECK(close(e.sum.total, e.value));
}

// Every cell of every stage (and the head averages) of a session.
void check_every_cell(const al::Session& s) {
  auto trace = trace_of(s);
  const al::Trace& t = *trace;
  for (Stage stage : al::kAllStages) {
    if (!t.has(stage)) continue;
    const al::Tensor& tensor = t.stage(stage);
    const bool per_head = al::stage_is_per_head(stage);
    for (al::Index b = 0; b < t.dims.batch; ++b)
      for (al::Index h = per_head ? -1 : 0; h < al::stage_heads(t.dims, stage); ++h)  // K/V heads for k, v, k_rot
        for (al::Index i = 0; i < tensor.rows(); ++i)
          for (al::Index j = 0; j < tensor.cols(); ++j) {
            CAPTURE(al::stage_name(stage));
            CAPTURE(b);
            CAPTURE(h);
            CAPTURE(i);
            CAPTURE(j);
            const al::Explanation e = explain(t, s, {stage, b, h, i, j});
            switch (e.kind) {
              case ExplainKind::Projection:
              case ExplainKind::Score:
              case ExplainKind::Context:
              case ExplainKind::Average:
                check_sum(e);
                break;
              case ExplainKind::Output:
                if (s.weights.w_o) check_sum(e);
                else CHECK(close(e.sum.total, e.value));
                break;
              case ExplainKind::Scaled:
                CHECK(close(static_cast<double>(e.input) * e.scale, e.value));
                break;
              case ExplainKind::Masked:
                CHECK(close(e.masked ? e.fill : e.input, e.value));
                break;
              case ExplainKind::Weight:
                CHECK(close(e.exp_shifted / e.row_sum, e.value));
                break;
              case ExplainKind::Dropped:
                CHECK(close(e.dropout_active ? (e.kept ? e.input * e.keep_scale : 0.0) : e.input, e.value));
                break;
              case ExplainKind::Concat:
                CHECK(e.value == t.stage(Stage::Context).matrix(b * t.dims.heads + e.source_head)(i, e.source_col));
                break;
              case ExplainKind::Positional:
                CHECK(close(e.input + e.encoding, e.value));
                break;
              case ExplainKind::Rotated:
                CHECK(close(j == e.dim_a ? e.x_a * std::cos(e.angle) - e.x_b * std::sin(e.angle)
                                         : e.x_b * std::cos(e.angle) + e.x_a * std::sin(e.angle),
                            e.value));
                break;
              case ExplainKind::Biased:
                CHECK(close(e.input - e.slope * static_cast<double>(e.distance), e.value));
                break;
              case ExplainKind::Given:
                CHECK(e.value == al::input(s, stage == Stage::Q   ? al::InputId::Q
                                              : stage == Stage::K ? al::InputId::K
                                                                  : al::InputId::V)
                                     ->matrix(b)(i, h * t.dims.d_k + j));
                break;
            }
          }
  }
}

}  // namespace

TEST_CASE("explain: e^(x − max) puts a negative max in parentheses") {
  CHECK(al::format_shifted_exp(-0.9092, -0.5143) == "e^(−0.9092 − (−0.5143))");
  CHECK(al::format_shifted_exp(2.5, 3.0) == "e^(2.5 − 3.0)");
  CHECK(al::format_shifted_exp(-std::numeric_limits<double>::infinity(), -0.5) == "e^(−∞ − (−0.5))");
}

TEST_CASE("explain: seed 003's first score and its scaling, by hand") {
  const al::Session s = preset("seed-003-example");
  auto t = trace_of(s);
  // Token 1's query [1, 0] against token 1's key [1, 0.5].
  const al::Explanation score = explain(*t, s, {Stage::Scores, 0, 0, 0, 0});
  CHECK(score.kind == ExplainKind::Score);
  CHECK(al::format_term_sum(score.sum) == "1.0×1.0 + 0.0×0.5 = 1.0");
  CHECK(score.value == 1.0f);
  REQUIRE(score.sources.size() == 2);
  CHECK(score.sources[0].matrix == "q");
  CHECK(score.sources[0].index == 0);
  CHECK(score.sources[1].matrix == "k");
  CHECK(score.sources[1].is_row);

  // ÷ √2: scale 1/√2, 1.0 → 0.7071.
  const al::Explanation scaled = explain(*t, s, {Stage::Scaled, 0, 0, 0, 0});
  CHECK(scaled.kind == ExplainKind::Scaled);
  CHECK(scaled.scale_mode == al::ScaleMode::SqrtDk);
  CHECK(scaled.d_k == 2);
  CHECK(scaled.input == 1.0f);
  CHECK(scaled.scale == doctest::Approx(1.0 / std::sqrt(2.0)));
  CHECK(al::lab_number(scaled.value) == "0.7071");

  // No mask: the masked stage keeps the scaled score.
  const al::Explanation masked = explain(*t, s, {Stage::Masked, 0, 0, 0, 0});
  CHECK_FALSE(masked.has_mask);
  CHECK_FALSE(masked.masked);

  // Row 1's softmax: scaled scores q_1·k_j/√2 = [1, .5, 1, 0, 1]/√2, max 1/√2.
  const al::Explanation weight = explain(*t, s, {Stage::Weights, 0, 0, 0, 1});
  const double r = 1.0 / std::sqrt(2.0);
  CHECK(weight.row_max == doctest::Approx(r));
  const double row_sum = 3.0 + std::exp(0.5 * r - r) + std::exp(-r);
  CHECK(weight.row_sum == doctest::Approx(row_sum));
  CHECK(weight.exp_shifted == doctest::Approx(std::exp(-0.5 * r)));
  CHECK(weight.value == doctest::Approx(std::exp(-0.5 * r) / row_sum));
  CHECK(weight.row_exps.size() == 5);

  // Context [0, 0] = Σ_j α_1j v_j[0] with v[:,0] = [10, 0, 5, 0, 1].
  const al::Explanation context = explain(*t, s, {Stage::Context, 0, 0, 0, 0});
  REQUIRE(context.sum.terms.size() == 5);
  CHECK(context.sum.terms[0].factor_b == 10.0);
  CHECK(context.sum.terms[2].factor_b == 5.0);
  check_sum(context);
  // Without dropout the step multiplies α, and the explanation says so: its rows come from the weights.
  CHECK(context.sources[0].matrix == "weights");

  // Direct mode: Q is given, not computed.
  CHECK(explain(*t, s, {Stage::Q, 0, 0, 3, 1}).kind == ExplainKind::Given);
}

TEST_CASE("explain: with dropout on, α′·V's rows come from the dropped weights") {
  al::Session s = preset("default");
  s.config.dropout = {0.5, true, 3};
  auto t = trace_of(s);
  const al::Explanation context = explain(*t, s, {Stage::Context, 0, 1, 2, 0});
  CHECK(context.sources[0].matrix == "dropped");
  // Σ_j α′_2j · v_j[0] by an explicit loop over the trace's own stages.
  double sum = 0;
  for (al::Index j = 0; j < t->dims.len_kv; ++j)
    sum += static_cast<double>(t->stage(Stage::Dropped).at({0, 1, 2, j})) * t->stage(Stage::V).at({0, 1, j, 0});
  CHECK(context.sum.total == doctest::Approx(sum).epsilon(1e-6));
  s.config.dropout.training = false;
  CHECK(explain(*trace_of(s), s, {Stage::Context, 0, 1, 2, 0}).sources[0].matrix == "weights");
}

TEST_CASE("explain: every cell's arithmetic gives back the trace's value") {
  for (const char* name : {"seed-003-example", "default", "causal-decoder", "cross-attention", "padded-batch",
                           "seed-002-mask-bug", "seed-004-fused", "llama-block", "mistral-window", "alibi-6-heads",
                           "longformer-global"}) {
    CAPTURE(name);
    check_every_cell(preset(name));
  }
}

TEST_CASE("explain: a long sum lists its largest terms first and groups the rest") {
  al::Session s = preset("default");  // d_model 8: projections have 8 terms
  auto t = trace_of(s);
  const al::Explanation e = explain(*t, s, {Stage::Q, 0, 1, 2, 1}, 3);
  CHECK(e.kind == ExplainKind::Projection);
  REQUIRE(e.sum.terms.size() == 3);
  CHECK(e.sum.total_terms == 8);
  CHECK(std::fabs(e.sum.terms[0].value) >= std::fabs(e.sum.terms[1].value));
  CHECK(std::fabs(e.sum.terms[1].value) >= std::fabs(e.sum.terms[2].value));
  // Every unlisted term is no larger than the smallest listed one, by an independent loop.
  const al::Tensor& x = *s.x;
  const al::TensorPtr w_q = al::input(s, al::InputId::WQ);
  const al::Index column = 1 * t->dims.d_k + 1;
  double rest = 0;
  int listed = 0;
  for (al::Index p = 0; p < 8; ++p) {
    const double term = static_cast<double>(x.matrix(0)(2, p)) * w_q->matrix()(p, column);
    bool is_listed = false;
    for (const auto& shown : e.sum.terms) is_listed = is_listed || shown.index == p;
    if (is_listed) ++listed;
    else {
      rest += term;
      CHECK(std::fabs(term) <= std::fabs(e.sum.terms[2].value));
    }
  }
  CHECK(listed == 3);
  CHECK(e.sum.rest == doctest::Approx(rest));
  CHECK(e.sum.has_bias == s.config.bias);
  CHECK(al::format_term_sum(e.sum, "b_c").find("+ 5 smaller terms (" + al::lab_number(rest) + ")") != std::string::npos);
  CHECK(al::format_term_sum(e.sum, "b_c", "个较小的项").find("+ 5 个较小的项 (") != std::string::npos);
  REQUIRE(e.sources.size() == 2);
  CHECK(e.sources[0].matrix == "x");
  CHECK(e.sources[1].matrix == "w_q");
  CHECK_FALSE(e.sources[1].is_row);
  CHECK(e.sources[1].index == column);
}

TEST_CASE("explain: a fully masked row with -inf fill is NaN, and says why") {
  al::Session s = preset("seed-003-example");
  for (al::Index j = 0; j < 5; ++j) s = al::with_mask_cell(s, 0, 2, j, false);
  auto t = trace_of(s);
  const al::Explanation masked = explain(*t, s, {Stage::Masked, 0, 0, 2, 3});
  CHECK(masked.has_mask);
  CHECK(masked.masked);
  CHECK(std::isinf(masked.fill));
  const al::Explanation weight = explain(*t, s, {Stage::Weights, 0, 0, 2, 3});
  CHECK(weight.row_fully_masked);
  CHECK(std::isnan(weight.value));
  CHECK(std::isinf(weight.row_max));
  // Other rows are not.
  CHECK_FALSE(explain(*t, s, {Stage::Weights, 0, 0, 1, 3}).row_fully_masked);
}

TEST_CASE("explain: dropout keeps or zeroes each weight as the trace did, with 1/(1-p)") {
  al::Session s = preset("default");
  s.config.dropout = {0.5, true, 7};
  auto t = trace_of(s);
  int kept = 0, dropped = 0;
  for (al::Index j = 0; j < t->dims.len_kv; ++j) {
    const al::Explanation e = explain(*t, s, {Stage::Dropped, 0, 1, 3, j});
    CHECK(e.dropout_active);
    CHECK(e.keep_scale == doctest::Approx(2.0));
    if (e.kept) {
      ++kept;
      CHECK(e.value == doctest::Approx(2.0 * e.input));
    } else {
      ++dropped;
      CHECK(e.value == 0.0f);
    }
  }
  CHECK(kept + dropped == t->dims.len_kv);
}

TEST_CASE("explain: out-of-range cells are refused with the stage's shape") {
  const al::Session s = preset("seed-003-example");
  auto t = trace_of(s);
  auto e = al::explain_cell(*t, s, {Stage::Scores, 0, 0, 5, 0});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message.find("1x1x5x5") != std::string::npos);
  CHECK_FALSE(al::explain_cell(*t, s, {Stage::Scores, 0, 1, 0, 0}).ok());
}

TEST_CASE("diff: editing V changes V, context and output but not scores or weights") {
  const al::Session before_session = preset("seed-003-example");
  auto before = trace_of(before_session);
  const al::Session after_session = al::with_cell(before_session, al::InputId::V, 3, 2.5f);  // v_2[1]: 10 → 2.5
  auto after = trace_of(after_session);
  auto diff = al::diff_traces(*before, *after);
  REQUIRE(diff.ok());
  for (Stage s : {Stage::Q, Stage::K, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Dropped}) {
    CAPTURE(al::stage_name(s));
    CHECK(diff->stage(s).changed == 0);
    CHECK(diff->stage(s).max_abs == 0.0);
  }
  CHECK(diff->stage(Stage::V).changed == 1);
  CHECK(diff->stage(Stage::V).max_abs == doctest::Approx(7.5));
  CHECK(diff->stage(Stage::V).difference->at({0, 0, 1, 1}) == doctest::Approx(-7.5));
  // Every query attends to key 2 a little: column 1 of every context row changes
  // by α_i2 · (−7.5), column 0 not at all.
  CHECK(diff->stage(Stage::Context).changed == 5);
  const al::Tensor& weights = before->stage(Stage::Weights);
  for (al::Index i = 0; i < 5; ++i) {
    CHECK(diff->stage(Stage::Context).difference->at({0, 0, i, 0}) == 0.0f);
    CHECK(diff->stage(Stage::Context).difference->at({0, 0, i, 1}) ==
          doctest::Approx(-7.5 * weights.at({0, 0, i, 1})).epsilon(1e-4));
  }
  CHECK(diff->stage(Stage::Output).changed == 5);
}

TEST_CASE("diff: turning causal on sends the masked cells to −∞: counted apart from the finite largest change") {
  const al::Session before_session = preset("default");  // 6 tokens, 2 heads, no mask
  const al::Session after_session = al::with_causal(before_session, true);
  auto diff = al::diff_traces(*trace_of(before_session), *trace_of(after_session));
  REQUIRE(diff.ok());
  const al::StageDiff& masked = diff->stage(Stage::Masked);
  CHECK(masked.non_finite == 2 * 15);  // 15 cells above the diagonal of each 6 × 6 head
  CHECK(masked.changed == 2 * 15);     // below it the scores are the same
  CHECK(masked.max_abs == 0.0);
  CHECK(diff->stage(Stage::Weights).non_finite == 0);  // weights stay finite: exp(−∞) = 0
  CHECK(diff->stage(Stage::Scores).changed == 0);
}

TEST_CASE("diff: NaN on both sides is unchanged; different sizes are refused") {
  al::Session s = preset("seed-003-example");
  for (al::Index j = 0; j < 5; ++j) s = al::with_mask_cell(s, 0, 0, j, false);
  auto before = trace_of(s);
  auto after = trace_of(al::with_cell(s, al::InputId::Q, 9, 0.0f));  // q_5[1] changes
  auto diff = al::diff_traces(*before, *after);
  REQUIRE(diff.ok());
  CHECK(diff->stage(Stage::Weights).changed == 5);  // row 5 only; row 1 is NaN in both
  CHECK(std::isnan(after->stage(Stage::Weights).at({0, 0, 0, 0})));

  auto bigger = trace_of(al::with_sizes(s, 1, 6, 6, 2));
  auto refused = al::diff_traces(*before, *bigger);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("Lq=5") != std::string::npos);
  CHECK(refused.error().message.find("Lq=6") != std::string::npos);
}

TEST_CASE("heads: concat·W_O equals the sum over heads of context_h · W_O's rows of h") {
  for (const char* name : {"default", "causal-decoder", "cross-attention", "seed-004-fused", "seed-003-example"}) {
    CAPTURE(name);
    const al::Session s = preset(name);
    auto t = trace_of(s);
    auto check = al::check_head_sum(*t, s);
    REQUIRE(check.ok());
    CHECK(check->max_abs_difference < 1e-5);
    CHECK(check->has_w_o == (s.weights.w_o != nullptr));
    CHECK(check->per_head_sum.shape == t->stage(Stage::Output).shape);
  }
}

TEST_CASE("explain: a fused W_qkv gives the same projection terms as separate weights, and names its slice") {
  // Seed 004's fused session (1 head) and the default example fused (2 heads),
  // each against the same weights kept separate.
  for (const auto& [fused, separate] :
       {std::pair{preset("seed-004-fused"), al::with_fused(preset("seed-004-fused"), false)},
        std::pair{al::with_fused(preset("default"), true), preset("default")}}) {
    REQUIRE(fused.weights.fused());
    REQUIRE_FALSE(separate.weights.fused());
    auto fused_trace = trace_of(fused);
    auto separate_trace = trace_of(separate);
    const al::Dims& d = fused_trace->dims;
    const al::Tensor& w_qkv = *fused.weights.w_qkv;  // (d_model, 3·d_model)
    REQUIRE(w_qkv.cols() == 3 * d.d_model);
    for (Stage stage : {Stage::Q, Stage::K, Stage::V}) {
      const al::Index block = stage == Stage::Q ? 0 : stage == Stage::K ? 1 : 2;
      const al::InputId weight = stage == Stage::Q ? al::InputId::WQ : stage == Stage::K ? al::InputId::WK : al::InputId::WV;
      const al::Tensor& w_separate = *al::input(separate, weight);  // (d_model, d_model)
      for (al::Index b = 0; b < d.batch; ++b)
        for (al::Index h = 0; h < d.heads; ++h)
          for (al::Index i = 0; i < fused_trace->stage(stage).rows(); ++i)
            for (al::Index c = 0; c < d.d_k; ++c) {
              CAPTURE(al::stage_name(stage));
              CAPTURE(b);
              CAPTURE(h);
              CAPTURE(i);
              CAPTURE(c);
              const al::Explanation f = explain(*fused_trace, fused, {stage, b, h, i, c}, 0);
              const al::Explanation s = explain(*separate_trace, separate, {stage, b, h, i, c}, 0);
              REQUIRE(f.sum.terms.size() == s.sum.terms.size());
              for (size_t p = 0; p < f.sum.terms.size(); ++p) {
                CHECK(f.sum.terms[p].index == s.sum.terms[p].index);
                CHECK(f.sum.terms[p].factor_a == s.sum.terms[p].factor_a);
                CHECK(f.sum.terms[p].factor_b == s.sum.terms[p].factor_b);
                CHECK(f.sum.terms[p].value == s.sum.terms[p].value);
              }
              CHECK(f.sum.has_bias == s.sum.has_bias);
              CHECK(f.sum.bias == s.sum.bias);
              CHECK(f.sum.total == s.sum.total);
              CHECK_FALSE(s.fused_slice);
              REQUIRE(f.fused_slice);
              // W_qkv[:, begin:end] is the separate matrix, and the cell's column is in it.
              const al::Index column = h * d.d_k + c;
              CHECK(f.fused_slice->weight == weight);
              CHECK(f.fused_slice->begin == block * d.d_model);
              CHECK(f.fused_slice->end == (block + 1) * d.d_model);
              CHECK(f.fused_slice->column == block * d.d_model + column);
              for (al::Index p = 0; p < d.d_model; ++p)
                CHECK(w_qkv.matrix()(p, f.fused_slice->column) == w_separate.matrix()(p, column));
              REQUIRE(f.sources.size() == s.sources.size() + 1);
              CHECK(f.sources.back().matrix == "w_qkv");
              CHECK(f.sources.back().index == f.fused_slice->column);
            }
    }
  }
}
