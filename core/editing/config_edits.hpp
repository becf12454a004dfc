#pragma once
// Edits of the configuration options of today's models (issue #14): grouped-query
// heads, positions, the sliding window and global tokens. Like edits.hpp, each
// returns an edited copy of the session that stays computable where it can.
#include "model/session.hpp"

namespace al {

// Sets num_heads and num_kv_heads (0 = as many K/V heads as query heads). A
// num_kv_heads that does not divide num_heads (or heads that do not split
// d_model) falls back to multi-head attention. W_K, W_V, b_K, b_V (their blocks
// of W_qkv) and direct-mode K, V are reshaped to H_kv·d_k columns: each is first
// expanded to one K/V head per query head, then each group of query heads gets
// the mean of its heads (Ainslie et al. 2023, "GQA", section 2.1: converting a
// multi-head checkpoint by mean-pooling its K/V heads). Going back to more K/V
// heads repeats the shared head into each, so that attention is unchanged.
Session with_heads(const Session& s, Index num_heads, Index num_kv_heads);

Session with_positional(const Session& s, const PositionalSpec& positional);
Session with_window(const Session& s, Index window);  // 0 = no window
// Makes position p a global token (or not); the list stays sorted. Out of range
// positions leave the session unchanged.
Session with_global_token(const Session& s, Index position, bool global);

}  // namespace al
