#pragma once
// Internal to the core: what the views show of a per-head stage besides its matrices, computed
// with the trace on the worker (ComputeOptions::summarize) so the UI thread never rescans (n, n)
// stages when a new trace arrives.
#include <memory>

#include "model/trace.hpp"

namespace al::detail {

// The views' summary of a per-head stage (B, h, R, C): the mean over heads and each matrix's
// value ranges, in one pass parallel over (batch, row block). `attend` is (B, R, C) with
// 0 = masked, or null: masked cells are left out of the ranges (not of the mean). `head_mean`
// (B, R, C), any values, receives the mean and becomes the summary's (the caller chooses where
// its buffer comes from). With `max_texels` > 0 and R or C above it, each matrix and the mean
// are also reduced to peaks (StageSummary::peaks) in the same pass, each row folded while it is
// still in cache.
StageSummary summarize_stage(const Tensor& stage, const float* attend, std::shared_ptr<Tensor> head_mean,
                             Index max_texels);

// The pass above in another compiled copy (numerics/kernel_dispatch.hpp).
struct SummaryKernels {
  decltype(&detail::summarize_stage) summarize_stage;
};

}  // namespace al::detail
