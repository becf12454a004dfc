#pragma once
// The numbers behind the desktop app's labs (why √d_k, mask fill values,
// softmax stability, fused QKV). Pure functions: the app only draws them.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "numerics/attention.hpp"

namespace al {

// ---- Why √d_k -------------------------------------------------------------

// Frobenius norm of the softmax Jacobian diag(α) − ααᵀ of one row of weights:
// how much the weights can still move when the scores move. It tends to 0 as
// the row saturates (one weight near 1): gradients vanish.
double softmax_jacobian_norm(const std::vector<double>& weights);
// Shannon entropy −Σ α log α in nats (0 for one-hot, log n for uniform).
double softmax_entropy(const std::vector<double>& weights);
// softmax in double, max-subtracted (the lab's statistics, not its float32 demo).
std::vector<double> softmax_double(const std::vector<double>& scores);

struct SqrtDkPoint {
  Index d_k = 0;
  double variance_raw = 0, variance_scaled = 0;        // of q·k and of q·k/√d_k
  double max_weight_raw = 0, max_weight_scaled = 0;    // mean over trials of a row's max α
  double entropy_raw = 0, entropy_scaled = 0;          // mean entropy of a row (nats)
  double jacobian_raw = 0, jacobian_scaled = 0;        // mean ‖diag(α) − ααᵀ‖_F of a row
};

struct SqrtDkOptions {
  Index max_d_k = 512;  // d_k = 1, 2, 4, ..., max_d_k
  Index keys = 16;      // n: scores per softmax row
  Index trials = 400;   // random (q, k₁..k_n) draws per d_k
  std::uint64_t seed = 1;
};

// q, k ~ N(0, 1) per component (seeded). The variance uses q·k₁ of every
// trial; the softmax statistics use the whole row q·k₁ ... q·k_n.
std::vector<SqrtDkPoint> sqrt_dk_experiment(const SqrtDkOptions& options = {});

// ---- Mask fill --------------------------------------------------------------

// The fills the lab compares: −∞, −1e9, −1e20 and seed 002's −1e-20.
std::vector<double> lab_mask_fills();

struct MaskFillResult {
  double fill = 0;  // as asked; the session stores it as float
  std::shared_ptr<const Trace> trace;  // null when the session is invalid
  std::optional<Error> error;
  Index masked_cells = 0;              // masked cells in rows that still attend somewhere
  bool masked_exactly_zero = true;     // every such cell has weight exactly 0.0f
  float max_leak = 0;                  // largest weight at such a cell
  Index fully_masked_rows = 0;         // (batch, head, query) rows with every key masked
  bool fully_masked_nan = false;       // such a row's weights are NaN
  bool fully_masked_uniform = false;   // such a row's weights are all 1/Lk
};

// Computes copies of `session` with each fill in `fills`.
std::vector<MaskFillResult> compare_mask_fills(const Session& session,
                                               const std::vector<double>& fills);

// A small example with a fully masked row: left padding plus a causal mask.
// Tokens <pad> I like cats; key 0 is padding and query 0 may only see key 0.
Session mask_fill_example();

// ---- Softmax stability (float32 on purpose) ---------------------------------

// exp(x_i) / Σ exp(x_j) exactly as written, in float32: exp overflows to inf
// above ln(FLT_MAX) ≈ 88.72 and inf/inf is NaN.
std::vector<float> softmax_naive(const std::vector<float>& x);
// exp(x_i − max) / Σ exp(x_j − max), in float32: never overflows.
std::vector<float> softmax_stable(const std::vector<float>& x);
// Every column of the stability lab's table for the scores base · scale, in float32.
struct SoftmaxStabilityTable {
  std::vector<float> x;            // base · scale
  std::vector<float> exp_x;        // exp(x): ∞ once x passes ln(FLT_MAX)
  std::vector<float> naive;        // softmax_naive(x)
  std::vector<float> shifted;      // x − max
  std::vector<float> exp_shifted;  // exp(x − max) ≤ 1
  std::vector<float> stable;       // softmax_stable(x)
  bool naive_broken = false;       // softmax_row_broken(naive)
};
SoftmaxStabilityTable softmax_stability_table(const std::vector<float>& base, float scale);
// ln(FLT_MAX): the largest x whose float32 exp is finite.
float float_exp_limit();
// Whether a softmax row is wrong: a non-finite weight, or weights that do not
// sum to 1 (an overflowed sum of finite exps divides them all to 0).
bool softmax_row_broken(const std::vector<float>& weights);
// The smallest factor s at which softmax_naive(s · base) breaks: a score's exp
// overflows (∞/∞ = NaN), the sum overflows (x/∞ = 0), or every exp underflows
// to 0 (0/0 = NaN); ∞ when no s > 0 breaks it.
float naive_softmax_break_scale(const std::vector<float>& base);

// ---- Fused QKV ---------------------------------------------------------------

struct FusedQkvComparison {
  // kv = h_kv·d_k: d for multi-head attention, less with grouped K/V heads.
  Tensor w_q, w_k, w_v;   // (d, d), (d, kv), (d, kv)
  Tensor w_qkv;           // (d, d + 2kv) = [W_Q | W_K | W_V]
  Tensor b_qkv;           // (d + 2kv) or empty without bias
  Tensor x;               // (L, d): batch item `batch` of the input
  Tensor qkv_fused;       // (L, d + 2kv) = X·W_qkv + b_qkv
  Tensor q_fused, k_fused, v_fused;           // (L, d), (L, kv), (L, kv): its column blocks
  Tensor q_separate, k_separate, v_separate;  // the same: X·W_Q + b_Q, ...
  float max_diff_q = 0, max_diff_k = 0, max_diff_v = 0;  // max |fused − separate|
};

// Needs a projection-mode self-attention session (one X feeds Q, K and V).
Result<FusedQkvComparison> compare_fused_qkv(const Session& session, Index batch = 0);

}  // namespace al
