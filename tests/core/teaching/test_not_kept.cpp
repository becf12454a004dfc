// Teaching on a trace that kept only some (B, h, Lq, Lk) stages (ComputeOptions::keep):
// explain_cell says which input stage was dropped instead of reading a missing tensor,
// and explains a cell whose input was kept; the quiz asks only about stages the trace has;
// a step's text leaves out numbers measured on a stage that was not kept.
#include <doctest/doctest.h>

#include "i18n_tables.hpp"
#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/explain.hpp"
#include "teaching/quiz.hpp"
#include "teaching/stage_text.hpp"

using namespace al;
using al::testing::lookup_in;

namespace {

std::shared_ptr<const Trace> lean_trace(const Session& s, StageSet keep) {
  ComputeOptions options;
  options.keep = keep;
  auto r = compute(s, options);
  REQUIRE(r.ok());
  return *r;
}

std::string not_kept_of(const Error& e) {
  for (const auto& [key, value] : e.params)
    if (key == "not_kept") return value;
  return "";
}

}  // namespace

TEST_CASE("explain: a cell whose input stage was not kept says which, a kept one is explained") {
  auto s = load_preset("causal-decoder");
  REQUIRE(s.ok());
  const auto lean = lean_trace(*s, stage_set({Stage::Weights}));
  auto weights = explain_cell(*lean, *s, CellAddress{Stage::Weights, 0, 0, 2, 1});
  REQUIRE_FALSE(weights.ok());
  CHECK(not_kept_of(weights.error()) == "masked");
  // The average over heads reads only the weights: explained.
  CHECK(explain_cell(*lean, *s, CellAddress{Stage::Weights, 0, -1, 2, 1}).ok());
  // Context reads the dropped weights, which are the weights without dropout: kept with them.
  CHECK(explain_cell(*lean, *s, CellAddress{Stage::Context, 0, 0, 2, 1}).ok());

  const auto with_masked = lean_trace(*s, stage_set({Stage::Weights, Stage::Masked}));
  auto kept = explain_cell(*with_masked, *s, CellAddress{Stage::Weights, 0, 0, 2, 1});
  REQUIRE(kept.ok());
  CHECK(kept->value == with_masked->stage(Stage::Weights).matrix(0)(2, 1));
}

TEST_CASE("explain: with ALiBi the mask reads the biased scores even when they were not kept") {
  auto s = load_preset("alibi-6-heads");
  REQUIRE(s.ok());
  const auto lean = lean_trace(*s, stage_set({Stage::Weights, Stage::Masked}));
  CHECK(lean->before_mask() == Stage::Biased);  // not the scaled scores the trace still has
  CHECK_FALSE(lean->has(Stage::Biased));
  auto masked = explain_cell(*lean, *s, CellAddress{Stage::Masked, 0, 1, 1, 0});
  REQUIRE_FALSE(masked.ok());
  CHECK(not_kept_of(masked.error()) == "biased");
}

TEST_CASE("quiz: a lean trace gets questions only about the stages it kept, with their values") {
  auto s = load_preset("causal-decoder");
  REQUIRE(s.ok());
  const auto lean = lean_trace(*s, stage_set({Stage::Weights}));
  REQUIRE_FALSE(lean->has(Stage::Scores));
  int asked = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto q = make_quiz_question(*lean, *s, seed, QuizHide::Stage);
    if (!q) continue;
    ++asked;
    REQUIRE(lean->has(q->stage));
    CHECK(q->stage != Stage::Scores);
    CHECK(q->stage != Stage::Scaled);
  }
  CHECK(asked == 60);
}

TEST_CASE("step text: the scaling step's measured variances need the scores; without them, no numbers") {
  auto s = load_preset("causal-decoder");
  REQUIRE(s.ok());
  const auto lean = lean_trace(*s, stage_set({Stage::Weights}));
  for (bool chinese : {false, true}) {
    const StepText text = step_text(Step::Scaled, *s, lean.get(), lookup_in(chinese), chinese);
    CHECK(text.numbers.empty());
    CHECK_FALSE(text.formula.empty());
  }
  const auto with_scores = lean_trace(*s, stage_set({Stage::Weights, Stage::Scores}));
  CHECK_FALSE(step_text(Step::Scaled, *s, with_scores.get(), lookup_in(false), false).numbers.empty());
}
