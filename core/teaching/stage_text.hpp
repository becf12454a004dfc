#pragma once
// What each step of the walk-through says about the session on screen: its
// title, timeline label, formula, numbers and explanation. The sentences come
// from translation templates (key -> text with {name} placeholders, looked up
// by the caller: the app's I18n, or a test's table) and branch on the session
// (cross or self attention, direct mode, bias, the scale in use, the mask fill,
// dropout) and on the trace's numbers, so that no claim is printed where the
// session makes it false. No GUI here: the tests render every step of every
// preset in both languages and check the claims against the trace.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/trace.hpp"

namespace al {

// The steps a learner walks through. Enumerator values are stable indices; the
// order of the pipeline is kStepOrder. Positions, Rope and Alibi exist only when
// the session's positional option asks for them (step_present).
enum class Step { X, Qkv, Scores, Scaled, Masked, Weights, Dropped, Context, Concat, WO, Output,
                  Positions, Rope, Alibi };
constexpr int kStepCount = 14;
constexpr Step kStepOrder[kStepCount] = {Step::X,      Step::Positions, Step::Qkv,     Step::Rope,
                                         Step::Scores, Step::Scaled,    Step::Alibi,   Step::Masked,
                                         Step::Weights, Step::Dropped,  Step::Context, Step::Concat,
                                         Step::WO,     Step::Output};
// Whether `session` has this step: x + PE with sinusoidal positions (projection
// mode), the rotation with RoPE, the bias with ALiBi; every other step always.
bool step_present(Step step, const Session& session);
// The steps of `session` in pipeline order.
std::vector<Step> steps_of(const Session& session);

const char* step_id(Step step);  // "x", "qkv", ..., "w_o": i18n keys step.<id>.*
// Accepts a step id ("qkv", "w_o") or a trace stage name ("q", "weights", "output").
std::optional<Step> step_from_name(const std::string& name);

using TextParams = std::vector<std::pair<std::string, std::string>>;
// Replaces {name} by its value, and {name:one|other} by `one` when that value is "1", else by
// `other` (English plurals); returns false if a placeholder had no value.
bool substitute(std::string* text, const TextParams& params);

// The template of a translation key in the reader's language.
using TextLookup = std::function<std::string(const std::string& key)>;

struct StepText {
  std::string title;     // "Scaling by √d_k", "No scaling", ...
  std::string timeline;  // short, language-neutral: "÷√d_k", "×1", "×0.5"
  std::string formula;   // Unicode math of this session
  std::string numbers;   // this session's numbers (empty for most steps)
  std::string explain;   // the sentences, in the reader's language
};

// Every text of `step` for `session`; `trace` (computed from `session`, may be
// null) supplies the measured numbers. `chinese` joins sentences without a space.
StepText step_text(Step step, const Session& session, const Trace* trace, const TextLookup& lookup,
                   bool chinese);
// Only the cheap parts, for the timeline strip (no trace needed).
std::string step_title(Step step, const Session& session, const TextLookup& lookup);
// The key suffix of a text about the scaling in use: "" (÷√d_k), "_none" or "_custom".
const char* scale_key_suffix(const Session& session);
std::string step_timeline(Step step, const Session& session, const TextLookup& lookup);

// The scaled scores as this session computes them from `scores`: "QKᵀ/√d_k",
// "QKᵀ" (no scaling) or "0.5·QKᵀ" (custom factor).
std::string scaled_scores_symbol(const Session& session, const std::string& scores = "QKᵀ");
// What the softmax reads, S″: the scaled scores, minus ALiBi's penalty when it is on, through the mask
// when one hides anything: "QKᵀ/√d_k", "mask(QKᵀ/√d_k − m·|i − j|)".
std::string softmax_input_symbol(const Session& session);

// Every character the composed formulas and labels use, for the font's glyphs.
const char* step_text_glyphs();

}  // namespace al
