#pragma once
// Turning a Session into a Trace.
#include <atomic>
#include <functional>
#include <memory>

#include "error.hpp"
#include "trace.hpp"

namespace al {

struct ComputeOptions {
  // Refuse sessions whose trace would need more bytes than this; 0 = default
  // (a safe share of the machine's physical memory, see default_memory_limit()).
  Index memory_limit_bytes = 0;
  // Set by another thread to abandon the computation (returns ErrorCode::Cancelled).
  const std::atomic<bool>* cancel = nullptr;
  // Called with a fraction in [0, 1] as stages complete (from the computing thread).
  std::function<void(float)> progress;
};

Index default_memory_limit();

// Validates the session (shapes, heads, masks) without computing anything.
std::optional<Error> validate(const Session& session);

// Bytes the trace of this session would hold; validates first.
Result<Index> estimate_trace_bytes(const Session& session);

// Full computation. When `previous` is given together with the session it was
// computed from, stages whose inputs are unchanged (same pointers, same config
// fields) are reused instead of recomputed.
Result<std::shared_ptr<const Trace>> compute(const Session& session,
                                             const ComputeOptions& options = {},
                                             const Session* previous_session = nullptr,
                                             std::shared_ptr<const Trace> previous = nullptr);

// The deterministic keep/drop decision for one weight (so a view can explain a
// dropped cell without the trace storing a keep mask): flat index into (B,h,Lq,Lk).
bool dropout_keeps(std::uint64_t seed, double p, Index flat_index);

}  // namespace al
