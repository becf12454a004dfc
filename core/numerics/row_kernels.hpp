#pragma once
// The softmax's row kernels: the trace's per-head pass (numerics/attention_kernels.cpp) and
// FlashAttention. Written with Eigen's packet functions on unaligned loads, so every element
// goes through the same vector code wherever the row sits in memory: incremental recompute
// must equal a fresh computation bit for bit. Compiled in each kernel copy
// (numerics/kernel_dispatch.hpp).
#include "base/tensor.hpp"

namespace al::detail {

// out = exp(in - max) over a row of n values, with exactly 0 where the true
// value underflows (a masked -inf cell); returns the sum. in == out is allowed.
float exp_shifted(const float* in, float* out, Index n, float max);

// The largest value of a row (NaNs left out).
float row_max(const float* in, Index n);

// scaled = scores · scale and, when `masked` is set, masked = scaled where `attend` is not 0
// and `fill` where it is, in one pass that also returns the largest value of the row the
// softmax reads (masked, else scaled): the same value row_max would give.
float scale_and_mask_row(const float* scores, float scale, float* scaled, const float* attend, float fill,
                         float* masked, Index n);

// Stable softmax of one row: out = exp(in - max) · (1 / sum), keeping max and sum; `max` is the
// row's largest value. A row of -inf (every key masked with -inf fill) gives NaN, as PyTorch
// does. Returns Σ out, the row sum the trace's checks report, while the row is in L1:
// a second pass over the weights would read the whole (B, h, Lq, Lk) stage again.
double softmax_row(const float* in, float max, float* out, Index n, float* max_out, float* sum_out);

}  // namespace al::detail
