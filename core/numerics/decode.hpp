#pragma once
// KV-cache decoding: a causal self-attention session run token by token, as a
// decoder runs at inference. At step t the new token's q, k, v are computed
// (x row t projected, with sinusoidal positions added to x and RoPE turning q
// and k by position t), k and v are appended to the cache, and the one query
// attends over the cache. With a sliding window w the cache keeps only the last
// w positions (a rolling buffer) plus any global tokens (they stay, as attention
// sinks do). Each step's weights and output equal row t of the full causal
// trace (its other cells are masked, so exactly 0) — computed here
// independently, one token at a time, never read from a trace.
#include <vector>

#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct DecodeStep {
  Index t = 0;                   // the position of the new token
  std::vector<Index> positions;  // (n) the cache's positions, oldest first
  Tensor q;                      // (B, h, 1, d_k), rotated with RoPE
  Tensor k_cache, v_cache;       // (B, h_kv, n, d_k), keys rotated with RoPE (they are cached rotated)
  Tensor weights;                // (B, h, 1, n) softmax over the cache (before dropout, as the trace's weights)
  Tensor dropped;                // (B, h, 1, n) after dropout, what the output sums; empty without dropout
  Tensor output;                 // (B, 1, d_model)
  // (B) 1 where the new token may attend no cached key (padding hides them all): its weights are
  // NaN with a fill of -inf, else uniform over the cache, where the full pass spreads them over
  // all L keys, future ones too, so such rows do not match the full trace.
  std::vector<unsigned char> fully_masked;
  bool any_fully_masked() const;
};

struct DecodeRun {
  Dims dims;
  std::vector<DecodeStep> steps;  // t = 0 … L−1
  // What the cache holds per token per layer: 2 (K and V) · h_kv · d_k floats of 4 bytes,
  // and what it would hold with one K/V head per query head (plain multi-head attention).
  Index cache_bytes_per_token = 0, multi_head_bytes_per_token = 0;
};

// Refuses (with the reason) a session that is not causal self-attention.
Result<DecodeRun> decode(const Session& session);

}  // namespace al
