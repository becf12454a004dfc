#pragma once
// Pure functions that return an edited copy of a session. The app's panels
// build edits with these and hand the result to the SessionModel.
#include <optional>
#include <string>

#include "session.hpp"

namespace al {

// Every editable matrix of a session.
enum class InputId {
  X, XKv, Q, K, V,
  WQ, BQ, WK, BK, WV, BV, WQkv, BQkv, WO, BO,
  MaskCustom, KeyPadding,
};
const char* input_name(InputId id);  // "x", "w_q", "mask.custom", ...

TensorPtr input(const Session& s, InputId id);
Session with_input(const Session& s, InputId id, TensorPtr value);
// One cell: flat index into the tensor.
Session with_cell(const Session& s, InputId id, Index flat_index, float value);

enum class Fill { Zero, Identity, Random };
// Fills the matrix (for Identity: every trailing 2-D matrix gets ones on its diagonal).
Session with_filled(const Session& s, InputId id, Fill fill, std::uint64_t seed = 0);

// Changes sizes, keeping the overlapping values and filling new ones with
// seeded random numbers (mask cells with 1). Tokens are extended as "t5" ...
Session with_sizes(const Session& s, Index batch, Index len_q, Index len_kv, Index d_model);
// Switches mode / attention kind, creating any missing inputs (random, seeded).
Session with_mode(const Session& s, InputMode mode);
Session with_attention(const Session& s, AttentionKind kind);
Session with_fused(const Session& s, bool fused);  // concatenates or splits W_Q|W_K|W_V
Session with_bias(const Session& s, bool bias);    // creates zero biases when turned on

// Mask painter helpers: the (Lq, Lk) custom mask of one batch item.
Session with_mask_cell(const Session& s, Index batch, Index i, Index j, bool attend);
Session with_causal(const Session& s, bool causal);
// Key padding: batch item b attends to its first `length` keys only.
Session with_padding_length(const Session& s, Index batch, Index length);
Session with_mask_cleared(const Session& s);  // no custom mask, no padding, not causal

}  // namespace al
