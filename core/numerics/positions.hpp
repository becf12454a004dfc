#pragma once
// Positions in attention: sinusoidal encodings added to X (Vaswani et al.) and
// rotary embeddings applied to each head's q and k (RoPE, Su et al.).
#include <utility>

#include "base/tensor.hpp"
#include "model/session.hpp"

namespace al {

// PE[p, 2i] = sin(p / 10000^(2i/d_model)), PE[p, 2i+1] = cos(p / 10000^(2i/d_model)).
double sinusoidal_position(Index position, Index dim, Index d_model);

// out = x + PE, x (B, L, d_model) or (L, d_model) meaning B = 1; out (B, L, d_model).
void add_sinusoidal_positions(const Tensor& x, Tensor& out);

// The angle RoPE turns pair `pair` (0 ≤ pair < d_k/2) by at `position`:
// θ = position · base^(−2·pair/d_k).
double rope_angle(Index position, Index pair, Index d_k, double base);

// The two dimensions pair `pair` rotates: (pair, pair + d_k/2) in the half style
// (HF Llama's rotate_half), (2·pair, 2·pair + 1) interleaved (GPT-J, RoFormer).
std::pair<Index, Index> rope_dimensions(Index pair, Index d_k, RopeStyle style);

// Rotates every head's rows by their position (row l at position first_position + l):
// (x_a, x_b) → (x_a·cos θ − x_b·sin θ, x_b·cos θ + x_a·sin θ) for each pair.
// in, out: (B, heads, L, d_k); d_k even; in == out allowed. `inverse` turns by −θ
// (the transpose of the rotation: how a gradient flows back through RoPE).
void rotate_by_position(const Tensor& in, const PositionalSpec& spec, Tensor& out, Index first_position = 0,
                        bool inverse = false);

}  // namespace al
