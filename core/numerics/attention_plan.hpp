#pragma once
// Internal to the core: a session checked once and resolved into what the
// computation needs (sizes, where Q/K/V come from, the effective scale ...).
// Both validate() and compute() go through make_plan(), so they can never
// disagree about what is valid.
#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/trace.hpp"

namespace al::detail {

// Where one of Q, K, V comes from: `input` times a column block of `weight`,
// plus the same block of `bias` (projection mode); or `input` itself (direct).
struct ProjectionSource {
  TensorPtr input;   // (B, L, d_model) or (L, d_model)
  TensorPtr weight;  // (d_model, n) math layout; null in direct mode
  Index column = 0;  // first column of the block: W_qkv holds Q at 0, K at d_model, V at d_model + H_kv·d_k
  TensorPtr bias;    // (n), null when there is no bias

  bool operator==(const ProjectionSource& o) const {
    return input == o.input && weight == o.weight && column == o.column && bias == o.bias;
  }
};

enum { kQ = 0, kK = 1, kV = 2 };

struct Plan {
  Dims dims;
  double scale = 1.0;                   // multiplies QKᵀ
  std::array<ProjectionSource, 3> qkv;  // indexed by kQ, kK, kV
  TensorPtr w_o, b_o;                   // null w_o: output is the concat itself
  bool causal = false;
  TensorPtr key_padding;                // (B, Lk) or (Lk) when B = 1
  TensorPtr custom;                     // (Lq, Lk) or (B, Lq, Lk)
  Index window = 0;                     // sliding window w (0 = none)
  std::vector<unsigned char> global_query, global_key;  // (Lq), (Lk): 1 for a global token; empty if none
  double mask_fill = 0;
  PositionalSpec positional;
  std::vector<double> alibi_slopes;     // (h) when positional is ALiBi
  bool dropout_active = false;          // training && p > 0
  double dropout_p = 0;
  std::uint64_t dropout_seed = 0;

  bool has_mask() const { return causal || key_padding || custom || window > 0; }
  bool sinusoidal() const { return positional.type == PositionalType::Sinusoidal; }
  bool rope() const { return positional.type == PositionalType::Rope; }
  bool alibi() const { return positional.type == PositionalType::Alibi; }
  // Stages that equal their predecessor are stored once (same pointer).
  bool scaled_is_scores() const { return scale == 1.0; }
  bool masked_is_scaled() const { return !has_mask(); }
  bool dropped_is_weights() const { return !dropout_active; }
  bool output_is_concat() const { return w_o == nullptr; }
};

bool same_dims(const Dims& a, const Dims& b);
// About how many multiply-adds a trace of these sizes takes (Q from Lq rows, K and V from
// Lkv, W_O; QKᵀ and ·V per head): whether a computation wakes a second thread (base/thread_team).
double multiply_adds(const Dims& d);

Result<Plan> make_plan(const Session& session);

// Whether query i may attend key j of batch item b: causal AND key padding AND
// custom AND (inside the window OR a global query OR a global key).
bool attends(const Plan& plan, Index b, Index i, Index j);

// ALiBi's slopes m_h for `heads` heads (Press et al.'s get_slopes).
std::vector<double> alibi_slopes(Index heads);

// Which stages a trace of `plan` has (the others are off: x_pos without sinusoidal positions, ...).
std::array<bool, kStageCount> present_stages(const Plan& plan);

// For each stage that equals an earlier one under `plan` (scaled = scores when the scale is 1,
// masked = scaled or biased without a mask, dropped = weights without dropout, output =
// concat without W_O): that earlier stage, whose tensor it shares.
std::array<std::optional<Stage>, kStageCount> shared_stages(const Plan& plan);

// Which present stages a trace keeps under ComputeOptions::keep (unset: all of them). A
// shared tensor is kept when any stage sharing it is.
std::array<bool, kStageCount> kept_stages(const Plan& plan, const std::optional<StageSet>& keep);

// Bytes of the distinct tensors the trace of `plan` holds (keeping `keep`'s square stages);
// TooLarge if the count does not even fit in 64 bits.
Result<Index> trace_bytes(const Plan& plan, const std::optional<StageSet>& keep = std::nullopt);

// Bytes actually held by a trace (shared stages counted once).
Index trace_memory(const Trace& trace);

// "545 bytes", "1.5 GiB (1610612736 bytes)"
std::string human_bytes(Index bytes);

}  // namespace al::detail
