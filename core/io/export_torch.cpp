// The session as a runnable PyTorch script (see export_torch.hpp).
#include "io/export_torch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "numerics/attention.hpp"
#include "io/matrix_io.hpp"
#include "io/python_literals.hpp"

namespace al {
namespace {

using namespace python;

// Math layout (in, out) -> nn.Linear layout (out, in).
Tensor transposed(const Tensor& m) {
  Tensor t({m.cols(), m.rows()});
  t.matrix() = m.matrix().transpose();
  return t;
}

// Inputs may be (L, d_model) and key padding (Lk) when B = 1; the script
// always shows the batch axis, so that its shape comments hold.
Tensor batched(const Tensor& t, size_t rank) {
  std::vector<Index> shape = t.shape;
  while (shape.size() < rank) shape.insert(shape.begin(), 1);
  return Tensor(shape, t.data);
}

std::string bias_name(const Session& s, const TensorPtr& bias, const char* name) {
  return s.config.bias && bias ? name : "None";
}

const char* kPreamble = R"PY(
import argparse
import base64
import json
import math
import sys

import torch
import torch.nn as nn

torch.set_grad_enabled(False)  # we only compute forward values: no autograd bookkeeping
inf, nan = float("inf"), float("nan")


def unpack(shape, dtype, lines):
    """A big tensor is embedded as base64 of its raw little-endian bytes: exact and compact."""
    raw = bytearray(base64.b64decode("".join(lines)))
    return torch.frombuffer(raw, dtype=dtype).reshape(shape).clone()


def linear(weight, bias):
    """An nn.Linear holding `weight` (out, in) and `bias` (out,), the layout of a PyTorch state_dict.
    It computes y = x @ weight.T + bias."""
    layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    layer.weight.copy_(weight)
    if bias is not None:
        layer.bias.copy_(bias)
    return layer


)PY";

const char* kEpilogue = R"PY(
stages = {"q": q, "k": k, "v": v, "scores": scores, "scaled": scaled, "masked": masked,
          "weights": weights, "dropped": dropped, "context": context, "concat": concat,
          "output": output}
stages.update(extra_stages)  # x_pos, q_rot, k_rot, biased ... when the session has them


def json_ready(t):
    """Nested lists, with the non-finite numbers JSON cannot hold as "NaN", "Infinity", "-Infinity"."""
    def clean(value):
        if isinstance(value, list):
            return [clean(item) for item in value]
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    return clean(t.tolist())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true",
                        help="print every stage as JSON (same names and shapes as `attention-lab trace --json`)")
    args = parser.parse_args()
    if args.json:
        json.dump({"stages": {name: json_ready(t) for name, t in stages.items()}}, sys.stdout)
        print()
    else:
        torch.set_printoptions(precision=6, sci_mode=False)
        print("output", tuple(output.shape), "(B, Lq, d_model):")
        print(output)
        fully_masked = (mask.sum(dim=-1) == 0).nonzero().tolist() if mask is not None else []
        if fully_masked:
            print("rows with every key masked (batch, query):", fully_masked)
)PY";

void write_projections(std::ostringstream& out, const Session& s) {
  const Weights& w = s.weights;
  const bool cross = s.config.attention == AttentionKind::Cross;
  const bool positions = s.config.positional.type == PositionalType::Sinusoidal;
  const std::string x_q = cross ? (positions ? "x_q_pos" : "x_q") : (positions ? "x_pos" : "x");
  const std::string x_kv = cross ? (positions ? "x_kv_pos" : "x_kv") : x_q;
  if (positions) {
    out << "# ---------------------------------------------------------------------------\n"
           "# 1b. Sinusoidal positions (Vaswani et al.): PE[p, 2i] = sin(p / 10000^(2i/d_model)),\n"
           "#     PE[p, 2i+1] = cos(same), added to the embeddings so the projections see where each\n"
           "#     token is (attention alone does not care about order).\n"
           "# ---------------------------------------------------------------------------\n"
           "def sinusoidal(length):\n"
           "    position = torch.arange(length, dtype=torch.float64)[:, None]\n"
           "    frequency = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)\n"
           "    pe = torch.zeros(length, d_model, dtype=torch.float64)\n"
           "    pe[:, 0::2] = torch.sin(position * frequency)\n"
           "    pe[:, 1::2] = torch.cos(position * frequency)[:, : d_model // 2]\n"
           "    return pe.float()  # (L, d_model)\n\n\n";
    if (cross)
      out << "x_q_pos = x_q + sinusoidal(Lq)  # (B, Lq, d_model)\n"
             "x_kv_pos = x_kv + sinusoidal(Lk)  # (B, Lk, d_model): its positions also count from 0\n"
             "extra_stages.update(x_pos=x_q_pos, x_kv_pos=x_kv_pos)\n\n";
    else
      out << "x_pos = x + sinusoidal(Lq)  # (B, L, d_model)\n"
             "extra_stages[\"x_pos\"] = x_pos\n\n";
  }
  out << "# ---------------------------------------------------------------------------\n"
         "# 2. Projections: every query token's embedding becomes a query vector, every\n"
         "#    key token's embedding a key and a value vector (nn.Linear: x @ W.T + b).\n"
         "# ---------------------------------------------------------------------------\n";
  if (w.fused()) {
    const std::string bias = bias_name(s, w.b_qkv, "b_qkv");
    const std::string widths = "[d_model, h_kv * d_k, h_kv * d_k]";
    if (!cross) {
      out << "in_proj = linear(W_qkv, " << bias << ")\n"
          << "# One matrix multiply gives Q, K and V side by side; split separates them.\n"
          << "Q, K, V = in_proj(" << x_q << ").split(" << widths
          << ", dim=-1)  # (B, L, d_model), (B, L, h_kv*d_k) x 2\n\n";
      return;
    }
    out << "# Cross attention: queries and keys/values come from different inputs, so the\n"
           "# stacked matrix is split first (as nn.MultiheadAttention does for cross attention).\n"
        << "W_q, W_k, W_v = W_qkv.split(" << widths << ", dim=0)\n";
    if (bias != "None") out << "b_q, b_k, b_v = b_qkv.split(" << widths << ")\n";
    out << "Q = linear(W_q, " << (bias == "None" ? "None" : "b_q") << ")(" << x_q << ")  # (B, Lq, d_model)\n"
        << "K = linear(W_k, " << (bias == "None" ? "None" : "b_k") << ")(" << x_kv << ")  # (B, Lk, h_kv*d_k)\n"
        << "V = linear(W_v, " << (bias == "None" ? "None" : "b_v") << ")(" << x_kv << ")  # (B, Lk, h_kv*d_k)\n\n";
    return;
  }
  out << "q_proj = linear(W_q, " << bias_name(s, w.b_q, "b_q") << ")\n"
      << "k_proj = linear(W_k, " << bias_name(s, w.b_k, "b_k") << ")\n"
      << "v_proj = linear(W_v, " << bias_name(s, w.b_v, "b_v") << ")\n"
      << "Q = q_proj(" << x_q << ")  # (B, Lq, d_model)\n"
      << "K = k_proj(" << x_kv << ")  # (B, Lk, h_kv*d_k)\n"
      << "V = v_proj(" << x_kv << ")  # (B, Lk, h_kv*d_k)\n\n";
}

// " (rows: the, cat, sat)" so the learner can tell which row is which token.
std::string row_names(const std::vector<std::string>& tokens) {
  constexpr size_t kMaxNamed = 16;
  if (tokens.empty()) return "";
  std::string out = " (rows: ";
  for (size_t i = 0; i < tokens.size() && i < kMaxNamed; ++i) {
    std::string token = tokens[i];
    // A line break inside a comment would turn the rest of the token into code.
    for (char& c : token)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out += (i ? ", " : "") + token;
  }
  return out + (tokens.size() > kMaxNamed ? ", ...)" : ")");
}

void write_inputs(std::ostringstream& out, const Session& s) {
  const Weights& w = s.weights;
  const bool cross = s.config.attention == AttentionKind::Cross;
  const std::string query_rows = row_names(s.tokens);
  const std::string key_rows = row_names(cross ? s.tokens_kv : s.tokens);
  if (s.config.mode == InputMode::Direct) {
    write_tensor(out, "Q", batched(*s.q, 3), "Q: the queries, given directly, one row per query token" + query_rows,
                 "(B, Lq, d_model)");
    const std::string kv_axes = s.config.kv_heads() == s.config.num_heads ? "(B, Lk, d_model)" : "(B, Lk, h_kv*d_k)";
    write_tensor(out, "K", batched(*s.k, 3), "K: the keys, given directly, one row per key token" + key_rows, kv_axes);
    write_tensor(out, "V", batched(*s.v, 3), "V: the values, given directly, one row per key token" + key_rows, kv_axes);
  } else if (cross) {
    write_tensor(out, "x_q", batched(*s.x, 3), "x_q: the embeddings the queries come from" + query_rows,
                 "(B, Lq, d_model)");
    write_tensor(out, "x_kv", batched(*s.x_kv, 3), "x_kv: the embeddings the keys and values come from" + key_rows,
                 "(B, Lk, d_model)");
  } else {
    write_tensor(out, "x", batched(*s.x, 3), "x: the input embeddings, one row per token" + query_rows,
                 "(B, L, d_model)");
  }
  out << "\n# Weights in nn.Linear layout (out, in): Attention Lab's math layout (in, out)\n"
         "# transposed, so x @ W.T + b here is x @ W + b there. A PyTorch state_dict drops in.\n";
  const bool bias = s.config.bias;
  const bool grouped = s.config.kv_heads() != s.config.num_heads;
  if (s.config.mode == InputMode::Projection) {
    if (w.fused()) {
      if (!grouped) {
        write_tensor(out, "W_qkv", transposed(*w.w_qkv),
                     "W_qkv: W_q, W_k, W_v stacked, exactly nn.MultiheadAttention's in_proj_weight",
                     "(3*d_model, d_model)");
        if (bias && w.b_qkv) write_tensor(out, "b_qkv", *w.b_qkv, "b_qkv: b_q, b_k, b_v stacked (in_proj_bias)", "(3*d_model,)");
      } else {
        write_tensor(out, "W_qkv", transposed(*w.w_qkv),
                     "W_qkv: W_q (d_model rows), W_k and W_v (h_kv*d_k rows each) stacked",
                     "(d_model + 2*h_kv*d_k, d_model)");
        if (bias && w.b_qkv) write_tensor(out, "b_qkv", *w.b_qkv, "b_qkv: b_q, b_k, b_v stacked", "(d_model + 2*h_kv*d_k,)");
      }
    } else {
      const std::pair<const char*, const TensorPtr*> projections[] = {
          {"q", &w.w_q}, {"k", &w.w_k}, {"v", &w.w_v}};
      const TensorPtr* biases[] = {&w.b_q, &w.b_k, &w.b_v};
      for (int i = 0; i < 3; ++i) {
        const std::string p = projections[i].first;
        const std::string width = i == 0 || !grouped ? "d_model" : "h_kv*d_k";
        write_tensor(out, "W_" + p, transposed(**projections[i].second), "W_" + p + ": the " + p + " projection",
                     "(" + width + " out, d_model in)");
        if (bias && *biases[i]) write_tensor(out, "b_" + p, **biases[i], "b_" + p, "(" + width + ",)");
      }
    }
  }
  if (w.w_o) {
    write_tensor(out, "W_o", transposed(*w.w_o), "W_o: the output projection that mixes the heads",
                 "(d_model out, d_model in)");
    if (bias && w.b_o) write_tensor(out, "b_o", *w.b_o, "b_o", "(d_model,)");
  }
  out << "\n";
}

// Sections 3 and 4: heads, RoPE, the K/V heads each query head reads, the scores.
void write_heads(std::ostringstream& out, const Session& s) {
  const PositionalSpec& p = s.config.positional;
  const bool grouped = s.config.kv_heads() != s.config.num_heads;
  out << "# ---------------------------------------------------------------------------\n"
         "# 3. Split into heads: the columns are groups of d_k columns, one group per head;\n"
         "#    each head attends on its own group.\n"
         "# ---------------------------------------------------------------------------\n"
         "def split_heads(t, n):\n"
         "    \"\"\"(B, L, n*d_k) -> view as (B, L, n, d_k) -> transpose to (B, n, L, d_k).\"\"\"\n"
         "    return t.view(t.shape[0], t.shape[1], n, d_k).transpose(1, 2)\n\n\n"
         "q = split_heads(Q, h)  # (B, h, Lq, d_k)\n"
         "k = split_heads(K, h_kv)  # (B, h_kv, Lk, d_k)\n"
         "v = split_heads(V, h_kv)  # (B, h_kv, Lk, d_k)\n";
  std::string q = "q", k = "k";
  if (p.type == PositionalType::Rope) {
    const bool half = p.rope_style == RopeStyle::Half;
    out << "\n# RoPE (Su et al.): each pair of dimensions of q and k is turned by an angle\n"
           "# position * base^(-2i/d_k), so q_i . k_j depends only on i - j. V is not turned.\n"
        << (half ? "# Pairs (i, i + d_k/2), as HF Llama's rotate_half.\n"
                 : "# Pairs (2i, 2i+1), interleaved, as GPT-J and RoFormer.\n")
        << "rope_base = " << python_double(p.rope_base) << "\n"
        << "def rope(t):\n"
           "    length = t.shape[-2]\n"
           "    inv_freq = 1.0 / (rope_base ** (torch.arange(0, d_k, 2, dtype=torch.float64) / d_k))\n"
           "    angle = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)  # (L, d_k/2)\n";
    if (half)
      out << "    angle = torch.cat((angle, angle), dim=-1)  # (L, d_k)\n"
             "    turned = torch.cat((-t[..., d_k // 2:], t[..., : d_k // 2]), dim=-1)  # rotate_half\n";
    else
      out << "    angle = angle.repeat_interleave(2, dim=-1)  # (L, d_k)\n"
             "    turned = torch.stack((-t[..., 1::2], t[..., 0::2]), dim=-1).flatten(-2)\n";
    out << "    return t * angle.cos().float() + turned * angle.sin().float()\n\n\n"
           "q_rot, k_rot = rope(q), rope(k)  # (B, h, Lq, d_k), (B, h_kv, Lk, d_k)\n"
           "extra_stages.update(q_rot=q_rot, k_rot=k_rot)\n";
    q = "q_rot";
    k = "k_rot";
  }
  if (grouped)
    out << "\n# Grouped-query attention: query head n reads K/V head n // (h // h_kv), as HF's repeat_kv.\n";
  out << "k_read = " << k << ".repeat_interleave(h // h_kv, dim=1)  # (B, h, Lk, d_k)\n"
      << "v_read = v.repeat_interleave(h // h_kv, dim=1)  # (B, h, Lk, d_k)\n\n"
      << "# 4. Scores: the dot product of every query with every key, per head.\n"
      << "scores = " << q << " @ k_read.transpose(-2, -1)  # (B, h, Lq, d_k) @ (B, h, d_k, Lk) -> (B, h, Lq, Lk)\n\n";
}

// ALiBi: a linear penalty on distance, one slope per head (Press et al.).
void write_alibi(std::ostringstream& out, const Session& s) {
  if (s.config.positional.type != PositionalType::Alibi) return;
  out << "# 5b. ALiBi (Press et al.): no position in x, q or k; instead each head h subtracts\n"
         "#     m_h * |i - j| from the scores, a penalty growing with distance. Different slopes\n"
         "#     give heads different ranges. Slopes as the paper's get_slopes.\n"
         "def alibi_slopes(n):\n"
         "    def power_of_2(n):\n"
         "        start = 2 ** (-8 / n)\n"
         "        return [start ** (k + 1) for k in range(n)]\n"
         "    if math.log2(n).is_integer():\n"
         "        return power_of_2(n)\n"
         "    c = 2 ** math.floor(math.log2(n))\n"
         "    return power_of_2(c) + alibi_slopes(2 * c)[0::2][: n - c]\n\n\n"
         "slopes = torch.tensor(alibi_slopes(h), dtype=torch.float64)[:, None, None]  # (h, 1, 1)\n"
         "distance = (torch.arange(Lq)[:, None] - torch.arange(Lk)[None, :]).abs()  # (Lq, Lk)\n"
         "biased = scaled + (-slopes * distance).float()  # (B, h, Lq, Lk)\n"
         "extra_stages[\"biased\"] = biased\n\n";
}

void write_mask(std::ostringstream& out, const Session& s) {
  const MaskSpec& m = s.config.mask;
  const double fill = s.config.mask_fill;
  out << "# ---------------------------------------------------------------------------\n"
         "# 6. Mask: 1 = this query may attend to this key, 0 = it may not. Masked scores\n"
         "#    are replaced by the fill value before the softmax.\n"
         "# ---------------------------------------------------------------------------\n";
  const std::string before = s.config.positional.type == PositionalType::Alibi ? "biased" : "scaled";
  if (!m.causal && !m.key_padding && !m.custom && m.window == 0) {
    out << "mask = None  # this session masks nothing\n"
        << "masked = " << before << "  # (B, h, Lq, Lk)\n\n";
    return;
  }
  out << "mask = torch.ones(B, Lq, Lk)  # (B, Lq, Lk): start with everything allowed\n";
  if (m.causal)
    out << "# Causal: query i may only look at keys j <= i (no peeking at later tokens).\n"
        << "mask = mask * torch.tril(torch.ones(Lq, Lk))\n";
  if (m.key_padding) {
    write_tensor(out, "key_padding", batched(*m.key_padding, 2),
                 "Key padding: per batch item, 1 for a real key, 0 for padding", "(B, Lk)", true);
    out << "mask = mask * key_padding[:, None, :]  # (B, 1, Lk): the same keys hidden from every query\n";
  }
  if (m.custom) {
    write_tensor(out, "custom_mask", *m.custom, "A custom mask, cell by cell",
                 m.custom->rank() == 3 ? "(B, Lq, Lk)" : "(Lq, Lk)", true);
    out << "mask = mask * custom_mask  # broadcasts to (B, Lq, Lk)\n";
  }
  if (m.window > 0) {
    out << "# Sliding window of w = " << m.window << " keys: query i sees key j only when |i - j| < w";
    out << (m.causal ? "; with causal,\n# i - w < j <= i: the w most recent keys including itself (Mistral's convention).\n" : ".\n");
    out << "i, j = torch.arange(Lq)[:, None], torch.arange(Lk)[None, :]\n"
        << "window = ((i - j).abs() < " << m.window << ").float()  # (Lq, Lk)\n";
    if (!m.global_tokens.empty()) {
      out << "# Global tokens (Longformer): a global query sees every key, every query sees a global key.\n"
          << "global_tokens = torch.tensor([";
      for (size_t g = 0; g < m.global_tokens.size(); ++g) out << (g ? ", " : "") << m.global_tokens[g];
      out << "])\n"
          << "is_global = torch.zeros(Lq, dtype=torch.bool)\n"
          << "is_global[global_tokens] = True\n"
          << "window = torch.maximum(window, (is_global[:, None] | is_global[None, :]).float())\n";
    }
    out << "mask = mask * window\n";
  }
  out << "# The convention here is SDPA's boolean attn_mask (1 = attend); nn.MultiheadAttention's\n"
         "# key_padding_mask and boolean attn_mask use the opposite (True = do not attend).\n";
  if (std::isinf(fill) && fill < 0) {
    out << "# Fill -inf: a masked key's weight exp(-inf - max) / sum is exactly 0. A row whose keys\n"
           "# are all masked is NaN: its max is -inf and exp(-inf - (-inf)) = exp(nan) = nan. That is\n"
           "# masked_fill(-inf) + torch.softmax; F.scaled_dot_product_attention (PyTorch >= 2.5)\n"
           "# returns 0 for such rows instead.\n";
  } else {
    out << "# Fill " << python_double(fill) << ": a masked key's weight is exp(fill - max) / sum, max being its\n"
           "# row's largest score: about 0 only when the fill lies far below the row's scores. A row\n"
           "# whose keys are all masked becomes uniform (all its scores equal the fill).\n";
    auto trace = compute(s);
    if (trace && (*trace)->mask) {
      const double leak = (*trace)->checks.masked_weight_max;
      char leak_text[32];
      std::snprintf(leak_text, sizeof leak_text, "%.4g", leak);
      out << "# In this session the largest weight on a masked key is " << leak_text
          << (leak < 1e-3 ? ": this fill masks here.\n" : ": this fill does NOT mask here.\n");
    }
  }
  out << "fill = " << python_double(fill) << "\n"
      << "# mask[:, None] is (B, 1, Lq, Lk): one mask shared by all heads.\n"
      << "masked = " << before << ".masked_fill(mask[:, None] == 0, fill)  # (B, h, Lq, Lk)\n\n";
}

void write_dropout(std::ostringstream& out, const Session& s, const Dims& dims) {
  const DropoutSpec& d = s.config.dropout;
  out << "# ---------------------------------------------------------------------------\n"
         "# 8. Dropout on the attention weights.\n"
         "# ---------------------------------------------------------------------------\n";
  if (!d.training || d.p == 0.0) {
    out << "# " << (d.training ? "p = 0" : "Eval mode") << ": dropout is the identity.\n"
        << "dropped = weights  # (B, h, Lq, Lk)\n\n";
    return;
  }
  // The keep decisions come from the core's own counter-based generator, so the
  // script reproduces the app's numbers; torch.dropout would draw other cells.
  Tensor keep({dims.batch, dims.heads, dims.len_q, dims.len_kv});
  for (Index i = 0; i < keep.size(); ++i)
    keep.data[static_cast<size_t>(i)] = dropout_keeps(d.seed, d.p, i) ? 1.0f : 0.0f;
  out << "# Training mode, p = " << python_double(d.p) << ", seed " << d.seed << ".\n"
      << "# PyTorch's dropout draws its random numbers differently from Attention Lab, so\n"
      << "# torch.nn.functional.dropout would zero other cells. To get the same numbers, this\n"
      << "# script uses Attention Lab's own keep decisions (1 = keep, 0 = drop), exported below.\n"
      << "# The arithmetic is PyTorch's \"inverted dropout\": kept weights are scaled by 1/(1-p)\n"
      << "# so that every weight keeps its expected value.\n";
  write_tensor(out, "keep", keep, "keep: one decision per weight", "(B, h, Lq, Lk)", true);
  out << "p = " << python_double(d.p) << "\n"
      << "dropped = weights * keep / (1 - p)  # (B, h, Lq, Lk)\n\n";
}

Dims session_dims(const Session& s) {
  Dims d;
  d.batch = s.batch();
  d.heads = s.config.num_heads;
  d.len_q = s.len_q();
  d.len_kv = s.len_kv();
  d.d_model = s.config.d_model;
  d.d_k = d.heads > 0 ? d.d_model / d.heads : 0;
  return d;
}

}  // namespace

Result<std::string> torch_script(const Session& s, const std::string& source_name) {
  if (auto error = validate(s)) return *error;
  const Dims dims = session_dims(s);
  const Config& c = s.config;
  std::ostringstream out;

  out << "#!/usr/bin/env python3\n"
      << "\"\"\"Attention Lab session " << python_string(source_name) << ", rebuilt in PyTorch step by step.\n\n"
      << "Generated by `attention-lab export-torch`; needs only PyTorch (1.13 or newer).\n"
      << "  python3 this_script.py          prints the output\n"
      << "  python3 this_script.py --json   prints every stage as JSON, in the same names and\n"
      << "                                  shapes as `attention-lab trace --json`\n\n"
      << "Sizes: B = " << dims.batch << " (batch), Lq = " << dims.len_q << " queries, Lk = " << dims.len_kv
      << " keys, d_model = " << dims.d_model << ",\n"
      << "       h = " << dims.heads << " heads of d_k = d_model / h = " << dims.d_k << " dimensions"
      << (c.kv_heads() != c.num_heads ? ", sharing h_kv = " + std::to_string(c.kv_heads()) + " key/value heads" : "")
      << ".\n\"\"\"\n"
      << kPreamble;

  out << "# ---------------------------------------------------------------------------\n"
         "# 1. The session's numbers, float32, exactly as Attention Lab holds them.\n"
         "# ---------------------------------------------------------------------------\n"
      << "B, Lq, Lk, d_model, h = " << dims.batch << ", " << dims.len_q << ", " << dims.len_kv << ", "
      << dims.d_model << ", " << dims.heads << "\n"
      << "d_k = d_model // h  # each head works in its own d_k-dimensional slice\n"
      << "h_kv = " << c.kv_heads()
      << (c.kv_heads() != c.num_heads ? "  # key/value heads: each is shared by h // h_kv query heads (grouped-query attention)\n"
                                      : "  # one key/value head per query head (plain multi-head attention)\n")
      << "extra_stages = {}  # the stages only some sessions have, by the names `attention-lab trace` uses\n";
  auto write_tokens = [&](const char* name, const std::vector<std::string>& tokens) {
    if (tokens.empty()) return;
    out << name << " = [";
    for (size_t i = 0; i < tokens.size(); ++i) out << (i ? ", " : "") << python_string(tokens[i]);
    out << "]\n";
  };
  write_tokens("tokens", s.tokens);
  write_tokens("tokens_kv", s.tokens_kv);
  out << "\n";
  write_inputs(out, s);

  if (c.mode == InputMode::Projection) {
    write_projections(out, s);
  } else {
    out << "# 2. Direct mode: Q, K and V were given above, so there is no projection.\n\n";
  }

  write_heads(out, s);
  out << "# 5. Scaling. ";
  switch (c.scale.mode) {
    case ScaleMode::SqrtDk:
      out << "If the components of q and k are independent with mean 0 and variance 1, the\n"
             "#    dot product of the two d_k-vectors has variance d_k; dividing by sqrt(d_k) removes\n"
             "#    that growth with d_k (variance 1 under the same assumption), so softmax does not\n"
             "#    saturate. Learned q and k need not meet the assumption.\n"
             "scale = 1 / math.sqrt(d_k)\n";
      break;
    case ScaleMode::None:
      out << "This session does not scale the scores.\n"
             "scale = 1.0\n";
      break;
    case ScaleMode::Custom:
      out << "This session multiplies the scores by a factor of its own.\n"
          << "scale = " << python_double(c.scale.factor) << "\n";
      break;
  }
  out << "scaled = scores * scale  # (B, h, Lq, Lk)\n\n";
  write_alibi(out, s);

  write_mask(out, s);

  out << "# 7. Softmax over the keys (last axis): each query's weights are non-negative and sum to 1.\n"
         "#    torch.softmax subtracts each row's max first, so exp never overflows.\n"
         "weights = torch.softmax(masked, dim=-1)  # (B, h, Lq, Lk)\n\n";

  write_dropout(out, s, dims);

  out << (s.config.dropout.active()
              ? "# 9. Context: each query's sum of the value vectors weighted by the weights after dropout\n"
                "#    (their rows no longer sum to 1, so it is not an average).\n"
              : "# 9. Context: each query's weighted average of the value vectors.\n")
      << 
         "context = dropped @ v_read  # (B, h, Lq, Lk) @ (B, h, Lk, d_k) -> (B, h, Lq, d_k)\n\n"
         "# 10. Concatenate the heads: back to (B, Lq, h, d_k), then the heads side by side.\n"
         "concat = context.transpose(1, 2).reshape(B, Lq, d_model)  # (B, Lq, d_model)\n\n";
  if (s.weights.w_o) {
    out << "# 11. Output projection: W_o mixes what the heads found.\n"
        << "o_proj = linear(W_o, " << bias_name(s, s.weights.b_o, "b_o") << ")\n"
        << "output = o_proj(concat)  # (B, Lq, d_model)\n";
  } else {
    out << "# 11. No W_o in this session (direct mode): the output is the concatenated heads.\n"
           "output = concat  # (B, Lq, d_model)\n";
  }
  out << kEpilogue;
  return out.str();
}

}  // namespace al
