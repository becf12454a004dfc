#pragma once
// Linear (kernelised) attention, Katharopoulos et al. 2020: the softmax's
// exp(q·k) is replaced by φ(q)·φ(k) with φ(x) = elu(x) + 1 (positive), so
//   out_i = φ(q_i)·(Σ_j φ(k_j)ᵀ v_j) / (φ(q_i)·Σ_j φ(k_j))
// and the sums over keys are computed once, in O(n·d²) instead of O(n²·d).
// The n×n matrix it implies, A_ij = φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j'), is
// only built when asked for (to display it beside the softmax weights).
#include "base/error.hpp"
#include "model/session.hpp"
#include "model/trace.hpp"

namespace al {

// elu(x) + 1: x + 1 for x > 0, exp(x) otherwise.
float elu_plus_one(float x);

struct LinearAttentionResult {
  Dims dims;
  Tensor context;    // (B, h, Lq, d_k), the counterpart of the trace's Context stage
  Tensor output;     // (B, Lq, d_model): heads side by side · W_O + b_O (the concat when there is no W_O)
  Tensor attention;  // (B, h, Lq, Lk) the implicit matrix, rows sum to 1; empty unless asked for
};

// Q, K, V are projected as in the full trace. No scaling (φ absorbs it) and no
// dropout (there are no weights to drop). Key padding and causal masks are
// honoured — a masked key is left out of the sums, causal uses running sums
// over keys 0..i — and a query with no key left gives NaN (0/0). A custom mask
// cannot be applied without the n×n matrix and is refused.
Result<LinearAttentionResult> linear_attention(const Session& session, bool with_matrix);

// Exact operation counts for the dense (unmasked) computation of all B·h heads
// with d_v = d_k. A multiply-add is one a·b + c; a sum of φ(k) counts one per
// term, as a product with the ones vector.
struct OperationCounts {
  Index multiply_adds = 0;
  Index exponentials = 0;  // softmax: one exp per score; linear: one φ per element of Q and K (at most one exp)
  Index divisions = 0;     // softmax: each weight by its row sum; linear: each output by its denominator
};
struct AttentionCosts {
  OperationCounts softmax;  // QKᵀ: Lq·Lk·d_k, weights·V: Lq·Lk·d_k           — O(n²·d)
  OperationCounts linear;   // φ(K)ᵀV: Lk·d_k², φ(K)ᵀ1: Lk·d_k, φ(Q)·(φ(K)ᵀV): Lq·d_k², φ(Q)·z: Lq·d_k — O(n·d²)
};
AttentionCosts attention_costs(const Dims& dims);

namespace detail {
// linear_attention in another compiled copy (numerics/kernel_dispatch.hpp).
struct LinearKernels {
  decltype(&al::linear_attention) linear_attention;
};
}  // namespace detail

}  // namespace al
