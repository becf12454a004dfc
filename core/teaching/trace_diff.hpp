#pragma once
// Snapshot and diff: what one edit changed, stage by stage, so a learner sees
// how far it travels (editing V leaves the scores and weights untouched).
#include <array>

#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct StageDiff {
  TensorPtr difference;  // after − before, same shape as the stage; 0 where equal
  Index changed = 0;     // cells that differ
  Index cells = 0;       // cells of the stage
  double max_abs = 0;    // largest finite |after − before|
  Index non_finite = 0;  // changed cells whose difference is no number (to or from ±∞ or NaN)
};

struct TraceDiff {
  std::array<StageDiff, kStageCount> stages;
  const StageDiff& stage(Stage s) const { return stages[static_cast<int>(s)]; }
};

// Cells compare equal when both are the same value, both NaN or the same
// infinity (their difference is then 0, not NaN). A cell that became or
// stopped being NaN/∞ counts as changed and its difference is NaN. Traces of
// different dims are refused with a message naming both.
Result<TraceDiff> diff_traces(const Trace& before, const Trace& after);

}  // namespace al
