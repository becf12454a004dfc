// The backward pass: every gradient (inputs, weights, every stage) against
// central finite differences of an independent double-precision forward
// (backward_reference.hpp), over every option the forward has; and invariants.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attention_reference.hpp"
#include "numerics/backward.hpp"
#include "backward_reference.hpp"

using namespace attention_test;
using namespace backward_test;
using al::Stage;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// |ours − reference| ≤ tolerance · max(1, |reference|) in every cell.
void check_close(const std::string& what, const al::Tensor& ours, const Values& reference, double tolerance = 2e-4) {
  INFO(what);
  REQUIRE(static_cast<size_t>(ours.size()) == reference.size());
  for (size_t n = 0; n < reference.size(); ++n) {
    INFO("cell " << n << ": ours " << ours.data[n] << ", finite differences " << reference[n]);
    REQUIRE(std::isfinite(ours.data[n]));
    CHECK(std::abs(ours.data[n] - reference[n]) <= tolerance * std::max(1.0, std::abs(reference[n])));
  }
}

al::Tensor random_upstream(const al::Trace& trace, std::uint64_t seed) {
  return al::random_normal(trace.stage(Stage::Output).shape, seed, 1.0);
}

// Everything: each input and weight, then each stage, against finite differences.
void check_against_finite_differences(const al::Session& s, std::uint64_t seed = 99) {
  auto trace = al::compute(s);
  REQUIRE(trace);
  const al::Tensor upstream = random_upstream(**trace, seed);
  const Values g = values_of(upstream);
  auto grads = al::backward(s, **trace, upstream);
  REQUIRE(grads);

  const Inputs expected = finite_difference_inputs(s, g);
  REQUIRE(grads->inputs.size() == expected.size());
  for (const auto& [name, values] : expected) {
    const al::Tensor* ours = grads->input(name);
    REQUIRE_MESSAGE(ours, "no gradient for " << name);
    check_close("input " + name, *ours, values);
  }
  for (Stage st : al::kAllStages) {
    if (!(*trace)->has(st)) continue;
    REQUIRE(grads->stages[static_cast<int>(st)]);
    CHECK(grads->stage(st).shape == (*trace)->stage(st).shape);
    check_close(std::string("stage ") + al::stage_name(st), grads->stage(st), finite_difference_stage(s, g, st));
  }
  // Each row of the softmax's input gradient sums to 0 (softmax is shift invariant).
  const al::Tensor& d_masked = grads->stage(Stage::Masked);
  for (Index r = 0; r < d_masked.size() / d_masked.cols(); ++r) {
    double sum = 0;
    for (Index j = 0; j < d_masked.cols(); ++j) sum += d_masked.data[size_t(r * d_masked.cols() + j)];
    CHECK(std::abs(sum) < 1e-5);
  }
}

al::Session small_projection(bool bias = true) {
  al::Session s = random_projection_session(2, 3, 4, 2, 11);
  s.config.bias = bias;
  return s;
}

al::Session cross_projection() {
  al::Session s = random_projection_session(2, 3, 4, 2, 21);
  s.config.attention = al::AttentionKind::Cross;
  s.x_kv = random_tensor({2, 4, 4}, 29);
  return s;
}

al::Session fused(al::Session s) {
  s.weights.w_qkv = random_tensor({s.config.d_model, 3 * s.config.d_model}, 41, 0.5);
  s.weights.b_qkv = random_tensor({3 * s.config.d_model}, 42, 0.1);
  s.weights.w_q = s.weights.w_k = s.weights.w_v = nullptr;
  s.weights.b_q = s.weights.b_k = s.weights.b_v = nullptr;
  return s;
}

}  // namespace

TEST_CASE("backward: projection self attention, bias on and off, every scale mode") {
  check_against_finite_differences(small_projection(true));
  check_against_finite_differences(small_projection(false));
  al::Session none = small_projection();
  none.config.scale = {al::ScaleMode::None, 1.0};
  check_against_finite_differences(none);
  al::Session custom = small_projection();
  custom.config.scale = {al::ScaleMode::Custom, 0.37};
  check_against_finite_differences(custom);
}

TEST_CASE("backward: cross attention and fused W_qkv") {
  check_against_finite_differences(cross_projection());
  check_against_finite_differences(fused(small_projection()));
  check_against_finite_differences(fused(cross_projection()));
  al::Session no_bias = fused(small_projection(false));
  check_against_finite_differences(no_bias);
}

// Today's attention, against finite differences of the reference written for it (backward_reference.hpp):
// grouped K/V heads, sinusoidal positions (self and cross), RoPE in both pairings, ALiBi (a power of two
// heads and not), sliding windows with global tokens, and their combinations.
TEST_CASE("backward: GQA, sinusoidal positions, RoPE, ALiBi, windows and global tokens") {
  auto session = [](Index heads, std::uint64_t seed) { return random_projection_session(2, 4, 8, heads, seed); };
  SUBCASE("grouped K/V heads, and one shared K/V head (MQA)") {
    check_against_finite_differences(with_kv_heads(session(4, 61), 2, 62));
    check_against_finite_differences(with_kv_heads(session(4, 63), 1, 64));
  }
  SUBCASE("RoPE, half and interleaved pairs, with GQA and a causal mask") {
    al::Session half = with_kv_heads(session(2, 65), 1, 66);
    half.config.positional.type = al::PositionalType::Rope;
    half.config.mask.causal = true;
    check_against_finite_differences(half);
    al::Session interleaved = session(2, 67);
    interleaved.config.positional = {al::PositionalType::Rope, al::RopeStyle::Interleaved, 100.0};
    check_against_finite_differences(interleaved);
  }
  SUBCASE("ALiBi with 4 heads (non-causal) and with 2 heads causal") {
    al::Session four = session(4, 69);
    four.config.positional.type = al::PositionalType::Alibi;
    check_against_finite_differences(four);
    al::Session causal = session(2, 71);
    causal.config.positional.type = al::PositionalType::Alibi;
    causal.config.mask.causal = true;
    check_against_finite_differences(causal);
  }
  SUBCASE("sinusoidal positions with a window and a global token; cross attention with positions on both sides") {
    al::Session windowed = session(2, 73);
    windowed.config.positional.type = al::PositionalType::Sinusoidal;
    windowed.config.mask.window = 2;
    windowed.config.mask.global_tokens = {0};
    check_against_finite_differences(windowed);
    al::Session cross = cross_projection();
    cross.config.positional.type = al::PositionalType::Sinusoidal;
    check_against_finite_differences(cross);
  }
}

TEST_CASE("backward: direct mode, with and without W_O, 2-D inputs") {
  check_against_finite_differences(random_direct_session(2, 3, 3, 4, 2, 51));
  check_against_finite_differences(random_direct_session(1, 2, 5, 6, 3, 52));  // cross
  al::Session with_o = random_direct_session(1, 3, 3, 4, 1, 53);
  with_o.config.bias = true;
  with_o.weights.w_o = random_tensor({4, 4}, 54, 0.5);
  with_o.weights.b_o = random_tensor({4}, 55, 0.1);
  check_against_finite_differences(with_o);
  al::Session flat = small_projection();
  flat.x = random_tensor({3, 4}, 56);  // (L, d_model) means B = 1
  check_against_finite_differences(flat);
  auto trace = al::compute(flat);
  REQUIRE(trace);
  auto grads = al::backward(flat, **trace, al::Tensor({3, 4}, 1.0f));
  REQUIRE(grads);
  CHECK(grads->input("x")->shape == std::vector<Index>{3, 4});  // the input's own shape
}

TEST_CASE("backward: masks of every kind and every fill; masked cells get exactly 0") {
  for (double fill : {-kInf, -1e9, -1e-20, 2.5}) {
    CAPTURE(fill);
    al::Session s = small_projection();
    s.config.mask_fill = fill;
    s.config.mask.causal = true;
    check_against_finite_differences(s);
    s.config.mask.causal = false;
    s.config.mask.key_padding = tensor({2, 3}, {1, 0, 1, 1, 1, 0});
    check_against_finite_differences(s);
    s.config.mask.key_padding = nullptr;
    s.config.mask.custom = tensor({3, 3}, {1, 0, 1, 0, 1, 1, 1, 1, 0});
    check_against_finite_differences(s);
    s.config.mask.custom = tensor({2, 3, 3}, {1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1});
    s.config.mask.causal = true;
    check_against_finite_differences(s);

    auto trace = al::compute(s);
    REQUIRE(trace);
    auto grads = al::backward(s, **trace, random_upstream(**trace, 5));
    REQUIRE(grads);
    const al::Tensor& mask = *(*trace)->mask;  // (B, Lq, Lk)
    const al::Tensor& d_scaled = grads->stage(Stage::Scaled);
    for (Index b = 0; b < 2; ++b)
      for (Index hh = 0; hh < 2; ++hh)
        for (Index c = 0; c < 9; ++c)
          if (mask.data[size_t(b * 9 + c)] == 0.0f) {
            CHECK(d_scaled.data[size_t((b * 2 + hh) * 9 + c)] == 0.0f);
            CHECK(grads->stage(Stage::Scores).data[size_t((b * 2 + hh) * 9 + c)] == 0.0f);
          }
  }
}

TEST_CASE("backward: dropout in training uses the forward's keep decisions") {
  al::Session s = small_projection();
  s.config.dropout = {0.4, true, 7};
  check_against_finite_differences(s);
  al::Session cross = cross_projection();
  cross.config.dropout = {0.3, true, 12};
  cross.config.mask.causal = true;
  check_against_finite_differences(cross);
  // Dropped weights pass no gradient back: dWeights is 0 exactly where dropout dropped.
  auto trace = al::compute(s);
  REQUIRE(trace);
  auto grads = al::backward(s, **trace, random_upstream(**trace, 3));
  REQUIRE(grads);
  const al::Tensor& d_weights = grads->stage(Stage::Weights);
  for (Index n = 0; n < d_weights.size(); ++n)
    if (!al::dropout_keeps(7, 0.4, n)) CHECK(d_weights.data[size_t(n)] == 0.0f);
  // In eval the same p does nothing: dropped and weights share one gradient.
  s.config.dropout.training = false;
  check_against_finite_differences(s);
}

TEST_CASE("backward: a query with every key masked") {
  al::Session s = small_projection();
  s.config.mask.key_padding = tensor({2, 3}, {0, 0, 0, 1, 1, 0});  // batch item 0 sees no key
  SUBCASE("with -inf fill: NaN loss, finite gradients with the row read as attending nothing") {
    auto trace = al::compute(s);
    REQUIRE(trace);
    const al::Tensor upstream = random_upstream(**trace, 8);
    auto grads = al::backward(s, **trace, upstream);
    REQUIRE(grads);
    CHECK(std::isnan(grads->loss));
    // Away from the NaN rows, every gradient equals finite differences of the
    // forward whose fully masked rows attend nothing (backward_reference.hpp).
    const Inputs expected = finite_difference_inputs(s, values_of(upstream));
    for (const auto& [name, values] : expected) check_close("input " + name, *grads->input(name), values);
    for (Stage st : al::kAllStages)
      if (grads->stages[static_cast<int>(st)]) check_close(al::stage_name(st), grads->stage(st), finite_difference_stage(s, values_of(upstream), st));
    for (Index n = 0; n < 2 * 3 * 3; ++n) CHECK(grads->stage(Stage::Masked).data[size_t(n)] == 0.0f);  // b = 0, both heads
  }
  SUBCASE("with a finite fill: an ordinary uniform softmax") {
    s.config.mask_fill = -1e9;
    check_against_finite_differences(s);
  }
}

TEST_CASE("backward: a tiny case by hand") {
  // One head, d = 1, direct mode, L = 2, scale none: q = [0, 0] so both rows
  // weigh the keys equally (1/2, 1/2); v = [2, 4]; context = [3, 3]; G = [1, 0].
  // dContext = G; dWeights row 0 = g·v = [2, 4], row 1 = 0;
  // dMasked row 0 = w (g − Σ w g) = 1/2·([2, 4] − 3) = [−1/2, 1/2];
  // dQ_0 = dScores row 0 · K = −1/2·k0 + 1/2·k1 = (−1 + 3)/2 = 1 for k = [1, 3]; dK = dScoresᵀ·q = 0;
  // dV = weightsᵀ·dContext = [1/2, 1/2].
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.d_model = 1;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.config.scale = {al::ScaleMode::None, 1.0};
  s.q = tensor({1, 2, 1}, {0, 0});
  s.k = tensor({1, 2, 1}, {1, 3});
  s.v = tensor({1, 2, 1}, {2, 4});
  auto trace = al::compute(s);
  REQUIRE(trace);
  auto grads = al::backward(s, **trace, al::Tensor({1, 2, 1}, std::vector<float>{1, 0}));
  REQUIRE(grads);
  CHECK(grads->loss == doctest::Approx(3.0));
  CHECK(grads->stage(Stage::Weights).data == std::vector<float>{2, 4, 0, 0});
  CHECK(grads->stage(Stage::Masked).data == std::vector<float>{-0.5f, 0.5f, 0, 0});
  CHECK(grads->input("q")->data == std::vector<float>{1, 0});
  CHECK(grads->input("k")->data == std::vector<float>{0, 0});
  CHECK(grads->input("v")->data == std::vector<float>{0.5f, 0.5f});
}

TEST_CASE("backward: the upstream gradient must have the output's shape") {
  al::Session s = small_projection();
  auto trace = al::compute(s);
  REQUIRE(trace);
  auto grads = al::backward(s, **trace, al::Tensor({2, 3, 5}, 1.0f));
  REQUIRE_FALSE(grads);
  CHECK(grads.error().code == al::ErrorCode::ShapeMismatch);
  CHECK(grads.error().message.find("2x3x5") != std::string::npos);
  CHECK(grads.error().message.find("2x3x4") != std::string::npos);
  // Without keep_stages only inputs and weights are made, and they are the same.
  al::BackwardOptions lean;
  lean.keep_stages = false;
  const al::Tensor upstream = random_upstream(**trace, 4);
  auto full = al::backward(s, **trace, upstream);
  auto only_inputs = al::backward(s, **trace, upstream, lean);
  REQUIRE(full);
  REQUIRE(only_inputs);
  CHECK_FALSE(only_inputs->stages[0]);
  for (const al::NamedGradient& g : full->inputs) CHECK(*only_inputs->input(g.name) == *g.gradient);
}
