#pragma once
// The steps a learner walks through, in the order of the pipeline:
// X → Q/K/V → QKᵀ → ÷√d_k → mask → softmax → dropout → ·V → concat → W_O → output.
// Each step names the trace stage it produces; its texts live in assets/i18n
// under "step.<id>.*".
#include <optional>
#include <string>

#include "trace.hpp"

namespace al::gui {

enum class Step { X, Qkv, Scores, Scaled, Masked, Weights, Dropped, Context, Concat, WO, Output };
constexpr int kStepCount = 11;

struct StepInfo {
  Step step;
  const char* id;        // "scores"; i18n keys step.<id>.title / .explain
  const char* timeline;  // the label on the timeline strip (language-neutral math)
  const char* formula;   // Unicode math
};

const StepInfo& step_info(Step step);
inline const StepInfo& step_info(int index) { return step_info(static_cast<Step>(index)); }

// Accepts a step id ("qkv", "w_o") or a trace stage name ("q", "weights", "output").
std::optional<Step> step_from_name(const std::string& name);

}  // namespace al::gui
