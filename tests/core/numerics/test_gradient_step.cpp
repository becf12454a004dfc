// The gradient view's loss choices, the descent step and the softmax input's
// gradient of one cell: hand values, an independent reference forward and its
// central finite differences (backward_reference.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "attention_reference.hpp"
#include "backward_reference.hpp"
#include "numerics/gradient_step.hpp"

using namespace attention_test;
using namespace backward_test;
using al::Stage;

namespace {

al::Session small_session() {
  al::Session s = random_projection_session(2, 4, 6, 2, 17);
  s.config.mask.causal = true;
  return s;
}

}  // namespace

TEST_CASE("push a cell up: L = -output[b, i, c] and G is -1 there, 0 elsewhere") {
  const al::Session s = small_session();
  auto trace = al::compute(s);
  REQUIRE(trace);
  const al::Tensor& out = (*trace)->stage(Stage::Output);  // (B, Lq, d_model) = (2, 4, 6)
  al::LossChoice choice{al::LossKind::PushCellUp, 1, 2, 3, nullptr};
  auto loss = al::evaluate_loss(**trace, choice);
  REQUIRE(loss);
  CHECK(loss->loss == doctest::Approx(-out.at({1, 2, 3})));
  double sum = 0;
  for (float g : loss->upstream.data) sum += std::abs(g);
  CHECK(sum == 1.0);
  CHECK(loss->upstream.at({1, 2, 3}) == -1.0f);
  CHECK_FALSE(al::evaluate_loss(**trace, {al::LossKind::PushCellUp, 2, 0, 0, nullptr}));  // no batch item 2
  CHECK_FALSE(al::evaluate_loss(**trace, {al::LossKind::PushCellUp, 0, 0, 6, nullptr}));  // no column 6
}

TEST_CASE("squared error to a target that changes one cell by 0.5: L = 0.25 / N, G = -1 / N there") {
  const al::Session s = small_session();
  auto trace = al::compute(s);
  REQUIRE(trace);
  const float current = (*trace)->stage(Stage::Output).at({0, 1, 4});
  auto target = al::target_from_output(**trace, 0, 1, 4, current + 0.5f);
  REQUIRE(target);
  const double n = 2 * 4 * 6;
  const double diff = static_cast<double>(current) - static_cast<double>(current + 0.5f);  // the float step taken
  auto loss = al::evaluate_loss(**trace, {al::LossKind::SquaredError, 0, 0, 0, al::make_tensor(*target)});
  REQUIRE(loss);
  CHECK(loss->loss == doctest::Approx(diff * diff / n));
  CHECK(loss->loss == doctest::Approx(0.25 / n).epsilon(1e-5));
  CHECK(loss->upstream.at({0, 1, 4}) == doctest::Approx(2 * diff / n));
  CHECK(loss->upstream.at({0, 1, 3}) == 0.0f);
  CHECK_FALSE(al::target_from_output(**trace, 0, 4, 0, 1.0f));
  // A target of another shape does not fit.
  CHECK_FALSE(al::evaluate_loss(**trace, {al::LossKind::SquaredError, 0, 0, 0, tensor({2, 2}, {0, 0, 0, 0})}));
}

TEST_CASE("one descent step moves exactly the weights by -lr * grad and lowers the loss as the first order says") {
  const al::Session s = small_session();
  auto trace = al::compute(s);
  REQUIRE(trace);
  const al::LossChoice choice{al::LossKind::PushCellUp, 0, 3, 1, nullptr};
  auto before = al::evaluate_loss(**trace, choice);
  REQUIRE(before);
  auto grads = al::backward(s, **trace, before->upstream);
  REQUIRE(grads);
  CHECK(al::trainable_names(s) == std::vector<std::string>{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"});
  const double lr = 1e-3;
  const al::Session next = al::descent_step(s, *grads, lr);
  CHECK(next.x == s.x);  // the sentence is not trained
  CHECK(next.weights.w_k->data[5] == static_cast<float>(s.weights.w_k->data[5] - lr * grads->input("w_k")->data[5]));
  CHECK(next.weights.b_o->data[1] == static_cast<float>(s.weights.b_o->data[1] - lr * grads->input("b_o")->data[1]));
  // The loss after, from the independent double-precision forward: it falls by
  // about lr · |grad|², the squared length of the gradient (finite differences of that forward).
  const Values g = values_of(before->upstream);
  const double loss_before = reference_forward(s, inputs_of(s), g).loss;
  const double loss_after = reference_forward(next, inputs_of(next), g).loss;
  CHECK(loss_before == doctest::Approx(before->loss).epsilon(1e-5));
  double squared = 0;
  for (const auto& [name, values] : finite_difference_inputs(s, g))
    if (name != "x")
      for (double v : values) squared += v * v;
  CHECK(loss_after < loss_before);
  CHECK((loss_before - loss_after) == doctest::Approx(lr * squared).epsilon(0.02));
}

TEST_CASE("direct mode trains Q, K, V (and W_O); a fused session trains W_qkv") {
  al::Session direct = random_direct_session(1, 3, 3, 4, 2, 5);
  const auto names = al::trainable_names(direct);
  CHECK(names.size() >= 3);
  CHECK(names[0] == "q");
  CHECK(names[2] == "v");
  al::Session fused = small_session();
  fused.weights.w_qkv = random_tensor({6, 18}, 3, 0.4);
  fused.weights.b_qkv = random_tensor({18}, 4, 0.1);
  fused.weights.w_q = fused.weights.w_k = fused.weights.w_v = nullptr;
  fused.weights.b_q = fused.weights.b_k = fused.weights.b_v = nullptr;
  CHECK(al::trainable_names(fused) == std::vector<std::string>{"w_qkv", "b_qkv", "w_o", "b_o"});
}

TEST_CASE("softmax input's gradient written out: w_ij (g_ij - sum_k w_ik g_ik) equals finite differences") {
  al::Session s = small_session();
  s.config.mask.causal = false;
  auto trace = al::compute(s);
  REQUIRE(trace);
  const al::Tensor upstream = al::random_normal((*trace)->stage(Stage::Output).shape, 8, 1.0);
  auto grads = al::backward(s, **trace, upstream);
  REQUIRE(grads);
  const Values fd = finite_difference_stage(s, values_of(upstream), Stage::Masked);  // (B, h, Lq, Lk) = (2, 2, 4, 4)
  for (Index m : {0, 3})
    for (Index i = 0; i < 4; ++i)
      for (Index j = 0; j < 4; ++j) {
        auto cell = al::softmax_input_gradient(**trace, *grads, m, i, j);
        REQUIRE(cell);
        CHECK(cell->weight == doctest::Approx((*trace)->stage(Stage::Weights).matrix(m)(i, j)));
        CHECK(cell->value == doctest::Approx(fd[static_cast<size_t>((m * 4 + i) * 4 + j)]).epsilon(1e-4));
      }
  // Hand value: a row of weights (0.5, 0.5) with dL/dw = (1, 0): 0.5 · (1 − 0.5) = 0.25.
  al::Session hand = random_direct_session(1, 1, 2, 2, 1, 1);
  hand.q = tensor({1, 1, 2}, {0, 0});  // every score 0: weights 0.5, 0.5
  hand.k = tensor({1, 2, 2}, {1, 2, 3, 4});
  hand.v = tensor({1, 2, 2}, {1, 0, 0, 0});  // output[0] = w_0, so dL/dw = (1, 0) for G = (1, 0)
  hand.weights.w_o = hand.weights.b_o = nullptr;
  hand.config.bias = false;
  auto hand_trace = al::compute(hand);
  REQUIRE(hand_trace);
  auto hand_grads = al::backward(hand, **hand_trace, Tensor({1, 2}, std::vector<float>{1, 0}));
  REQUIRE(hand_grads);
  auto cell = al::softmax_input_gradient(**hand_trace, *hand_grads, 0, 0, 0);
  REQUIRE(cell);
  CHECK(cell->weight == doctest::Approx(0.5));
  CHECK(cell->upstream == doctest::Approx(1.0));
  CHECK(cell->row_dot == doctest::Approx(0.5));
  CHECK(cell->value == doctest::Approx(0.25));
  CHECK_FALSE(al::softmax_input_gradient(**hand_trace, *hand_grads, 0, 0, 2));
}
