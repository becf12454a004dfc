#include "teaching/quiz.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "base/random.hpp"
#include "teaching/explain.hpp"
#include "teaching/lab_numbers.hpp"

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

// Σ_t shown(a[t·a_step]) · shown(b[t·b_step]) over n terms: a dot product of printed numbers.
double shown_dot(const float* a, Index a_step, const float* b, Index b_step, Index n) {
  double sum = 0;
  for (Index t = 0; t < n; ++t) sum += value_as_shown(a[t * a_step]) * value_as_shown(b[t * b_step]);
  return sum;
}

// The asked cell worked out from its inputs as the screen prints them (the inputs of each
// step as explain.cpp names them).
double shown_answer(const Trace& trace, const Session& session, const QuizQuestion& q) {
  const Dims& d = trace.dims;
  const Index bh = q.batch * d.heads + q.head, bkv = q.batch * d.kv_heads + d.kv_head(q.head);
  switch (q.stage) {
    case Stage::Scores: {
      if (!trace.has(trace.scored_q()) || !trace.has(trace.scored_k())) break;
      const Tensor& qs = trace.stage(trace.scored_q());  // (B, h, Lq, d_k)
      const Tensor& ks = trace.stage(trace.scored_k());  // (B, h_kv, Lk, d_k)
      return shown_dot(qs.matrix(bh).row(q.row).data(), 1, ks.matrix(bkv).row(q.col).data(), 1, d.d_k);
    }
    case Stage::Scaled:
      if (!trace.has(Stage::Scores)) break;
      return value_as_shown(trace.stage(Stage::Scores).matrix(bh)(q.row, q.col)) * trace.scale;
    case Stage::Weights: {
      if (!trace.has(Stage::Masked)) break;
      const auto row = trace.stage(Stage::Masked).matrix(bh).row(q.row);  // (Lk), −∞ where masked
      double top = -INFINITY, sum = 0;
      for (Index j = 0; j < d.len_kv; ++j) top = std::max(top, value_as_shown(row(j)));
      for (Index j = 0; j < d.len_kv; ++j) sum += std::exp(value_as_shown(row(j)) - top);
      return std::exp(value_as_shown(row(q.col)) - top) / sum;
    }
    case Stage::Context: {
      const Stage weights = context_weights(session);
      if (!trace.has(weights) || !trace.has(Stage::V)) break;
      const Tensor& alpha = trace.stage(weights);  // (B, h, Lq, Lk)
      const Tensor& v = trace.stage(Stage::V);     // (B, h_kv, Lk, d_k)
      return shown_dot(alpha.matrix(bh).row(q.row).data(), 1, v.matrix(bkv).data() + q.col, d.d_k, d.len_kv);
    }
    case Stage::Output: {
      const TensorPtr& w_o = session.weights.w_o;  // (d_model, d_model)
      if (!w_o || !trace.has(Stage::Concat)) break;
      double sum = shown_dot(trace.stage(Stage::Concat).matrix(q.batch).row(q.row).data(), 1,
                             w_o->data.data() + q.col, w_o->cols(), d.d_model);
      if (session.config.bias && session.weights.b_o)
        sum += value_as_shown(session.weights.b_o->data[static_cast<size_t>(q.col)]);
      return sum;
    }
    default:
      break;
  }
  return q.answer;  // inputs not on screen: only the exact value
}

}  // namespace

bool quiz_value_matches(double expected, double typed) {
  if (!std::isfinite(typed) || !std::isfinite(expected)) return false;
  const double error = std::abs(typed - expected);
  return error <= 1e-2 || error <= 1e-2 * std::abs(expected);
}

double value_as_shown(float v) {
  if (!std::isfinite(v)) return v;
  return std::strtod(cell_value_text(v, true).c_str(), nullptr);
}

std::optional<QuizQuestion> make_quiz_question(const Trace& trace, const Session& session, std::uint64_t seed,
                                               QuizHide hide) {
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
    q.shown_answer = shown_answer(trace, session, q);
    return q;
  }
  return std::nullopt;
}

bool check_quiz_value(const QuizQuestion& question, double typed) {
  return quiz_value_matches(question.answer, typed) || quiz_value_matches(question.shown_answer, typed);
}

bool check_quiz_key(const QuizQuestion& question, Index key) { return key == question.answer_key; }

}  // namespace al
