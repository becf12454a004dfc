// Quiz: questions come from the trace (same seed, same question), ask about
// finite unmasked cells, and answers are checked with the stated tolerance.
#include <doctest/doctest.h>

#include <cmath>

#include "labs.hpp"
#include "quiz.hpp"
#include "session_io.hpp"

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
      auto q = al::make_quiz_question(t, seed);
      REQUIRE(q);
      auto again = al::make_quiz_question(t, seed);
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
        CHECK_FALSE(al::check_quiz_value(*q, q->answer + 0.03 + 0.02 * std::abs(q->answer)));
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
  auto trace = al::compute(al::mask_fill_example());  // −∞ fill: row 0 is NaN
  REQUIRE(trace);
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    auto q = al::make_quiz_question(**trace, seed);
    REQUIRE(q);
    CHECK(q->row != 0);
  }
}
