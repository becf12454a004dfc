#pragma once
// Turning a Session into a Trace.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "base/dropout.hpp"  // dropout_keeps: part of what compute() means
#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct ComputeOptions {
  // Refuse sessions whose trace would need more bytes than this; 0 = default
  // (a safe share of the machine's physical memory, see default_memory_limit()).
  Index memory_limit_bytes = 0;
  // Set by another thread to abandon the computation (returns ErrorCode::Cancelled).
  const std::atomic<bool>* cancel = nullptr;
  // Called with a fraction in [0, 1] as stages complete (from the computing thread).
  std::function<void(float)> progress;
  // Also fill Trace::summaries (head means and value ranges of every per-head
  // stage, one parallel pass over each distinct recomputed stage). Off in the
  // benchmarks against PyTorch, on in the app.
  bool summarize = false;
  // With summarize, also reduce the per-head stages of `peak_stages` that have more rows or
  // columns than `peak_texels` to blocks of cells (StageSummary::peaks): the app passes its
  // heatmaps' texture side and the stages its view shows. Summarizing a stage takes about twice
  // as long with its peaks (docs/performance.md), so only those are reduced. 0: none.
  Index peak_texels = 0;
  StageSet peak_stages;
  // The (B, h, Lq, Lk) stages to keep (kSquareStages); unset keeps every stage. The others
  // are computed a block of rows at a time and not kept: absent from the trace
  // (Trace::has false), so a session too large to keep whole can still show what one view
  // needs. A stage equal to a kept one (scaled = scores when the scale is 1, ...) is kept
  // with it. Stages of other shapes are always kept.
  std::optional<StageSet> keep;
};

Index default_memory_limit();

// What a session means (checked by validate, applied by compute):
// - Inputs (x, x_kv, q, k, v) are (B, L, d_model), or (L, d_model) meaning B = 1.
//   Direct-mode self attention needs Lk == Lq; cross attention allows Lk != Lq.
// - Heads are contiguous column blocks of d_model (PyTorch's view + transpose).
// - config.bias = true requires every bias of the weights in use (b_q/b_k/b_v or
//   b_qkv, and b_o with w_o); bias = false ignores any biases present.
// - Masks: 1 attends, 0 masks; any value other than 0 (even NaN) attends, as the
//   seeds' masked_fill(mask == 0, fill). Causal is torch.ones(Lq, Lk).tril().
//   key_padding is (B, Lk), or (Lk) when B = 1. Masks combine with AND.
// - mask_fill is stored as float (so -1e40 becomes -inf); NaN is refused.
// - Dropout p must be in [0, 1); it acts only when training and p > 0.

// Validates the session (shapes, heads, masks) without computing anything.
std::optional<Error> validate(const Session& session);

// Bytes the trace of this session would hold (keeping only `keep`'s square stages when
// given, as ComputeOptions::keep); validates first.
Result<Index> estimate_trace_bytes(const Session& session, const std::optional<StageSet>& keep = std::nullopt);

// Full computation. When `previous` is given together with the session it was
// computed from, stages whose inputs are unchanged (same pointers, same config
// fields) are reused instead of recomputed.
Result<std::shared_ptr<const Trace>> compute(const Session& session,
                                             const ComputeOptions& options = {},
                                             const Session* previous_session = nullptr,
                                             std::shared_ptr<const Trace> previous = nullptr);

// Pays, ahead of time, what a process's first computation would: starting the thread team,
// faulting in the kernels' code and Eigen's first GEMM (its cache-size query), and, for as long
// as `session_loading` returns true, up to kWarmHeapBytes, growing the allocator's heap over
// pages already touched (and kept: stages under 32 MiB and packed weights come back from it
// without page faults). It computes and drops a small trace. The command line runs it on the
// computing thread while the session loads on another, so a learner who opens a file waits for
// the computation, not for the warm-up; once the session is there, the warm-up stops within a
// chunk of 256 KiB.
// The first trace's stages at d_model 512, 8 heads take 1.1, 3 and 9 MiB at L = 64, 128 and 256
// (its weights are read in place up to 256 rows, numerics/panel_gemm.hpp; from 512 on they are
// packed too, 4 MiB). More, faulted in while the session loads, slowed the load as much as it
// sped up the computation: the two cores faulting pages in at once (48 MiB made the whole command
// 24 % slower at L = 128, docs/performance.md).
constexpr Index kWarmHeapBytes = Index{8} << 20;
void warm_up(const std::function<bool()>& session_loading = [] { return false; });

// compute() recycles the buffers of freed (B, h, Lq, Lk)-sized stages for the
// next trace of the same sizes (no page faults, no zero-fill: the app recomputes
// the same sizes edit after edit). At most one trace's worth is kept, and buffers
// of sizes the next computation does not need are freed when it starts. This
// frees all of them now (tests of memory, benchmarks of a cold start).
void release_recycled_stage_buffers();

}  // namespace al
