#pragma once
// The quiz: questions about one cell of the current trace (the learner computes
// the value) or about a query's favourite key (the argmax of its weights).
// Either the whole stage asked about is hidden, or only the asked cell (the
// rest of the stage stays visible: a row of weights that must sum to 1, the
// scores beside it, ...).
#include <cstdint>
#include <optional>
#include <string>

#include "model/session.hpp"
#include "model/trace.hpp"

namespace al {

enum class QuizKind {
  Value,   // type the value of stage[batch, head, row, col]
  Argmax,  // pick the key query `row` of `head` attends to most
};

enum class QuizHide {
  Stage,  // the stage asked about is not on screen: value and argmax questions
  Cell,   // only the asked cell is covered: value questions only
};

struct QuizQuestion {
  QuizKind kind = QuizKind::Value;
  Stage stage = Stage::Weights;  // Value: the stage asked about; Argmax: Weights
  Index batch = 0, head = 0, row = 0, col = 0;  // head is 0 for Concat/Output
  float answer = 0;    // Value: the trace's value of the cell
  // Value: the same cell worked out from its inputs as the heatmaps print them (two decimals):
  // what a learner computes from the screen. A context cell sums Lk rounded products, so it can
  // be further from `answer` than the tolerance (the default example's head 1, row 0, column 2:
  // −0.0612 from the screen, −0.0452 exact).
  double shown_answer = 0;
  Index answer_key = 0;  // Argmax: the key with the largest weight
};

// Relative 1e-2 or absolute 1e-2, whichever is looser: a learner rounds.
bool quiz_value_matches(double expected, double typed);

// A value as a heatmap cell prints it (cell_value_text compact, lab_numbers.hpp), read back
// as a number; ±∞ and NaN as they are.
double value_as_shown(float v);

// A question about `trace` (computed from `session`, whose W_O and b_O the output's
// shown_answer reads) drawn from `seed` (same seed, same question). The
// cell is finite, unmasked and not in a fully masked row; an argmax question
// picks a row whose best key leads the runner-up by at least 0.02, so it has
// one right answer. With QuizHide::Cell every question is a Value question.
// Nullopt when the trace offers no such cell.
std::optional<QuizQuestion> make_quiz_question(const Trace& trace, const Session& session, std::uint64_t seed,
                                               QuizHide hide = QuizHide::Stage);

// Whether the learner's answer is right: a typed value within the tolerance of the answer
// or of the shown answer, or the key with the largest weight.
bool check_quiz_value(const QuizQuestion& question, double typed);
bool check_quiz_key(const QuizQuestion& question, Index key);

}  // namespace al
