#pragma once
// The session both benchmark programs time: the shape of PyTorch's
// nn.MultiheadAttention(512, 8) that bench/torch_peer.py runs — self attention on
// x (1, L, 512), biases on, eval — with the same seeded numbers in every run.
#include "model/session.hpp"

namespace al::bench {

constexpr Index kDModel = 512, kHeads = 8;

// x (1, L, d_model) ~ N(0, 1); W_Q, W_K, W_V, W_O (d_model, d_model) ~ N(0, 1/d_model); biases (d_model) ~ N(0, 0.01).
Session peer_session(Index len);

}  // namespace al::bench
