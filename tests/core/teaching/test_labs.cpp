// The labs' numbers: the statistics of why √d_k (variance ≈ d_k, the softmax
// Jacobian by hand), what each mask fill really does in float32, naive vs
// stable softmax, and fused QKV == separate projections (checked against a
// naive triple loop here).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "editing/edits.hpp"
#include "teaching/labs.hpp"
#include "io/session_io.hpp"

using al::Index;

TEST_CASE("softmax Jacobian norm: uniform row by hand, one-hot row is 0") {
  for (int n : {2, 4, 16}) {
    // diag(1/n) − (1/n²)11ᵀ: n diagonal entries (1/n − 1/n²), n(n−1) entries −1/n².
    const double diag = 1.0 / n - 1.0 / (n * n), off = -1.0 / (n * n);
    const double by_hand = std::sqrt(n * diag * diag + n * (n - 1) * off * off);
    CHECK(by_hand == doctest::Approx(std::sqrt(n - 1.0) / n));
    CHECK(al::softmax_jacobian_norm(std::vector<double>(size_t(n), 1.0 / n)) ==
          doctest::Approx(by_hand).epsilon(1e-12));
  }
  CHECK(al::softmax_jacobian_norm({0.0, 1.0, 0.0, 0.0}) == 0.0);
  // Two weights (a, 1−a): every entry is ±a(1−a), so the norm is 2a(1−a).
  CHECK(al::softmax_jacobian_norm({0.25, 0.75}) == doctest::Approx(2 * 0.25 * 0.75));
}

TEST_CASE("softmax entropy: log n for a uniform row, 0 for one-hot") {
  CHECK(al::softmax_entropy(std::vector<double>(8, 0.125)) == doctest::Approx(std::log(8.0)));
  CHECK(al::softmax_entropy({1.0, 0.0, 0.0}) == 0.0);
}

TEST_CASE("why √d_k: Var(q·k) ≈ d_k unscaled and ≈ 1 scaled; scaling keeps the softmax soft") {
  al::SqrtDkOptions options;
  options.trials = 2000;
  options.seed = 7;
  const auto points = al::sqrt_dk_experiment(options);
  REQUIRE(points.size() == 10);  // 1, 2, 4, ..., 512
  for (const auto& p : points) {
    const double d = static_cast<double>(p.d_k);
    // The variance is measured over the n scores of each of T draws of q. Given q they are
    // N(0, |q|²), so a draw's mean square has variance 2|q|⁴/n about |q|², whose own variance
    // over q is 2d (E|q|⁴ = d² + 2d): the estimate's variance is (2(d² + 2d)/n + 2d)/T.
    // Allow 5 standard deviations (T = 2000, n = 16: 17 % of d at d = 1, under 5 % from d = 64 on).
    const double n = static_cast<double>(options.keys), trials = static_cast<double>(options.trials);
    const double sd = std::sqrt((2 * (d * d + 2 * d) / n + 2 * d) / trials);
    CHECK(std::abs(p.variance_raw - d) < 5 * sd);
    CHECK(p.variance_scaled == doctest::Approx(p.variance_raw / d));
    CHECK(std::abs(p.variance_scaled - 1.0) < 5 * sd / d);
    // Unscaled rows saturate as d_k grows, scaled ones do not.
    CHECK(p.max_weight_scaled <= 1.0);
    CHECK(p.entropy_raw <= std::log(16.0) + 1e-9);
  }
  const auto& big = points.back();  // d_k = 512: scores have std ≈ 22.6
  CHECK(big.max_weight_raw > 0.9);
  CHECK(big.max_weight_scaled < 0.5);
  CHECK(big.jacobian_raw < 0.25 * big.jacobian_scaled);  // gradients vanish without scaling
  CHECK(big.entropy_raw < 0.5 * big.entropy_scaled);
  // Same seed, same numbers.
  CHECK(al::sqrt_dk_experiment(options)[3].variance_raw == points[3].variance_raw);
}

namespace {
const al::MaskFillResult& fill_result(const std::vector<al::MaskFillResult>& results, double fill) {
  for (const auto& r : results)
    if (r.fill == fill || (std::isinf(fill) && std::isinf(r.fill))) return r;
  FAIL("fill not compared");
  return results.front();
}
}  // namespace

TEST_CASE("mask fills on the left-padded causal example") {
  const al::Session example = al::mask_fill_example();
  REQUIRE_FALSE(al::validate(example));
  const auto results = al::compare_mask_fills(example, al::lab_mask_fills());
  REQUIRE(results.size() == 4);
  for (const auto& r : results) {
    REQUIRE(r.trace);
    CHECK(r.fully_masked_rows == 1);  // query <pad> may only see key <pad>, which is padding
    CHECK(r.masked_cells == 6);  // rows 1..3 hide keys {0,2,3}, {0,3}, {0}
  }
  const float inf = std::numeric_limits<float>::infinity();
  const auto& minus_inf = fill_result(results, -inf);
  CHECK(minus_inf.masked_exactly_zero);
  CHECK(minus_inf.max_leak == 0.0f);
  CHECK(minus_inf.fully_masked_nan);  // exp(−∞ − (−∞)) = exp(NaN)
  CHECK_FALSE(minus_inf.fully_masked_uniform);

  // −1e9 in float32: exp(−1e9 − max) underflows to exactly 0.
  const auto& minus_1e9 = fill_result(results, -1e9);
  CHECK(minus_1e9.masked_exactly_zero);
  CHECK(minus_1e9.max_leak == 0.0f);
  CHECK_FALSE(minus_1e9.fully_masked_nan);
  CHECK(minus_1e9.fully_masked_uniform);  // every score equal → 1/4 each
  CHECK(fill_result(results, -1e20).masked_exactly_zero);

  // Seed 002's −1e-20 masks nothing: the weights equal those with no mask at all,
  // where the masked scores are replaced by ≈ 0.
  const auto& tiny = fill_result(results, -1e-20);
  CHECK_FALSE(tiny.masked_exactly_zero);
  CHECK(tiny.max_leak > 0.1f);
  al::Session unmasked = example;
  unmasked.config.mask.causal = false;
  unmasked.config.mask.key_padding = nullptr;
  // Without a mask, the masked cells' scores would be q·k/√2; with fill −1e-20 they
  // are ≈ 0 instead. Recompute row 1 ('I') by hand: scores to keys 0..3.
  const auto w = tiny.trace->stage(al::Stage::Weights).matrix(0);
  const double s = 1.0 / std::sqrt(2.0);
  // q_1 = (1, 0): scores with k = (0,0), (1,.5), (0,1), (1,−.5) → 0, 1, 0, 1, scaled by s.
  // Masked (key 0 padding, keys 2, 3 causal) become −1e-20 ≈ 0; key 1 keeps s.
  const double e0 = 1.0, e1 = std::exp(s), sum = 3 * e0 + e1;
  CHECK(w(1, 0) == doctest::Approx(e0 / sum));
  CHECK(w(1, 1) == doctest::Approx(e1 / sum));
  CHECK(w(1, 3) == doctest::Approx(e0 / sum));
}

TEST_CASE("softmax stability: naive float32 softmax overflows, stable one does not") {
  const auto naive = al::softmax_naive({1000.0f, 999.0f});
  CHECK(std::isnan(naive[0]));  // exp(1000) = inf, inf / inf = NaN
  CHECK(std::isnan(naive[1]));
  const auto stable = al::softmax_stable({1000.0f, 999.0f});
  // exp(0) / (1 + e⁻¹) and e⁻¹ / (1 + e⁻¹), by hand.
  CHECK(stable[0] == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))).epsilon(1e-6));
  CHECK(stable[0] == doctest::Approx(0.7311).epsilon(1e-4));
  CHECK(stable[1] == doctest::Approx(0.2689).epsilon(1e-3));
  // Below the limit both agree.
  const auto small_naive = al::softmax_naive({2.0f, 1.0f, 0.0f});
  const auto small_stable = al::softmax_stable({2.0f, 1.0f, 0.0f});
  for (int i = 0; i < 3; ++i) CHECK(small_naive[size_t(i)] == doctest::Approx(small_stable[size_t(i)]));
  CHECK(al::float_exp_limit() == doctest::Approx(88.7228).epsilon(1e-5));
  CHECK(std::isfinite(std::exp(al::float_exp_limit() - 0.01f)));
  CHECK(std::isinf(std::exp(al::float_exp_limit() + 0.01f)));
  // One score above the limit: inf / inf for it, finite / inf = 0 for the rest.
  const auto one_big = al::softmax_naive({89.0f, 1.0f});
  CHECK(std::isnan(one_big[0]));
  CHECK(one_big[1] == 0.0f);
  // Scores [2, 1]: exp overflows when 2·s > ln(FLT_MAX), at s ≈ 44.36.
  CHECK(al::naive_softmax_break_scale({2.0f, 1.0f}) == doctest::Approx(88.7228 / 2).epsilon(1e-4));
  // Two equal scores: the sum overflows first, at s·x > ln(FLT_MAX / 2), and
  // each finite exp divided by ∞ gives weights 0, 0.
  CHECK(al::naive_softmax_break_scale({1.0f, 1.0f}) == doctest::Approx(std::log(3.4028235e38 / 2)).epsilon(1e-4));
  const auto zeros = al::softmax_naive({88.5f, 88.5f});
  CHECK(zeros[0] == 0.0f);
  CHECK(al::softmax_row_broken(zeros));
  CHECK_FALSE(al::softmax_row_broken(al::softmax_stable({88.5f, 88.5f})));
  // All scores negative: every exp underflows to 0 once it is below half the
  // smallest subnormal 2⁻¹⁴⁹, i.e. x < −150·ln 2 ≈ −103.97, and 0/0 is NaN.
  CHECK(al::naive_softmax_break_scale({-1.0f, -2.0f}) == doctest::Approx(150 * std::log(2.0)).epsilon(1e-4));
  CHECK(std::isinf(al::naive_softmax_break_scale({0.0f, 0.0f})));
  // The lab's table at ×500 for scores [2, −1]: x = [1000, −500].
  const auto table = al::softmax_stability_table({2.0f, -1.0f}, 500.0f);
  CHECK(table.x == std::vector<float>{1000.0f, -500.0f});
  CHECK(std::isinf(table.exp_x[0]));
  CHECK(table.exp_x[1] == 0.0f);  // exp(−500) underflows
  CHECK(table.shifted == std::vector<float>{0.0f, -1500.0f});
  CHECK(table.exp_shifted == std::vector<float>{1.0f, 0.0f});
  CHECK(table.stable == std::vector<float>{1.0f, 0.0f});
  CHECK(std::isnan(table.naive[0]));
  CHECK(table.naive_broken);
  CHECK_FALSE(al::softmax_stability_table({2.0f, -1.0f}, 1.0f).naive_broken);
}

TEST_CASE("fused QKV: X·[W_Q|W_K|W_V] split equals the three projections (naive loops)") {
  // llama-block groups its K/V heads: W_K and W_V are d × h_kv·d_k = 32 × 8, W_qkv 32 × 48.
  for (const char* preset : {"seed-004-fused", "default", "llama-block"}) {
    CAPTURE(preset);
    auto session = al::load_preset(preset);
    REQUIRE(session);
    const Index item = session->batch() - 1;  // the last batch item
    auto result = al::compare_fused_qkv(*session, item);
    REQUIRE(result);
    const auto& c = *result;
    const Index d = session->config.d_model, len = c.x.rows(), kv = session->config.kv_width();
    if (std::string(preset) == "llama-block") CHECK(kv == 8);
    const Index widths[3] = {d, kv, kv}, offsets[3] = {0, d, d + kv};
    CHECK(c.w_qkv.shape == std::vector<Index>{d, d + 2 * kv});
    CHECK(c.q_fused.shape == std::vector<Index>{len, d});
    CHECK(c.k_fused.shape == std::vector<Index>{len, kv});
    // Independent computation of Q, K, V by loops over the session's own inputs.
    const al::InputId ws[3] = {al::InputId::WQ, al::InputId::WK, al::InputId::WV};
    const al::InputId bs[3] = {al::InputId::BQ, al::InputId::BK, al::InputId::BV};
    const al::Tensor* fused[3] = {&c.q_fused, &c.k_fused, &c.v_fused};
    const al::Tensor& x = *session->x;  // (B, L, d)
    for (int m = 0; m < 3; ++m) {
      const auto w = al::input(*session, ws[m]);
      const auto b = al::input(*session, bs[m]);
      double worst = 0;
      for (Index i = 0; i < len; ++i)
        for (Index col = 0; col < widths[m]; ++col) {
          double sum = session->config.bias ? b->data[size_t(col)] : 0.0;
          for (Index p = 0; p < d; ++p) sum += double(x.matrix(item)(i, p)) * w->at({p, col});
          worst = std::max(worst, std::abs(sum - fused[m]->at({i, col})));
          CHECK(c.w_qkv.at({i % d, offsets[m] + col}) == w->at({i % d, col}));
        }
      CHECK(worst < 1e-5);
    }
    CHECK(c.max_diff_q < 1e-5f);
    CHECK(c.max_diff_k < 1e-5f);
    CHECK(c.max_diff_v < 1e-5f);
  }
  auto direct = al::compare_fused_qkv(al::mask_fill_example());
  CHECK_FALSE(direct);
  CHECK(direct.error().message.find("projection") != std::string::npos);
}
