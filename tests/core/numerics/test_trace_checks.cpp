// The trace's checks (largest weight on a masked key, largest row-sum error)
// against values computed here by explicit loops in double precision.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "numerics/attention.hpp"
#include "attention_reference.hpp"
#include "io/session_io.hpp"

using namespace al;

namespace {

// Softmax weights of seed 002's session by hand: (Lq, Lk) scores = Q·Kᵀ/√64,
// masked keys set to the session's fill, softmax in double.
struct HandChecks {
  double masked_weight_max = 0, row_sum_error_max = 0;
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
    for (Index j = 0; j < len_kv; ++j)
      if (keep.at({0, j}) < 0.5f)
        out.masked_weight_max = std::max(out.masked_weight_max, row[static_cast<size_t>(j)] / sum);
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

TEST_CASE("checks: hand values on a 1x2 row, a fully masked row skipped, a NaN row kept") {
  // weights (B=1, h=1, Lq=3, Lk=2); mask (1, 3, 2): row 0 masks key 1, row 1 masks both.
  const Tensor weights({1, 1, 3, 2}, {0.75f, 0.25f, 0.9f, 0.9f, 0.5f, 0.5f});
  const Tensor mask({1, 3, 2}, {1, 0, 0, 0, 1, 1});
  const std::vector<unsigned char> fully_masked = {0, 1, 0};
  TraceChecks checks = check_weights(weights, &mask, fully_masked);
  CHECK(checks.masked_weight_max == doctest::Approx(0.25));  // row 1's 0.9 is skipped
  CHECK(checks.row_sum_error_max == doctest::Approx(0.0));   // row 1's sum 1.8 is skipped
  checks = check_weights(weights, nullptr, {0, 0, 0});
  CHECK(checks.masked_weight_max == 0.0);
  CHECK(checks.row_sum_error_max == doctest::Approx(0.8));
  const Tensor broken({1, 1, 1, 2}, {std::nanf(""), 0.5f});
  CHECK(std::isnan(check_weights(broken, nullptr, {0}).row_sum_error_max));
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
}
