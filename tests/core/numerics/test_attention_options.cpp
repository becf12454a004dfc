// The attention computation's options against hand computations and the double-precision
// reference (attention_reference.hpp): masks and their fill values, fully masked rows,
// dropout, scale modes and the bias switch.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "numerics/attention.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::Stage;

TEST_CASE("masks: -inf fill gives exactly 0, causal upper triangle, key padding, custom, combined") {
  al::Session s = random_projection_session(2, 5, 4, 2, 51);
  SUBCASE("causal") {
    s.config.mask.causal = true;
    auto t = compute_ok(s);
    const Tensor& w = t->stage(Stage::Weights);
    for (Index bh = 0; bh < 4; ++bh)
      for (Index i = 0; i < 5; ++i)
        for (Index j = 0; j < 5; ++j) {
          const float value = w.data[size_t((bh * 5 + i) * 5 + j)];
          if (j > i)
            CHECK(value == 0.0f);
          else
            CHECK(value > 0.0f);
        }
    CHECK(w.at({0, 0, 0, 0}) == 1.0f);  // the first query sees only itself
    check_close(w, reference_attention(s).weights, "weights");
    check_rows_sum_to_one(*t);
    CHECK(t->stage(Stage::Masked).at({1, 1, 2, 3}) == -std::numeric_limits<float>::infinity());
    CHECK(t->mask->shape == std::vector<Index>{2, 5, 5});
    CHECK(t->mask->at({0, 1, 2}) == 0.0f);
    CHECK(t->mask->at({0, 2, 1}) == 1.0f);
  }
  SUBCASE("key padding per batch item") {
    s.config.mask.key_padding = tensor({2, 5}, {1, 1, 1, 0, 0, /* b1 */ 1, 1, 1, 1, 0});
    auto t = compute_ok(s);
    const Tensor& w = t->stage(Stage::Weights);
    for (Index h = 0; h < 2; ++h)
      for (Index i = 0; i < 5; ++i) {
        CHECK(w.at({0, h, i, 3}) == 0.0f);
        CHECK(w.at({0, h, i, 4}) == 0.0f);
        CHECK(w.at({1, h, i, 3}) > 0.0f);
        CHECK(w.at({1, h, i, 4}) == 0.0f);
      }
    check_close(w, reference_attention(s).weights, "weights");
    check_rows_sum_to_one(*t);
  }
  SUBCASE("custom (Lq, Lk) combined with causal") {
    std::vector<float> custom(25, 1.0f);
    custom[0 * 5 + 0] = 0;  // query 0 may not see key 0 ... and causal hides the rest: fully masked
    custom[3 * 5 + 1] = 0;
    s.config.mask.custom = tensor({5, 5}, custom);
    s.config.mask.causal = true;
    auto t = compute_ok(s);
    CHECK(t->stage(Stage::Weights).at({1, 0, 3, 1}) == 0.0f);
    CHECK(t->fully_masked_rows == std::vector<unsigned char>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0});
    check_close(t->stage(Stage::Weights), reference_attention(s).weights, "weights");
  }
  SUBCASE("custom (B, Lq, Lk); values other than 0 count as attend") {
    std::vector<float> custom(50, 1.0f);
    custom[25 + 2 * 5 + 4] = 0;   // batch 1, query 2, key 4
    custom[3] = 0.5f;             // "nonzero attends", like masked_fill(mask == 0, ...)
    custom[4] = 2.0f;
    s.config.mask.custom = tensor({2, 5, 5}, custom);
    auto t = compute_ok(s);
    CHECK(t->stage(Stage::Weights).at({1, 1, 2, 4}) == 0.0f);
    CHECK(t->stage(Stage::Weights).at({0, 1, 2, 4}) > 0.0f);
    CHECK(t->stage(Stage::Weights).at({0, 0, 0, 3}) > 0.0f);
    CHECK(t->mask->at({0, 0, 3}) == 1.0f);
    check_close(t->stage(Stage::Weights), reference_attention(s).weights, "weights");
  }
  SUBCASE("a (Lk) key padding is accepted for B = 1") {
    al::Session one = random_direct_session(1, 3, 3, 2, 1, 52);
    one.config.mask.key_padding = tensor({3}, {1, 0, 1});
    auto t = compute_ok(one);
    CHECK(t->stage(Stage::Weights).at({0, 0, 2, 1}) == 0.0f);
  }
}

TEST_CASE("causal with Lq != Lk follows torch.ones(Lq, Lk).tril()") {
  al::Session s = random_direct_session(1, 3, 5, 2, 1, 61);
  s.config.mask.causal = true;
  auto t = compute_ok(s);
  const Tensor& m = *t->mask;
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 5; ++j) CHECK(m.at({0, i, j}) == (j <= i ? 1.0f : 0.0f));
  check_close(t->stage(Stage::Weights), reference_attention(s).weights, "weights");
}

TEST_CASE("mask fill values") {
  // Scores are all 0 (Q = 0), so unmasked weights are uniform and the effect of the fill is plain.
  al::Session s = random_direct_session(1, 2, 4, 2, 1, 71);
  s.q = tensor({1, 2, 2}, {0, 0, 0, 0});
  s.config.attention = al::AttentionKind::Cross;
  s.config.mask.key_padding = tensor({1, 4}, {1, 1, 0, 0});

  SUBCASE("-inf masks completely") {
    auto t = compute_ok(s);
    check_close(t->stage(Stage::Weights), {0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0}, "weights", 0, 1e-7);
  }
  SUBCASE("seed 002's -1e-20 does not mask: every key keeps its weight") {
    s.config.mask_fill = -1e-20;
    auto t = compute_ok(s);
    // exp(-1e-20) rounds to exactly 1: the masked keys weigh as much as the others.
    check_close(t->stage(Stage::Weights), {0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, "weights", 0, 1e-7);
    CHECK(t->stage(Stage::Masked).at({0, 0, 0, 2}) == -1e-20f);
  }
  SUBCASE("-1e-20 fill on random scores equals the reference") {
    al::Session r = random_projection_session(1, 6, 4, 2, 72);
    r.config.mask.causal = true;
    r.config.mask_fill = -1e-20;
    auto t = compute_ok(r);
    check_close(t->stage(Stage::Weights), reference_attention(r).weights, "weights");
    CHECK(t->stage(Stage::Weights).at({0, 0, 0, 5}) > 0.01f);  // "masked", yet weighted
  }
  SUBCASE("-1e9 and -1e20 mask like -inf when some key is left") {
    for (double fill : {-1e9, -1e20}) {
      s.config.mask_fill = fill;
      auto t = compute_ok(s);
      check_close(t->stage(Stage::Weights), {0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0}, "weights", 0, 1e-7);
    }
  }
}

TEST_CASE("fully masked rows: NaN with -inf, uniform with a finite fill, flagged either way") {
  al::Session s = random_direct_session(2, 3, 4, 2, 1, 81);
  s.config.attention = al::AttentionKind::Cross;
  std::vector<float> custom(2 * 3 * 4, 1.0f);
  for (Index j = 0; j < 4; ++j) custom[size_t(1 * 12 + 2 * 4 + j)] = 0;  // batch 1, query 2
  s.config.mask.custom = tensor({2, 3, 4}, custom);

  auto t = compute_ok(s);
  CHECK(t->fully_masked_rows == std::vector<unsigned char>{0, 0, 0, 0, 0, 1});
  CHECK(t->any_fully_masked());
  for (Index j = 0; j < 4; ++j) CHECK(std::isnan(t->stage(Stage::Weights).at({1, 0, 2, j})));
  CHECK(std::isnan(t->stage(Stage::Output).at({1, 2, 0})));
  CHECK_FALSE(std::isnan(t->stage(Stage::Output).at({1, 1, 0})));  // other rows are unaffected

  for (double fill : {-1e9, -1e20}) {
    s.config.mask_fill = fill;
    auto u = compute_ok(s);
    CHECK(u->fully_masked_rows == std::vector<unsigned char>{0, 0, 0, 0, 0, 1});
    for (Index j = 0; j < 4; ++j) CHECK(u->stage(Stage::Weights).at({1, 0, 2, j}) == doctest::Approx(0.25));
    check_close(u->stage(Stage::Weights), reference_attention(s).weights, "weights");
  }
}

TEST_CASE("dropout") {
  al::Session s = random_direct_session(1, 128, 128, 16, 4, 91);  // 4 · 128 · 128 = 65536 weights
  SUBCASE("eval is the identity, stored once") {
    s.config.dropout = {0.5, false, 7};
    auto t = compute_ok(s);
    CHECK(t->stage_ptr(Stage::Dropped) == t->stage_ptr(Stage::Weights));
  }
  SUBCASE("training with p = 0 is the identity too") {
    s.config.dropout = {0.0, true, 7};
    auto t = compute_ok(s);
    CHECK(t->stage_ptr(Stage::Dropped) == t->stage_ptr(Stage::Weights));
  }
  SUBCASE("training zeroes about p of the weights and scales the rest by 1/(1-p)") {
    const double p = 0.3;
    s.config.dropout = {p, true, 7};
    auto t = compute_ok(s);
    const Tensor& w = t->stage(Stage::Weights);
    const Tensor& dropped = t->stage(Stage::Dropped);
    REQUIRE(t->stage_ptr(Stage::Dropped) != t->stage_ptr(Stage::Weights));
    Index zeros = 0;
    for (Index i = 0; i < w.size(); ++i) {
      const float kept = dropped.data[size_t(i)];
      if (kept == 0.0f) {
        ++zeros;
        CHECK_FALSE(al::dropout_keeps(7, p, i));
      } else {
        CHECK(al::dropout_keeps(7, p, i));
        // 1/(1-p) = 1.428571..., exact up to float rounding of one multiplication.
        CHECK(double(kept) / w.data[size_t(i)] == doctest::Approx(1.0 / (1.0 - p)).epsilon(1e-6));
      }
    }
    // Binomial(65536, 0.3): standard deviation 0.0018 of the fraction; allow 5 of them.
    const double fraction = double(zeros) / double(w.size());
    CHECK(fraction == doctest::Approx(p).epsilon(0.0018 * 5 / p));
    check_close(t->stage(Stage::Output), reference_attention(s).output, "output", 1e-4, 1e-4);
    // The same seed gives the same mask; another seed another mask.
    CHECK(compute_ok(s)->stage(Stage::Dropped) == dropped);
    s.config.dropout.seed = 8;
    CHECK_FALSE(compute_ok(s)->stage(Stage::Dropped) == dropped);
  }
  SUBCASE("p outside [0, 1) is refused") {
    for (double p : {1.0, -0.1, 1.5, std::nan("")}) {
      s.config.dropout = {p, true, 0};
      const al::Error e = compute_error(s);
      CHECK(e.code == al::ErrorCode::InvalidConfig);
      CHECK(e.message.find("dropout probability") != std::string::npos);
    }
  }
}

TEST_CASE("scale modes") {
  al::Session s = random_direct_session(1, 3, 3, 8, 2, 101);
  SUBCASE("sqrt_dk") {
    auto t = compute_ok(s);
    CHECK(t->scale == doctest::Approx(0.5));  // d_k = 4
    REQUIRE(t->stage(Stage::Scaled).shape == t->stage(Stage::Scores).shape);
    for (Index i = 0; i < 18; ++i)
      CHECK(t->stage(Stage::Scaled).data[size_t(i)] == t->stage(Stage::Scores).data[size_t(i)] * 0.5f);
  }
  SUBCASE("none: scaled is the scores, stored once") {
    s.config.scale = {al::ScaleMode::None, 1.0};
    auto t = compute_ok(s);
    CHECK(t->scale == 1.0);
    CHECK(t->stage_ptr(Stage::Scaled) == t->stage_ptr(Stage::Scores));
    check_close(t->stage(Stage::Weights), reference_attention(s).weights, "weights");
  }
  SUBCASE("custom factor") {
    s.config.scale = {al::ScaleMode::Custom, 0.125};
    auto t = compute_ok(s);
    CHECK(t->scale == 0.125);
    for (Index i = 0; i < 18; ++i)
      CHECK(t->stage(Stage::Scaled).data[size_t(i)] == t->stage(Stage::Scores).data[size_t(i)] * 0.125f);
    check_close(t->stage(Stage::Weights), reference_attention(s).weights, "weights");
    s.config.scale = {al::ScaleMode::Custom, std::numeric_limits<double>::infinity()};
    CHECK(compute_error(s).code == al::ErrorCode::InvalidConfig);
  }
}

TEST_CASE("bias switch") {
  al::Session s = random_projection_session(1, 4, 4, 2, 111);
  SUBCASE("off: the biases are ignored") {
    s.config.bias = false;
    al::Session without = s;
    without.weights.b_q = without.weights.b_k = without.weights.b_v = without.weights.b_o = nullptr;
    CHECK(compute_ok(s)->stage(Stage::Output) == compute_ok(without)->stage(Stage::Output));
    check_close(compute_ok(s)->stage(Stage::Output), reference_attention(without).output, "output");
  }
  SUBCASE("on: every bias counts") {
    check_close(compute_ok(s)->stage(Stage::Output), reference_attention(s).output, "output");
  }
  SUBCASE("on, with a bias missing") {
    s.weights.b_k = nullptr;
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::MissingInput);
    CHECK(e.message == "bias is on but b_k is missing: give b_k of length 4 (d_model) or turn bias off");
  }
  SUBCASE("a bias of the wrong length") {
    s.weights.b_o = tensor({3}, {1, 2, 3});
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::ShapeMismatch);
    CHECK(e.message == "b_o has shape 3 but must be a vector of length 4 (d_model)");
  }
}
