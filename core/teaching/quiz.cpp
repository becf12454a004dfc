#include "teaching/quiz.hpp"

#include <cmath>
#include <vector>

#include "base/random.hpp"

namespace al {

namespace {

bool per_head(Stage stage) { return stage != Stage::Concat && stage != Stage::Output; }

bool cell_masked(const Trace& trace, Index b, Index i, Index j) {
  return trace.mask && trace.mask->matrix(b)(i, j) == 0.0f;
}

bool row_fully_masked(const Trace& trace, Index b, Index i) {
  return !trace.fully_masked_rows.empty() &&
         trace.fully_masked_rows[static_cast<size_t>(b * trace.dims.len_q + i)] != 0;
}

// Index of the largest weight of a row and its lead over the runner-up.
std::pair<Index, float> row_argmax(const Trace& trace, Index b, Index h, Index i) {
  const auto w = trace.stage(Stage::Weights).matrix(b * trace.dims.heads + h);
  Index best = 0;
  float top = -1.0f, second = -1.0f;
  for (Index j = 0; j < trace.dims.len_kv; ++j) {
    const float a = w(i, j);
    if (a > top) {
      second = top;
      top = a;
      best = j;
    } else if (a > second) {
      second = a;
    }
  }
  return {best, trace.dims.len_kv > 1 ? top - second : 1.0f};
}

}  // namespace

bool quiz_value_matches(float expected, double typed) {
  if (!std::isfinite(typed) || !std::isfinite(expected)) return false;
  const double error = std::abs(typed - static_cast<double>(expected));
  return error <= 1e-2 || error <= 1e-2 * std::abs(static_cast<double>(expected));
}

std::optional<QuizQuestion> make_quiz_question(const Trace& trace, std::uint64_t seed, QuizHide hide) {
  const Dims& d = trace.dims;
  if (d.batch <= 0 || d.heads <= 0 || d.len_q <= 0 || d.len_kv <= 0) return std::nullopt;
  std::uint64_t counter = 0;
  auto draw = [&](Index n) {
    return static_cast<Index>(uniform01(seed, counter++) * static_cast<double>(n));
  };
  const Stage value_stages[] = {Stage::Scores, Stage::Scaled, Stage::Weights, Stage::Context,
                                Stage::Output};
  // A few random draws find a good cell in any trace that has one.
  for (int attempt = 0; attempt < 64; ++attempt) {
    QuizQuestion q;
    // With one cell covered the rest of its row stays on screen and gives the
    // argmax away, so that mode asks only for values.
    const bool argmax = draw(3) == 0;
    q.kind = argmax && hide == QuizHide::Stage ? QuizKind::Argmax : QuizKind::Value;
    q.batch = draw(d.batch);
    q.row = draw(d.len_q);
    if (row_fully_masked(trace, q.batch, q.row)) continue;
    if (q.kind == QuizKind::Argmax) {
      q.stage = Stage::Weights;
      q.head = draw(d.heads);
      if (!trace.has(Stage::Weights)) continue;  // a lean trace (ComputeOptions::keep) without them
      auto [best, lead] = row_argmax(trace, q.batch, q.head, q.row);
      if (lead < 0.02f) continue;
      q.answer_key = best;
      q.answer = trace.stage(Stage::Weights).matrix(q.batch * d.heads + q.head)(q.row, best);
      return q;
    }
    q.stage = value_stages[draw(5)];
    q.head = per_head(q.stage) ? draw(d.heads) : 0;
    if (!trace.has(q.stage)) continue;  // not kept: ask about a stage on screen
    const Tensor& stage = trace.stage(q.stage);
    q.col = draw(stage.cols());
    const bool key_by_key = q.stage == Stage::Scores || q.stage == Stage::Scaled || q.stage == Stage::Weights;
    if (key_by_key && cell_masked(trace, q.batch, q.row, q.col)) continue;
    q.answer = stage.matrix(per_head(q.stage) ? q.batch * d.heads + q.head : q.batch)(q.row, q.col);
    if (!std::isfinite(q.answer)) continue;
    return q;
  }
  return std::nullopt;
}

bool check_quiz_value(const QuizQuestion& question, double typed) {
  return quiz_value_matches(question.answer, typed);
}

bool check_quiz_key(const QuizQuestion& question, Index key) { return key == question.answer_key; }

}  // namespace al
