#pragma once
// A session: the configuration and every input of one attention computation.
// Inputs are shared, immutable tensors: an edit replaces one pointer, so undo
// snapshots are cheap and the compute step can tell what changed by comparing
// pointers (incremental recompute).
#include <limits>
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace al {

enum class InputMode { Projection, Direct };
enum class AttentionKind { Self, Cross };
enum class ScaleMode { SqrtDk, None, Custom };

struct ScaleSpec {
  ScaleMode mode = ScaleMode::SqrtDk;
  double factor = 1.0;  // used when mode == Custom: scaled = factor * QK^T
  bool operator==(const ScaleSpec& o) const { return mode == o.mode && factor == o.factor; }
};

struct MaskSpec {
  bool causal = false;
  TensorPtr key_padding;  // (B, Lk) of 1/0, or null
  TensorPtr custom;       // (Lq, Lk) or (B, Lq, Lk) of 1/0, or null
};

struct DropoutSpec {
  double p = 0.0;
  bool training = false;
  std::uint64_t seed = 0;
  bool operator==(const DropoutSpec& o) const {
    return p == o.p && training == o.training && seed == o.seed;
  }
};

struct Config {
  InputMode mode = InputMode::Projection;
  AttentionKind attention = AttentionKind::Self;
  Index d_model = 8;
  Index num_heads = 2;
  bool bias = true;
  ScaleSpec scale;
  MaskSpec mask;
  double mask_fill = -std::numeric_limits<double>::infinity();
  DropoutSpec dropout;
};

// Weights, always held in "math" layout (in x out, y = x·W + b); the loader
// transposes "torch" layout (out x in) on the way in. Biases are (out).
struct Weights {
  TensorPtr w_q, b_q, w_k, b_k, w_v, b_v;  // (d_model, d_model), (d_model)
  TensorPtr w_qkv, b_qkv;                  // fused: (d_model, 3*d_model), Q then K then V
  TensorPtr w_o, b_o;                      // (d_model, d_model); optional in direct mode
  bool fused() const { return w_qkv != nullptr; }
};

struct Session {
  Config config;
  std::vector<std::string> tokens;     // query-side labels (length Lq), may be empty
  std::vector<std::string> tokens_kv;  // key-side labels for cross attention
  // Projection mode: x (self) or x_q + x_kv (cross), each (B, L, d_model).
  TensorPtr x;      // queries' input; also keys'/values' input in self attention
  TensorPtr x_kv;   // keys'/values' input in cross attention
  // Direct mode: (B, Lq, d_model), (B, Lk, d_model), (B, Lk, d_model).
  TensorPtr q, k, v;
  Weights weights;

  Index batch() const;      // B, from the inputs (0 if none)
  Index len_q() const;      // Lq
  Index len_kv() const;     // Lk (== Lq in self attention)
};

}  // namespace al
