// The trace's checks (largest weight on a masked key, largest row-sum error)
// against values computed here by explicit loops in double precision.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "numerics/attention.hpp"
#include "attention_reference.hpp"
#include "editing/edits.hpp"
#include "io/session_io.hpp"

using namespace al;

namespace {

// Softmax weights of seed 002's session by hand: (Lq, Lk) scores = Q·Kᵀ/√64,
// masked keys set to the session's fill, softmax in double.
struct HandChecks {
  double masked_weight_max = 0, masked_share_max = 0, row_sum_error_max = 0;
};

HandChecks hand_checks(const Session& s) {
  const Index len_q = s.q->dim(1), len_kv = s.k->dim(1), d = s.q->dim(2);
  const Tensor& keep = *s.config.mask.key_padding;  // (1, Lk)
  const double fill = s.config.mask_fill;
  HandChecks out;
  for (Index i = 0; i < len_q; ++i) {
    std::vector<double> row(static_cast<size_t>(len_kv));  // (Lk)
    for (Index j = 0; j < len_kv; ++j) {
      double dot = 0;
      for (Index c = 0; c < d; ++c) dot += double(s.q->at({0, i, c})) * double(s.k->at({0, j, c}));
      row[static_cast<size_t>(j)] = keep.at({0, j}) < 0.5f ? fill : dot / std::sqrt(double(d));
    }
    double largest = -std::numeric_limits<double>::infinity(), sum = 0;
    for (double v : row) largest = std::max(largest, v);
    for (double& v : row) sum += (v = std::exp(v - largest));
    double share = 0;
    for (Index j = 0; j < len_kv; ++j)
      if (keep.at({0, j}) < 0.5f) {
        out.masked_weight_max = std::max(out.masked_weight_max, row[static_cast<size_t>(j)] / sum);
        share += row[static_cast<size_t>(j)] / sum;
      }
    out.masked_share_max = std::max(out.masked_share_max, share);
  }
  return out;
}

// The checks by an explicit loop in double over the trace's weights: rows not fully masked,
// Σ w − 1 per row, and the largest weight on a masked key.
TraceChecks loop_checks(const Trace& t) {
  const Tensor& w = t.stage(Stage::Weights);  // (B, h, Lq, Lk)
  const Index batch = w.dim(0), heads = w.dim(1), len_q = w.dim(2), len_kv = w.dim(3);
  TraceChecks out;
  for (Index b = 0; b < batch; ++b)
    for (Index i = 0; i < len_q; ++i) {
      if (t.fully_masked_rows[static_cast<size_t>(b * len_q + i)]) continue;
      for (Index h = 0; h < heads; ++h) {
        double sum = 0, masked = 0;
        for (Index j = 0; j < len_kv; ++j) {
          const double v = w.at({b, h, i, j});
          sum += v;
          if (!t.mask || t.mask->at({b, i, j}) != 0.0f) continue;
          masked += v;
          if (v > out.masked_weight_max) out.masked_weight_max = v;
        }
        out.masked_share_max = std::max(out.masked_share_max, masked);
        const double error = std::fabs(sum - 1.0);
        if (std::isnan(error) || error > out.row_sum_error_max) out.row_sum_error_max = error;
      }
    }
  return out;
}

}  // namespace

TEST_CASE("checks: seed 002's fill of -1e-20 leaks weight onto the masked keys, as an explicit loop says") {
  auto session = load_preset("seed-002-mask-bug");
  REQUIRE(session.ok());
  REQUIRE(session->config.mask_fill == doctest::Approx(-1e-20));
  auto trace = compute(*session);
  REQUIRE(trace.ok());
  const HandChecks expected = hand_checks(*session);
  CHECK(expected.masked_weight_max > 1e-3);  // the bug is real: a visible share of the weight
  CHECK((*trace)->checks.masked_weight_max == doctest::Approx(expected.masked_weight_max).epsilon(1e-5));
  // Eight masked keys of ten: together they take far more of a row than any one of them.
  CHECK(expected.masked_share_max > 5 * expected.masked_weight_max);
  CHECK((*trace)->checks.masked_share_max == doctest::Approx(expected.masked_share_max).epsilon(1e-5));
  // Every row still sums to 1 in float precision.
  CHECK((*trace)->checks.row_sum_error_max < 1e-5);
}

TEST_CASE("checks: with fill -inf nothing leaks; without a mask both checks are 0 up to rounding") {
  auto session = load_preset("seed-002-mask-bug");
  REQUIRE(session.ok());
  session->config.mask_fill = -std::numeric_limits<double>::infinity();
  auto trace = compute(*session);
  REQUIRE(trace.ok());
  CHECK((*trace)->checks.masked_weight_max == 0.0);

  auto plain = compute(*load_preset("default"));
  REQUIRE(plain.ok());
  CHECK((*plain)->checks.masked_weight_max == 0.0);
  CHECK((*plain)->checks.row_sum_error_max < 1e-6);
}

TEST_CASE("checks: every preset's checks equal an explicit loop over its weights (masks, padding, windows, leaky fills)") {
  for (const char* name : {"default", "causal-decoder", "cross-attention", "padded-batch", "seed-000-usage",
                           "seed-002-mask-bug", "seed-003-example", "seed-004-fused", "llama-block", "alibi-6-heads",
                           "longformer-global", "mistral-window"}) {
    CAPTURE(name);
    auto session = load_preset(name);
    REQUIRE(session.ok());
    for (double fill : {session->config.mask_fill, -1e-20, -std::numeric_limits<double>::infinity()}) {
      CAPTURE(fill);
      Session s = *session;
      s.config.mask_fill = fill;
      auto trace = compute(s);
      REQUIRE(trace.ok());
      const TraceChecks expected = loop_checks(**trace);
      CHECK((*trace)->checks.masked_weight_max == expected.masked_weight_max);
      CHECK(std::fabs((*trace)->checks.masked_share_max - expected.masked_share_max) < 1e-6);
      CHECK(std::fabs((*trace)->checks.row_sum_error_max - expected.row_sum_error_max) < 1e-6);
    }
  }
}

TEST_CASE("checks: a NaN in X makes the row-sum error NaN; rows with every key masked are skipped") {
  auto session = load_preset("padded-batch");
  REQUIRE(session.ok());
  Session nan_x = with_cell(*session, InputId::X, 0, std::nanf(""));
  auto trace = compute(nan_x);
  REQUIRE(trace.ok());
  CHECK(std::isnan((*trace)->checks.row_sum_error_max));

  // Causal with every key of batch 1 padded: its rows are NaN under a -inf fill, and skipped.
  Session all_padded = *session;
  all_padded.config.mask_fill = -std::numeric_limits<double>::infinity();
  auto padding = std::make_shared<Tensor>(*all_padded.config.mask.key_padding);  // (B, Lk)
  for (Index j = 0; j < padding->dim(1); ++j) padding->at({1, j}) = 0.0f;
  all_padded.config.mask.key_padding = padding;
  auto skipped = compute(all_padded);
  REQUIRE(skipped.ok());
  REQUIRE((*skipped)->any_fully_masked());
  CHECK(std::isnan((*skipped)->stage(Stage::Weights).at({1, 0, 0, 0})));
  CHECK((*skipped)->checks.row_sum_error_max < 1e-6);
  CHECK((*skipped)->checks.masked_weight_max == 0.0);
}

TEST_CASE("checks: an edit reusing the weights keeps the checks; one changing the fill recomputes them") {
  auto session = load_preset("seed-002-mask-bug");
  REQUIRE(session.ok());
  auto first = compute(*session);
  REQUIRE(first.ok());
  Session fixed = *session;
  fixed.config.mask_fill = -1e9;
  auto second = compute(fixed, ComputeOptions{}, &*session, *first);
  REQUIRE(second.ok());
  CHECK((*second)->checks.masked_weight_max < 1e-6);
  Session same_weights = fixed;
  same_weights.v = attention_test::random_tensor({1, 10, 64}, 7);  // V only: weights reused
  auto third = compute(same_weights, ComputeOptions{}, &fixed, *second);
  REQUIRE(third.ok());
  CHECK((*third)->stage_ptr(Stage::Weights) == (*second)->stage_ptr(Stage::Weights));
  CHECK((*third)->checks.masked_weight_max == (*second)->checks.masked_weight_max);
  CHECK((*third)->checks.masked_share_max == (*second)->checks.masked_share_max);
}
