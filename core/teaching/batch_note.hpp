#pragma once
// A sentence for the batch item on screen when the step's text describes what only other
// items show: padded-batch's item 0 has no padding, so "hatched cells are masked" finds no
// hatched cell there; seed 004's item 0 loses no weight to dropout.
#include <string>

#include "model/trace.hpp"
#include "teaching/stage_text.hpp"

namespace al {

// Empty unless `step` is the mask or dropout step and item `batch` of `trace` has no masked
// cell (no dropped weight) while other items have: then which items do, and how to show one.
std::string batch_item_note(Step step, const Trace& trace, Index batch, const TextLookup& lookup);

}  // namespace al
