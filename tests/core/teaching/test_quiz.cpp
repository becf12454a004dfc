// Quiz: questions come from the trace (same seed, same question), ask about
// finite unmasked cells, and answers are checked with the stated tolerance.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "teaching/labs.hpp"
#include "teaching/quiz.hpp"
#include "io/session_io.hpp"

using al::Index;

TEST_CASE("quiz tolerance: relative 1e-2 or absolute 1e-2") {
  CHECK(al::quiz_value_matches(0.5f, 0.505));
  CHECK(al::quiz_value_matches(0.5f, 0.509));      // abs 1e-2
  CHECK_FALSE(al::quiz_value_matches(0.5f, 0.52));
  CHECK(al::quiz_value_matches(100.0f, 100.9));    // rel 1e-2 of 100 = 1
  CHECK_FALSE(al::quiz_value_matches(100.0f, 101.5));
  CHECK(al::quiz_value_matches(-3.0f, -3.02));
  CHECK_FALSE(al::quiz_value_matches(-3.0f, 3.0));
  CHECK_FALSE(al::quiz_value_matches(0.5f, std::nan("")));
}

TEST_CASE("quiz questions are reproducible, finite, unmasked and checkable") {
  for (const char* preset : {"default", "seed-003-example", "padded-batch", "causal-decoder"}) {
    CAPTURE(preset);
    auto session = al::load_preset(preset);
    REQUIRE(session);
    auto trace = al::compute(*session);
    REQUIRE(trace);
    const al::Trace& t = **trace;
    int values = 0, argmaxes = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      auto q = al::make_quiz_question(t, *session, seed);
      REQUIRE(q);
      auto again = al::make_quiz_question(t, *session, seed);
      CHECK(again->row == q->row);
      CHECK(again->col == q->col);
      CHECK(again->stage == q->stage);
      const bool per_head = q->stage != al::Stage::Concat && q->stage != al::Stage::Output;
      const Index k = per_head ? q->batch * t.dims.heads + q->head : q->batch;
      const auto m = t.stage(q->stage).matrix(k);
      if (q->kind == al::QuizKind::Value) {
        ++values;
        CHECK(q->answer == m(q->row, q->col));
        CHECK(std::isfinite(q->answer));
        if (t.mask && q->stage != al::Stage::Context && q->stage != al::Stage::Output)
          CHECK(t.mask->matrix(q->batch)(q->row, q->col) != 0.0f);
        CHECK(al::check_quiz_value(*q, q->answer));
        CHECK(al::check_quiz_value(*q, q->answer + 0.009));
        CHECK(al::check_quiz_value(*q, q->shown_answer));
        // Far from both the exact value and the one worked out from the screen: wrong.
        const double far = std::max(q->answer, static_cast<float>(q->shown_answer)) + 0.03 +
                           0.02 * std::max(std::abs(q->answer), static_cast<float>(std::abs(q->shown_answer)));
        CHECK_FALSE(al::check_quiz_value(*q, far));
      } else {
        ++argmaxes;
        // The key with the largest weight, found here by a plain scan.
        Index best = 0;
        for (Index j = 1; j < t.dims.len_kv; ++j)
          if (m(q->row, j) > m(q->row, best)) best = j;
        CHECK(q->answer_key == best);
        CHECK(al::check_quiz_key(*q, best));
        CHECK_FALSE(al::check_quiz_key(*q, (best + 1) % t.dims.len_kv));
      }
    }
    CHECK(values > 0);
    CHECK(argmaxes > 0);
  }
}

TEST_CASE("quiz never asks about a fully masked row") {
  const al::Session session = al::mask_fill_example();
  auto trace = al::compute(session);  // −∞ fill: row 0 is NaN
  REQUIRE(trace);
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    auto q = al::make_quiz_question(**trace, session, seed);
    REQUIRE(q);
    CHECK(q->row != 0);
  }
}

// Two tokens, d_model = d_k = 1 (√d_k = 1), no mask: scores q_i·k_j with
// k = (0, ln 3) give rows (0, ln 3) and (0, ln 9), so the weights are
// (1/4, 3/4) and (1/10, 9/10), and with v = (4, 8) the context is
// 1/4·4 + 3/4·8 = 7 and 1/10·4 + 9/10·8 = 7.6. Worked out by hand, not by the program.
TEST_CASE("one-cell quiz: value questions only, answers as computed by hand") {
  const std::string text = R"({
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "direct", "attention": "self", "d_model": 1, "num_heads": 1,
               "bias": false, "scale": "sqrt_dk", "mask_fill": "-inf"},
    "tokens": ["a", "b"],
    "q": [[1.0], [2.0]], "k": [[0.0], [1.0986122886681098]], "v": [[4.0], [8.0]]})";
  auto session = al::parse_session_json(text, "", "hand.json");
  REQUIRE_MESSAGE(session.ok(), (session.ok() ? "" : session.error().message));
  auto trace = al::compute(*session);
  REQUIRE(trace);
  const double ln3 = std::log(3.0);
  auto by_hand = [&](al::Stage stage, Index row, Index col) -> double {
    switch (stage) {
      case al::Stage::Scores:
      case al::Stage::Scaled: return (row + 1) * (col == 0 ? 0.0 : ln3);
      case al::Stage::Weights: return row == 0 ? (col == 0 ? 0.25 : 0.75) : (col == 0 ? 0.1 : 0.9);
      default: return row == 0 ? 7.0 : 7.6;  // context (and output: no W_O in direct mode)
    }
  };
  bool seen[5] = {};
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    auto q = al::make_quiz_question(**trace, *session, seed, al::QuizHide::Cell);
    REQUIRE(q);
    CAPTURE(al::stage_name(q->stage));
    CHECK(q->kind == al::QuizKind::Value);
    const double expected = by_hand(q->stage, q->row, q->col);
    CHECK(std::abs(q->answer - expected) < 1e-5);
    // The learner rounds: two decimals count, a slip in the first does not.
    CHECK(al::check_quiz_value(*q, std::round(expected * 100.0) / 100.0));
    CHECK_FALSE(al::check_quiz_value(*q, expected + 0.1));
    switch (q->stage) {
      case al::Stage::Scores: seen[0] = true; break;
      case al::Stage::Scaled: seen[1] = true; break;
      case al::Stage::Weights: seen[2] = true; break;
      case al::Stage::Context: seen[3] = true; break;
      default: seen[4] = true; break;
    }
  }
  for (bool s : seen) CHECK(s);
}

TEST_CASE("one-cell quiz: never an argmax, never a masked or NaN cell; the stage quiz still asks both") {
  for (const char* preset : {"default", "causal-decoder", "padded-batch"}) {
    CAPTURE(preset);
    auto session = al::load_preset(preset);
    REQUIRE(session);
    auto trace = al::compute(*session);
    REQUIRE(trace);
    const al::Trace& t = **trace;
    int argmaxes_in_stage_mode = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      auto q = al::make_quiz_question(t, *session, seed, al::QuizHide::Cell);
      REQUIRE(q);
      CHECK(q->kind == al::QuizKind::Value);
      CHECK(std::isfinite(q->answer));
      if (t.mask && q->stage != al::Stage::Context && q->stage != al::Stage::Output)
        CHECK(t.mask->matrix(q->batch)(q->row, q->col) != 0.0f);
      if (al::make_quiz_question(t, *session, seed, al::QuizHide::Stage)->kind == al::QuizKind::Argmax)
        ++argmaxes_in_stage_mode;
    }
    CHECK(argmaxes_in_stage_mode > 0);
  }
}

// A learner works from the numbers the cells print (two decimals; three significant digits from
// 100 on). Each question's shown_answer is worked out again here by explicit loops over the
// inputs of its step, rounded by arithmetic rather than by printing; an answer near it counts.
namespace {
// Ties go to the even digit, as printf rounds an exact binary tie: 0.125 prints as 0.12.
double printed(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (std::abs(x) < 100.0) return std::nearbyint(x * 100.0) / 100.0;
  const double unit = std::pow(10.0, std::floor(std::log10(std::abs(x))) - 2.0);
  return std::nearbyint(x / unit) * unit;
}

double shown_by_loop(const al::Trace& t, const al::Session& s, const al::QuizQuestion& q) {
  const al::Dims& d = t.dims;
  const Index bh = q.batch * d.heads + q.head, bkv = q.batch * d.kv_heads + q.head / (d.heads / d.kv_heads);
  switch (q.stage) {
    case al::Stage::Scores: {
      const auto qm = t.stage(t.has(al::Stage::QRot) ? al::Stage::QRot : al::Stage::Q).matrix(bh);
      const auto km = t.stage(t.has(al::Stage::KRot) ? al::Stage::KRot : al::Stage::K).matrix(bkv);
      double sum = 0;
      for (Index r = 0; r < d.d_k; ++r) sum += printed(qm(q.row, r)) * printed(km(q.col, r));
      return sum;
    }
    case al::Stage::Scaled:
      REQUIRE(s.config.scale.mode == al::ScaleMode::SqrtDk);
      return printed(t.stage(al::Stage::Scores).matrix(bh)(q.row, q.col)) / std::sqrt(static_cast<double>(d.d_k));
    case al::Stage::Weights: {
      const auto row = t.stage(al::Stage::Masked).matrix(bh).row(q.row);
      double top = -INFINITY, sum = 0;
      for (Index j = 0; j < d.len_kv; ++j) top = std::max(top, printed(row(j)));
      for (Index j = 0; j < d.len_kv; ++j) sum += std::exp(printed(row(j)) - top);
      return std::exp(printed(row(q.col)) - top) / sum;
    }
    case al::Stage::Context: {
      REQUIRE_FALSE(s.config.dropout.active());
      const auto w = t.stage(al::Stage::Weights).matrix(bh);
      const auto v = t.stage(al::Stage::V).matrix(bkv);
      double sum = 0;
      for (Index j = 0; j < d.len_kv; ++j) sum += printed(w(q.row, j)) * printed(v(j, q.col));
      return sum;
    }
    default: {  // output: the concatenation times W_O, plus b_O
      const auto concat = t.stage(al::Stage::Concat).matrix(q.batch);
      double sum = s.config.bias && s.weights.b_o ? printed(s.weights.b_o->data[size_t(q.col)]) : 0.0;
      for (Index c = 0; c < d.d_model; ++c) sum += printed(concat(q.row, c)) * printed(s.weights.w_o->matrix(0)(c, q.col));
      return sum;
    }
  }
}
}  // namespace

TEST_CASE("quiz: an answer worked out from the printed inputs counts, and is what the loop gives") {
  int beyond_tolerance = 0;  // questions where the screen's value is outside the exact value's tolerance
  for (const std::string preset : {"default", "causal-decoder", "padded-batch", "llama-block", "cross-attention",
                                   "alibi-6-heads", "mistral-window"}) {
    CAPTURE(preset);
    auto session = al::load_preset(preset);
    REQUIRE(session);
    auto trace = al::compute(*session);
    REQUIRE(trace);
    int values = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      auto q = al::make_quiz_question(**trace, *session, seed, al::QuizHide::Cell);
      REQUIRE(q);
      const std::string stage = al::stage_name(q->stage);
      CAPTURE(stage);
      ++values;
      const double by_loop = shown_by_loop(**trace, *session, *q);
      CHECK(q->shown_answer == doctest::Approx(by_loop).epsilon(1e-9).scale(1.0));
      const double typed = std::round(by_loop * 100.0) / 100.0;  // the learner types two decimals
      CHECK(al::check_quiz_value(*q, typed));
      if (!al::quiz_value_matches(q->answer, typed)) ++beyond_tolerance;
    }
    CHECK(values == 300);
  }
  // Without the shown answer these right workings would have been marked wrong.
  CHECK(beyond_tolerance > 20);
  MESSAGE("answers from the screen outside the exact value's tolerance: " << beyond_tolerance << " of 2100");
}
