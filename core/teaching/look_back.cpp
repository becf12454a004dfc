#include "teaching/look_back.hpp"

#include <cmath>

#include "numerics/attention.hpp"
#include "teaching/lab_numbers.hpp"

namespace al {

namespace {
std::string token(const std::vector<std::string>& tokens, Index i) {
  return i >= 0 && i < static_cast<Index>(tokens.size()) ? tokens[static_cast<size_t>(i)] : std::to_string(i);
}
std::string whole(Index n) { return std::to_string(n); }
}  // namespace

LookBackStart look_back_start() {
  LookBackStart start;
  start.config = default_training(ToyTask::PreviousToken);
  Trainer trainer(start.config);
  start.session = trainer.heldout_session(1);
  start.vocabulary = toy_task_shape(ToyTask::PreviousToken).output_vocab;
  start.uniform_loss = std::log(static_cast<double>(start.vocabulary));
  start.first_loss = trainer.step();  // the model is not shared: its session above is from before the step
  return start;
}

TextParams look_back_loss_params(const LookBackStart& start, const Trace& trace, const LossChoice& choice,
                                 const LossValue& loss) {
  const Dims& d = trace.dims;
  return {{"lq", whole(d.len_q)},
          {"h", whole(d.heads)},
          {"d_k", whole(d.d_k)},
          {"vocab", whole(start.vocabulary)},
          {"uniform_loss", lab_number(start.uniform_loss)},
          {"first_loss", lab_number(start.first_loss)},
          {"steps", std::to_string(start.config.steps)},
          {"row", whole(choice.row)},
          {"col", whole(choice.col)},
          {"loss", lab_number(loss.loss)}};
}

std::optional<LookBackGradient> look_back_gradient(const Trace& trace, const Gradients& gradients, Index row,
                                                   const std::vector<std::string>& tokens) {
  const Index key = row - 1;
  if (key < 0 || key >= trace.dims.len_kv) return std::nullopt;
  auto terms = softmax_input_gradient(trace, gradients, 0, row, key);  // matrix 0: batch item 0, head 0
  if (!terms) return std::nullopt;
  LookBackGradient out;
  out.raise = terms->value < 0;
  out.params = {{"row", whole(row)},
                {"key", whole(key)},
                {"q_tok", token(tokens, row)},
                {"k_tok", token(tokens, key)},
                {"w", lab_number(terms->weight)},
                {"g", lab_number(terms->upstream)},
                {"row_dot", lab_number(terms->row_dot)},
                {"value", lab_number(terms->value)},
                {"loss", lab_number(gradients.loss)}};
  return out;
}

std::optional<TextParams> look_back_descent(const Session& session, const Trace& trace, const Gradients& gradients,
                                            const LossChoice& choice, double learning_rate) {
  const auto before = evaluate_loss(trace, choice);
  if (!before) return std::nullopt;
  const auto moved = compute(descent_step(session, gradients, learning_rate));
  if (!moved) return std::nullopt;
  const auto after = evaluate_loss(**moved, choice);
  if (!after) return std::nullopt;
  return TextParams{{"lr", lab_number(learning_rate)},
                    {"before", lab_number(before->loss)},
                    {"after", lab_number(after->loss)}};
}

double previous_token_share(const Tensor& weights, Index matrix) {
  const Index rows = weights.rows(), cols = weights.cols();  // one (L, L) matrix
  if (rows < 2 || cols < rows - 1) return 0.0;
  const float* w = weights.data.data() + matrix * rows * cols;
  double sum = 0;
  for (Index i = 1; i < rows; ++i) sum += w[i * cols + (i - 1)];
  return sum / static_cast<double>(rows - 1);
}

LookBackTraining look_back_training(const TrainingConfig& config, int step, int total, double loss,
                                    double accuracy, const Tensor* weights, int pattern_step, const Tensor* ideal) {
  LookBackTraining out;
  out.params = {{"steps", std::to_string(config.steps)},
                {"batch", whole(config.batch)},
                {"lr", lab_number(config.learning_rate)},
                {"step", std::to_string(step)},
                {"total", std::to_string(total)},
                {"loss", lab_number(loss)},
                {"accuracy", lab_number(100.0 * accuracy)},
                {"pattern_step", std::to_string(pattern_step)}};
  if (!weights) return out;
  Index best = 0;
  double best_share = -1;
  const Index heads = weights->dim(1);  // (1, h, L, L): the held-out example
  for (Index h = 0; h < heads; ++h) {
    const double share = previous_token_share(*weights, h);
    if (share > best_share) best = h, best_share = share;
  }
  out.formed = best_share >= kLookBackFormed;
  out.params.push_back({"head", whole(best)});
  out.params.push_back({"share", lab_number(best_share)});
  out.params.push_back({"ideal", ideal ? lab_number(previous_token_share(*ideal, 0)) : "–"});
  return out;
}

}  // namespace al
