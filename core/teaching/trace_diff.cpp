#include "teaching/trace_diff.hpp"

#include <cmath>

namespace al {

namespace {

std::string dims_string(const Dims& d) {
  return "B=" + std::to_string(d.batch) + ", heads=" + std::to_string(d.heads) + ", Lq=" +
         std::to_string(d.len_q) + ", Lk=" + std::to_string(d.len_kv) + ", d_model=" + std::to_string(d.d_model);
}

StageDiff diff_stage(const Tensor& before, const Tensor& after) {
  StageDiff diff;
  Tensor difference(after.shape);
  diff.cells = after.size();
  for (Index k = 0; k < after.size(); ++k) {
    const float a = before.data[static_cast<size_t>(k)], b = after.data[static_cast<size_t>(k)];
    const bool same = a == b || (std::isnan(a) && std::isnan(b));
    if (same) continue;  // difference stays 0
    ++diff.changed;
    const float delta = b - a;  // NaN when either side is NaN or ∞ changed
    difference.data[static_cast<size_t>(k)] = std::isfinite(delta) ? delta : std::nanf("");
    if (std::isfinite(delta)) diff.max_abs = std::max(diff.max_abs, static_cast<double>(std::fabs(delta)));
    else ++diff.non_finite;
  }
  diff.difference = make_tensor(std::move(difference));
  return diff;
}

}  // namespace

Result<TraceDiff> diff_traces(const Trace& before, const Trace& after) {
  const Dims& a = before.dims;
  const Dims& b = after.dims;
  if (a.batch != b.batch || a.heads != b.heads || a.len_q != b.len_q || a.len_kv != b.len_kv ||
      a.d_model != b.d_model)
    return Error{ErrorCode::ShapeMismatch,
                 "the snapshot has " + dims_string(a) + " but the current trace has " + dims_string(b) +
                     ": a diff needs the same sizes (take a new snapshot)",
                 {}};
  TraceDiff diff;
  for (Stage s : kAllStages) {
    const int k = static_cast<int>(s);
    if (!before.has(s) || !after.has(s)) continue;  // an option on in one trace only: nothing to compare
    // Shared stage pointers are unchanged by construction.
    if (before.stages[k] == after.stages[k]) {
      diff.stages[k].difference = make_tensor(Tensor(after.stages[k]->shape));
      diff.stages[k].cells = after.stages[k]->size();
      continue;
    }
    diff.stages[k] = diff_stage(*before.stages[k], *after.stages[k]);
  }
  return diff;
}

}  // namespace al
