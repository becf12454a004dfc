#pragma once
// Internal to the core: the numeric passes of one attention computation.
// Each writes into tensors the caller allocated (so the memory check happens
// before any of them runs) and can be stopped between work items.
#include <array>
#include <atomic>
#include <functional>
#include <vector>

#include "base/dropout.hpp"
#include "numerics/attention_plan.hpp"

namespace al::detail {

// Cancellation and progress reporting for a computation's passes.
struct Progress {
  const std::atomic<bool>* cancel = nullptr;
  const std::function<void(float)>* report = nullptr;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  void operator()(float fraction) const {
    if (report && *report) (*report)(fraction);
  }
};

// Q, K, V in head layout (B, h, L, d_k) for each non-null target. Heads are
// contiguous column blocks of d_model, as PyTorch's view(B, L, h, d_k).transpose(1, 2).
// Column blocks of one weight applied to one input (fused W_qkv) are computed as
// a single GEMM and then split.
//
// `previous[i]`, when set, is the previous trace's input and output for target
// i computed with the same weight, bias and column block: input rows equal to the
// previous input's are copied from the previous output instead of multiplied again
// (bit for bit the same: each row's projection is the same chain of multiply-adds),
// so editing one cell of X recomputes one row, not all of them.
struct PreviousProjection {
  const Tensor* input = nullptr;   // (B, L, d_model)
  const Tensor* output = nullptr;  // (B, h, L, d_k)
};
void project_heads(const Plan& plan, const std::array<Tensor*, 3>& targets, const Progress& progress,
                   const std::array<PreviousProjection, 3>& previous = {});

// Q (B, h, Lq, d_k), K and V (B, h_kv, Lk, d_k) as the scores read them: projected
// from x (plus sinusoidal positions), Q and K rotated with RoPE. For the labs'
// computations that do not keep a trace (FlashAttention, linear attention).
void project_for_scores(const Plan& plan, Tensor& q, Tensor& k, Tensor& v);

// (B, Lq, Lk): 1 where the query may attend the key (attends()), 0 where it is masked.
Tensor combined_mask(const Plan& plan);

// (B, Lq): 1 where every key of the query's row is masked.
std::vector<unsigned char> fully_masked_rows(const Tensor& mask);

// Above this many keys the per-head pass computes Q·Kᵀ with K packed once, swept a tile of
// rows at a time (numerics/panel_gemm.hpp, multiply_panels_scaled); up to it with Eigen's GEMM
// per block of rows. One threshold for every kernel copy, so that they give the same bits.
// Measured on Zen 4 (docs/performance.md, issue 16's twenty-second pass), with the sweep's
// scores streamed past the caches: at 2048 keys the sweep 3 % faster in the AVX-512 copy and
// 2 % in the AVX2 one, at 1024 from 4 % faster to 4 % slower; at 2560-4096 1-12 % faster (the
// eighth pass). On an Intel Xeon (twenty-eighth pass), where Eigen's GEMM runs AVX2's 8-lane
// packets and the sweep 16-lane ones at twice the rate, the whole trace 20 % faster at 1024
// keys and 9 % at 512 in the AVX-512 copy, 4-5 % in the AVX2 one; at 256 no faster.
constexpr Index kSweepAboveKeys = 256;

// The (Lq, Lk) stages from scores to dropped, then the context, for every
// (batch, head). A stage whose `out` is null is not computed: it is reused from
// a previous trace or shared with the stage before it, and only read from `in`.
// A `dropped` stage (not kept, ComputeOptions::keep) has neither: it is computed
// into per-thread rows of a block, or, with `same_as` (0 scores … 5 dropped), is
// the rows of the earlier stage it equals.
struct StageBuffers {
  const float* in = nullptr;
  float* out = nullptr;
  bool fresh_pages = false;  // out is new memory: each block faults its pages in before writing them
  bool dropped = false;
  int same_as = -1;
};
struct HeadPass {
  const Tensor* q = nullptr;  // (B, h, Lq, d_k), rotated with RoPE
  const Tensor* k = nullptr;  // (B, h_kv, Lk, d_k), rotated with RoPE
  const Tensor* v = nullptr;  // (B, h_kv, Lk, d_k)
  const float* mask = nullptr;  // (B, Lq, Lk) or null for no mask
  // Each (B, h, Lq, Lk). Without ALiBi, biased.in is scaled.in and biased.out null.
  StageBuffers scores, scaled, biased, masked, weights, dropped;
  float* row_max = nullptr;   // (B, h, Lq), written together with weights
  float* row_sum = nullptr;   // (B, h, Lq)
  float* context = nullptr;   // (B, h, Lq, d_k), null if not recomputed
  // (B, Lq, d_model): the context's rows copied in, heads side by side, as concat_heads does,
  // while they are in cache and on both threads; null to leave that to concat_heads.
  float* concat = nullptr;
  // The checks of the weights computed here (rows not fully_masked (B, Lq)), merged into *checks.
  const unsigned char* fully_masked = nullptr;
  TraceChecks* checks = nullptr;
};
// Reports progress from `from` to `to`.
void run_heads(const Plan& plan, const HeadPass& pass, const Progress& progress, float from, float to);

// (B, h, Lq, d_k) -> (B, Lq, d_model): heads side by side.
void concat_heads(const Dims& dims, const Tensor& context, Tensor& concat);

// c = a · b (+ bias on every row): a (..., k) as rows of k, b (k, n), c (..., n), in blocks of
// rows over the thread team (base/thread_team), with b packed once while it lives (numerics/panel_gemm.hpp).
// Progress from `from` to `to`.
void multiply_rows(const Tensor& a, const TensorPtr& b, const Tensor* bias, Tensor& c, const Progress& progress = {},
                   float from = 0.0f, float to = 0.0f);

// output = concat · W_O + b_O, (B, Lq, d_model).
void project_output(const Plan& plan, const Tensor& concat, Tensor& output, const Progress& progress);

// The GEMM-heavy passes above in another compiled copy (numerics/kernel_dispatch.hpp).
struct TraceKernels {
  decltype(&detail::project_heads) project_heads;
  decltype(&detail::run_heads) run_heads;
  decltype(&detail::multiply_rows) multiply_rows;
};

}  // namespace al::detail
