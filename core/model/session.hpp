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
  // What QKᵀ is multiplied by with heads d_k wide: 1/√d_k, 1 or the factor.
  double multiplier(Index d_k) const;
  bool operator==(const ScaleSpec& o) const { return mode == o.mode && factor == o.factor; }
};

struct MaskSpec {
  bool causal = false;
  TensorPtr key_padding;  // (B, Lk) of 1/0, or null
  TensorPtr custom;       // (Lq, Lk) or (B, Lq, Lk) of 1/0, or null
  // Sliding window: query i sees key j only when |i − j| < window (with causal:
  // i − window < j ≤ i, the window most recent keys including itself). 0 = none.
  Index window = 0;
  // Longformer's global tokens: a global query sees every key and every query
  // sees a global key, whatever the window says (causal, padding, custom still apply).
  std::vector<Index> global_tokens;
};

enum class PositionalType { None, Sinusoidal, Rope, Alibi };
enum class RopeStyle { Half, Interleaved };

// How positions enter attention (see attention.hpp for the formulas).
struct PositionalSpec {
  PositionalType type = PositionalType::None;
  RopeStyle rope_style = RopeStyle::Half;  // half: HF Llama's rotate_half; interleaved: GPT-J/RoFormer
  double rope_base = 10000.0;
  bool operator==(const PositionalSpec& o) const {
    return type == o.type && rope_style == o.rope_style && rope_base == o.rope_base;
  }
  bool operator!=(const PositionalSpec& o) const { return !(*this == o); }
};

struct DropoutSpec {
  double p = 0.0;
  bool training = false;
  std::uint64_t seed = 0;
  // Dropout changes the weights only in training mode with p > 0 (else α′ = α).
  bool active() const { return training && p > 0; }
  bool operator==(const DropoutSpec& o) const {
    return p == o.p && training == o.training && seed == o.seed;
  }
};

struct Config {
  InputMode mode = InputMode::Projection;
  AttentionKind attention = AttentionKind::Self;
  Index d_model = 8;
  Index num_heads = 2;
  // K/V heads (grouped-query attention); 0 means num_heads. Query head h uses
  // K/V head h ÷ (num_heads / num_kv_heads), as HF's repeat_kv.
  Index num_kv_heads = 0;
  PositionalSpec positional;
  bool bias = true;
  ScaleSpec scale;
  MaskSpec mask;
  double mask_fill = -std::numeric_limits<double>::infinity();
  DropoutSpec dropout;

  Index kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  Index kv_width() const { return num_heads > 0 ? kv_heads() * (d_model / num_heads) : d_model; }  // H_kv · d_k
};

// Weights, always held in "math" layout (in x out, y = x·W + b); the loader
// transposes "torch" layout (out x in) on the way in. Biases are (out).
struct Weights {
  // w_q (d_model, d_model), b_q (d_model); w_k, w_v (d_model, H_kv·d_k), b_k, b_v (H_kv·d_k)
  TensorPtr w_q, b_q, w_k, b_k, w_v, b_v;
  TensorPtr w_qkv, b_qkv;  // fused: (d_model, d_model + 2·H_kv·d_k), Q then K then V
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
  // Direct mode: (B, Lq, d_model), (B, Lk, H_kv·d_k), (B, Lk, H_kv·d_k).
  TensorPtr q, k, v;
  Weights weights;

  Index batch() const;      // B, from the inputs (0 if none)
  Index len_q() const;      // Lq
  Index len_kv() const;     // Lk (== Lq in self attention)
};

}  // namespace al
