// The lesson "how a head learns to look back" (teaching/look_back): every number its
// sentences state, checked against a computation written here — the naive reference
// attention of tests/core/numerics (double loops), the softmax rule by hand, the loss
// after a descent step recomputed by that reference, and the previous-token share
// summed by hand — and every text of the lesson rendered in both languages.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "../numerics/attention_reference.hpp"
#include "i18n_tables.hpp"
#include "numerics/backward.hpp"
#include "teaching/look_back.hpp"

using namespace al;
using namespace al::testing;

namespace {

// A lesson number back as a double ("−1.724", "2.5e-5").
double number(const TextParams& params, const std::string& name) {
  for (const auto& [key, value] : params)
    if (key == name) {
      std::string text = value;
      for (size_t at; (at = text.find("−")) != std::string::npos;) text.replace(at, std::string("−").size(), "-");
      return std::stod(text);
    }
  FAIL("no parameter " << name);
  return NAN;
}

std::string text_of(const TextParams& params, const std::string& name) {
  for (const auto& [key, value] : params)
    if (key == name) return value;
  return "";
}

// Four significant digits, as lab_number writes them.
void check_number(const TextParams& params, const std::string& name, double expected) {
  CAPTURE(name);
  CHECK(number(params, name) == doctest::Approx(expected).epsilon(1e-3));
}

// Each key of the lesson renders with these numbers in both languages, all of them filled
// in, the Chinese without English words, and quoting `quoted`.
void check_renders(const std::string& key, const TextParams& params, const std::vector<std::string>& quoted) {
  for (bool chinese : {false, true}) {
    CAPTURE(key);
    CAPTURE(chinese);
    std::string text = lookup_in(chinese)(key);
    CHECK(substitute(&text, params));
    CAPTURE(text);
    for (const std::string& name : quoted) CHECK(contains(text, text_of(params, name)));
    if (chinese) CHECK(english_words(text).empty());
  }
}

}  // namespace

TEST_CASE("look back, step 1: the untrained previous_token model and its losses") {
  const LookBackStart start = look_back_start();
  const Index L = toy_task_shape(ToyTask::PreviousToken).length;
  CHECK(start.config.steps == default_training(ToyTask::PreviousToken).steps);
  CHECK(start.vocabulary == static_cast<Index>(toy_output_symbols(ToyTask::PreviousToken).size()));
  CHECK(start.uniform_loss == doctest::Approx(std::log(static_cast<double>(start.vocabulary))));
  // The lab's first step: a fresh trainer of the same config measures the same loss.
  Trainer lab(default_training(ToyTask::PreviousToken));
  CHECK(lab.step() == start.first_loss);
  // Untrained: about as wrong as a uniform guess, more or less.
  CHECK(std::abs(start.first_loss - start.uniform_loss) < 1.5);
  REQUIRE(start.session.x);
  CHECK(start.session.x->dim(1) == L);
  CHECK(static_cast<Index>(start.session.tokens.size()) == L);

  const auto trace = attention_test::compute_ok(start.session);
  const LossChoice choice{LossKind::PushCellUp, 0, L - 1, 0, nullptr};
  const auto loss = evaluate_loss(*trace, choice);
  REQUIRE(loss);
  const TextParams params = look_back_loss_params(start, *trace, choice, *loss);
  const attention_test::Reference ref = attention_test::reference_attention(start.session);
  check_number(params, "loss", -ref.output[size_t((L - 1) * ref.d)]);  // L = −output[L−1, 0]
  check_number(params, "uniform_loss", std::log(24.0));
  CHECK(text_of(params, "vocab") == "24");
  CHECK(text_of(params, "lq") == std::to_string(L));
  CHECK(text_of(params, "h") == std::to_string(ref.h));
  CHECK(text_of(params, "d_k") == std::to_string(ref.dk));
  check_renders("lessons.look_back_loss.text", params, {"lq", "h", "vocab", "uniform_loss", "first_loss", "loss"});
  check_renders("lessons.look_back_loss.title", params, {});
}

TEST_CASE("look back, steps 2 and 3: ∂L/∂S″ at the previous token, and one descent step") {
  const LookBackStart start = look_back_start();
  const Session& s = start.session;
  const auto trace = attention_test::compute_ok(s);
  const Index L = trace->dims.len_q, row = L - 1, key = row - 1, c = 0;
  const LossChoice choice{LossKind::PushCellUp, 0, row, c, nullptr};
  const auto loss = evaluate_loss(*trace, choice);
  REQUIRE(loss);
  const auto gradients = backward(s, *trace, loss->upstream);
  REQUIRE(gradients.ok());

  // By hand: out[row, c] = Σ_heads Σ_j α_row,j · (V_j · W_O[head's rows, c]) + b_O[c], so for
  // head 0, ∂L/∂α_row,j = −Σ_p V_0[j, p] · W_O[p, c]; then the softmax rule on row `row`.
  const attention_test::Reference ref = attention_test::reference_attention(s);
  const Tensor& w_o = *s.weights.w_o;  // (d_model, d_model), math layout
  auto alpha = [&](Index j) { return ref.weights[size_t(row * L + j)]; };  // head 0 of item 0
  auto upstream = [&](Index j) {
    double sum = 0;
    for (Index p = 0; p < ref.dk; ++p) sum += ref.v[size_t(j * ref.dk + p)] * w_o.data[size_t(p * w_o.dim(1) + c)];
    return -sum;
  };
  double row_dot = 0;
  for (Index j = 0; j < L; ++j) row_dot += alpha(j) * upstream(j);  // masked keys: α = 0
  const double value = alpha(key) * (upstream(key) - row_dot);

  const auto step2 = look_back_gradient(*trace, *gradients, row, s.tokens);
  REQUIRE(step2);
  check_number(step2->params, "w", alpha(key));
  check_number(step2->params, "g", upstream(key));
  check_number(step2->params, "row_dot", row_dot);
  check_number(step2->params, "value", value);
  CHECK(step2->raise == (value < 0));
  CHECK(text_of(step2->params, "q_tok") == s.tokens[size_t(row)]);
  CHECK(text_of(step2->params, "k_tok") == s.tokens[size_t(key)]);
  for (const char* variant : {".text_raise", ".text_lower"})
    check_renders(std::string("lessons.look_back_gradient") + variant, step2->params,
                  {"row", "key", "w", "g", "row_dot", "value"});
  CHECK_FALSE(look_back_gradient(*trace, *gradients, 0, s.tokens));  // row 0 has no previous token

  // One step: every weight moved by −lr·∂L/∂W here, the loss recomputed by the reference.
  const double lr = 0.1;
  Session moved = s;
  for (const NamedGradient& g : gradients->inputs) {
    TensorPtr* slot = g.name == "w_q" ? &moved.weights.w_q : g.name == "w_k" ? &moved.weights.w_k
                    : g.name == "w_v" ? &moved.weights.w_v : g.name == "w_o" ? &moved.weights.w_o
                    : g.name == "b_q" ? &moved.weights.b_q : g.name == "b_k" ? &moved.weights.b_k
                    : g.name == "b_v" ? &moved.weights.b_v : g.name == "b_o" ? &moved.weights.b_o : nullptr;
    if (!slot) continue;  // x: the step trains the model, not the sentence
    Tensor next = **slot;
    for (size_t i = 0; i < next.data.size(); ++i) next.data[i] -= static_cast<float>(lr * g.gradient->data[i]);
    *slot = std::make_shared<const Tensor>(std::move(next));
  }
  const double after = -attention_test::reference_attention(moved).output[size_t(row * ref.d + c)];
  const auto step3 = look_back_descent(s, *trace, *gradients, choice, lr);
  REQUIRE(step3);
  check_number(*step3, "before", -ref.output[size_t(row * ref.d + c)]);
  check_number(*step3, "after", after);
  check_number(*step3, "lr", lr);
  CHECK(after < -ref.output[size_t(row * ref.d + c)]);  // descent lowers the loss
  check_renders("lessons.look_back_step.text", *step3, {"lr", "before", "after"});
  check_renders("lessons.look_back_step.text_done", *step3, {"lr", "before", "after"});
}

TEST_CASE("look back, step 4: the previous-token share, by hand and after the lab's training") {
  // Two heads of L = 3: head 0 on the previous token in row 1, half of it in row 2.
  const Tensor weights = *attention_test::tensor({1, 2, 3, 3}, {1, 0, 0, /**/ 1, 0, 0, /**/ 0, 0.5f, 0.5f,  //
                                                                1, 0, 0, /**/ 0.25f, 0.75f, 0, /**/ 0.2f, 0.3f, 0.5f});
  CHECK(previous_token_share(weights, 0) == doctest::Approx((1.0 + 0.5) / 2));
  CHECK(previous_token_share(weights, 1) == doctest::Approx((0.25 + 0.3) / 2));

  const TrainingConfig config = default_training(ToyTask::PreviousToken);
  const LookBackTraining before = look_back_training(config, 0, config.steps, 0, 0, nullptr, -1, nullptr);
  CHECK(text_of(before.params, "steps") == "300");
  CHECK(text_of(before.params, "batch") == "64");
  check_number(before.params, "lr", 0.01);
  check_renders("lessons.look_back_train.text_start", before.params, {"steps", "batch", "lr"});

  // The lab's run: its default steps, then the held-out example's attention.
  Trainer trainer(config);
  double loss = 0;
  for (int i = 0; i < config.steps; ++i) loss = trainer.step();
  const Session example = trainer.heldout_session(1);
  const attention_test::Reference ref = attention_test::reference_attention(example);
  const Index L = ref.Lq;
  double best = -1;
  Index best_head = -1;
  for (Index h = 0; h < ref.h; ++h) {
    double sum = 0;
    for (Index i = 1; i < L; ++i) sum += ref.weights[size_t((h * L + i) * L + i - 1)];
    if (sum / double(L - 1) > best) best = sum / double(L - 1), best_head = h;
  }
  const auto trace = attention_test::compute_ok(example);
  const Tensor ideal = toy_ideal_pattern(ToyTask::PreviousToken, trainer.heldout_tokens(1));
  const double accuracy = trainer.heldout_accuracy();
  const LookBackTraining after = look_back_training(config, config.steps, config.steps, loss, accuracy,
                                                    &trace->stage(Stage::Weights), config.steps, &ideal);
  CHECK(text_of(after.params, "head") == std::to_string(best_head));
  check_number(after.params, "share", best);
  check_number(after.params, "ideal", 1.0);
  check_number(after.params, "accuracy", 100 * accuracy);
  check_number(after.params, "loss", loss);
  // The promise: the learned head puts most of each row on the previous token.
  CHECK(best >= kLookBackFormed);
  CHECK(after.formed);
  check_renders("lessons.look_back_train.text_formed", after.params, {"step", "total", "accuracy", "head", "share"});
  check_renders("lessons.look_back_train.text_forming", after.params, {"step", "head", "share", "ideal"});
  check_renders("lessons.look_back_train.title", after.params, {});
}
