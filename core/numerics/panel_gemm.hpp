#pragma once
// C = A · B for row-major float matrices, with B packed once into column panels and A read
// in place: the projections' GEMMs and the per-head ·V. Eigen's GEMM packs both operands at
// every call, and packing the weights was 14 % of a trace at L = 64 (16 % with the input); a
// weight is the B of every row block of every trace of a session, so it is packed once while
// it lives, and V once per head. QKᵀ uses it only above kSweepAboveKeys keys
// (multiply_panels_scaled, numerics/attention_kernels.hpp): below, Eigen's GEMM on a block of
// scores was no slower. A weight's first product at a learner's length reads it in place instead
// (pack_weight_blocks). Compiled in each kernel copy (numerics/kernel_dispatch.hpp): the
// layout is the same in every copy, the packets and register tiles are the copy's.
//
// Every C element is one chain of fused multiply-adds over p = 0 … k−1 in order, whatever
// the row or column blocking (fused where the copy has FMA): the same inputs give the same
// bits on every call.
#include <memory>
#include <vector>
#include "base/tensor.hpp"

namespace al::detail {

// Columns per panel: two AVX2 packets, four SSE ones.
constexpr Index kPanelWidth = 16;

// B (k, n) as ceil(n / kPanelWidth) panels of (k, kPanelWidth), row after row, zero past n;
// or B read in place (`source`, rows `source_stride` apart, n a multiple of kPanelWidth): panel j
// is then columns [j · kPanelWidth, (j + 1) · kPanelWidth) of B's rows, with no copy.
struct PanelMatrix {
  Index k = 0, n = 0;
  FloatBuffer data;
  const float* source = nullptr;
  Index source_stride = 0;

  const float* panel(Index j) const { return (source ? source : data.data()) + j * panel_stride(); }
  // Floats from one panel to the next.
  Index panel_stride() const { return source ? kPanelWidth : k * kPanelWidth; }
  // Floats from one row of a panel to the next.
  Index row_stride() const { return source ? source_stride : kPanelWidth; }
};

// B (k, n), rows ldb apart, as panels read in place; n a multiple of kPanelWidth. It must
// outlive the view.
PanelMatrix panels_in_place(const float* b, Index ldb, Index k, Index n);

// Packs B (k, n), row stride ldb, into `out` (its buffer is reused when large enough).
void pack_panels(const float* b, Index ldb, Index k, Index n, PanelMatrix& out);

// Packs B (k, n) given as its transpose bt (n, k), row stride ldbt: K (Lk, d_k) as the B of Q·Kᵀ.
void pack_panels_transposed(const float* bt, Index ldbt, Index k, Index n, PanelMatrix& out);

// C (m, b.n) = A (m, b.k) · B; A and C row-major with row strides lda and ldc.
void multiply_panels(const float* a, Index lda, Index m, const PanelMatrix& b, float* c, Index ldc);

// Columns [first, first + n) of A (m, b.k) · B, where C is cut into blocks of `block_width`
// columns, block s at c + s · block_stride with rows ldc apart: a projection's (L, heads · d_k)
// written straight into the (heads, L, d_k) layout the trace keeps, instead of through a copy.
// `first` is a multiple of kPanelWidth, as is n unless first + n == b.n, and `block_width`
// too unless it is at least n (one block); the bits are multiply_panels' whatever the blocks.
// With `accumulate`, C += A · B: each element's chain goes on from C's value (a sum of
// products with several B, as the backward pass's dX = Σ dP_i · W_iᵀ).
void multiply_panel_columns(const float* a, Index lda, Index m, const PanelMatrix& b, Index first, Index n, float* c,
                            Index ldc, Index block_width, Index block_stride, bool accumulate = false);

// The packed form of the column block [column, column + width) of a weight (d, n), kept
// while the weight lives and reused by every product with it: a session's weights stay the
// same across most edits. With `transposed`, the block's transpose (width, d) instead: the
// B of the backward pass's dX = dP · Wᵀ. Packs on a miss; safe from any thread.
std::shared_ptr<const PanelMatrix> packed_weight(const TensorPtr& weight, Index column, Index width,
                                                 bool transposed = false);
// The same, only if it is packed already; else null (also for a block read in place once).
std::shared_ptr<const PanelMatrix> find_packed_weight(const TensorPtr& weight, Index column, Index width,
                                                      bool transposed = false);

// A column block of a weight and its packed form.
struct WeightBlock {
  TensorPtr weight;  // null: nothing to pack (direct mode)
  Index column = 0, width = 0;
  std::shared_ptr<const PanelMatrix> packed;
};

// A's rows up to which a weight's first product reads it in place (pack_weight_blocks).
constexpr Index kInPlaceRows = 256;

// Fills every block's `packed`, packing those not packed yet (a new session, an edited
// weight) across the thread team when `parallel`. Hits are looked up on this thread: a
// parallel pass costs a hand-over to the other thread even when it is awake. A block of
// whole panels that has never been used is read in place instead when A has at most
// kInPlaceRows `rows`, and packed at its next use: a session's first trace (a fresh
// process's only one) at a learner's length spent more on packing than the packing saved
// (docs/performance.md, twelfth pass). The bits are the same either way.
void pack_weight_blocks(std::vector<WeightBlock>& blocks, Index rows, bool parallel);

// Q·Kᵀ with K packed once: C (m, b.n) = A (m, b.k) · B, one sweep over B for each tile of rows,
// so each row of C is written whole from registers (no zeroing first). With `scaled` (for a
// softmax with no mask or bias before it) also scaled = C · scale and row_max[i] = the largest
// value of scaled's row i, NaNs left out as in row_max (numerics/row_kernels.hpp), -inf for an
// empty row: no second pass to scale; then C's whole panels are streamed past the caches where
// C and ldc keep them 64-byte aligned (C is not read again by the pass). Rows ldc apart in C
// and scaled. Each C element is multiply_panels' chain, so the same bits.
void multiply_panels_scaled(const float* a, Index lda, Index m, const PanelMatrix& b, float scale, float* c,
                            float* scaled, Index ldc, float* row_max);

}  // namespace al::detail
