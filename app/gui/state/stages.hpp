#pragma once
// The steps a learner walks through, in the order of the pipeline:
// X → Q/K/V → QKᵀ → scale → mask → softmax → dropout → ·V → concat → W_O → output.
// The steps and their texts (title, timeline label, formula, explanation) are
// composed in core/teaching/stage_text.hpp from the session, so they can be
// tested without a window; their templates live in assets/i18n under "step.<id>.*".
#include "teaching/stage_text.hpp"

namespace al::gui {

using al::kStepCount;
using al::Step;
using al::step_from_name;
using al::step_id;

}  // namespace al::gui
