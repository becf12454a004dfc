#pragma once
// Pure functions that return an edited copy of a session. The app's panels
// build edits with these and hand the result to the SessionModel.
#include <optional>
#include <string>

#include "base/error.hpp"
#include "model/session.hpp"

namespace al {

// Every editable matrix of a session.
enum class InputId {
  X, XKv, Q, K, V,
  WQ, BQ, WK, BK, WV, BV, WQkv, BQkv, WO, BO,
  MaskCustom, KeyPadding,
};
const char* input_name(InputId id);  // "x", "w_q", "mask.custom", ...

// On a fused session WQ/WK/WV (BQ/BK/BV) are the Q/K/V column blocks of W_qkv
// (b_qkv): input() copies the block out, with_input() writes it back into a new
// W_qkv; a value that does not fit the block splits the weights first. Setting
// WQkv/BQkv on a separate session fuses it first. Null when absent.
TensorPtr input(const Session& s, InputId id);
Session with_input(const Session& s, InputId id, TensorPtr value);
// One cell: flat index into the tensor; out of range returns the session unchanged.
Session with_cell(const Session& s, InputId id, Index flat_index, float value);

enum class Fill { Zero, Identity, Random };
// Fills the matrix (for Identity: every trailing 2-D matrix gets ones on its diagonal;
// Random: weights and biases with std 1/sqrt(d_model), X/Q/K/V std 1, masks 0/1).
// An absent input is created with the shape the session needs.
Session with_filled(const Session& s, InputId id, Fill fill, std::uint64_t seed = 0);

// Changes sizes, keeping the overlapping values and filling new ones with
// seeded random numbers (biases 0, mask cells 1, key padding repeats the row's
// last value so a padded item stays padded). Tokens are extended as "t5" ...
// len_kv is ignored in self attention; num_heads is kept (validate() reports it
// when it no longer divides d_model). Sizes check_sizes() refuses leave the
// session unchanged.
Session with_sizes(const Session& s, Index batch, Index len_q, Index len_kv, Index d_model);
// Why with_sizes() would refuse these sizes: below 1, or inputs that alone would
// not fit in default_memory_limit() (checked before anything is allocated).
std::optional<Error> check_sizes(const Session& s, Index batch, Index len_q, Index len_kv,
                                 Index d_model);
// Switches mode / attention kind, creating any missing inputs (random, seeded) and
// dropping the ones the new configuration does not use (undo brings them back).
Session with_mode(const Session& s, InputMode mode);
Session with_attention(const Session& s, AttentionKind kind);
Session with_fused(const Session& s, bool fused);  // concatenates or splits W_Q|W_K|W_V
Session with_bias(const Session& s, bool bias);    // creates zero biases when on, drops them when off

// Mask painter helpers: the (Lq, Lk) custom mask of one batch item. The first
// painted cell creates a (B, Lq, Lk) mask of ones; a 2-D (Lq, Lk) mask is
// broadcast to (B, Lq, Lk). Out-of-range cells or a mask of the wrong shape
// leave the session unchanged.
Session with_mask_cell(const Session& s, Index batch, Index i, Index j, bool attend);
Session with_causal(const Session& s, bool causal);
// Key padding: batch item b attends to its first `length` keys only.
Session with_padding_length(const Session& s, Index batch, Index length);
Session with_mask_cleared(const Session& s);  // no custom mask, no padding, not causal

// The width edits give K, V, W_K, W_V (and the K/V blocks of W_qkv): H_kv·d_k,
// or d_model when the heads are multi-head or do not split d_model (validate()
// says why then).
Index kv_input_width(const Config& c);

}  // namespace al
