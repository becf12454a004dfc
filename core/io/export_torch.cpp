// The session as a runnable PyTorch script (see export_torch.hpp).
#include "io/export_torch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "numerics/attention.hpp"
#include "io/matrix_io.hpp"

namespace al {
namespace {

// Tensors up to this many elements are written as readable nested lists; bigger
// ones as base64 of their bytes (a 1M-element list would make a script Python
// parses slowly and no one reads).
constexpr Index kInlineElements = 4096;

// The shortest decimal that Python reads back (as a double, then rounded to
// float32 by torch.tensor) to exactly this float: readable ("0.1", not
// "0.100000001") and exact. Nine significant digits always suffice.
std::string python_float(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(value));
    if (static_cast<float>(std::strtod(buffer, nullptr)) == value) break;
  }
  return buffer;
}

// Same for a double (scale factors, fill values): shortest exact form.
std::string python_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string python_string(const std::string& text) {
  // A JSON string literal is also a valid Python string literal.
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string shape_tuple(const std::vector<Index>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// Nested Python lists laid out like numpy prints them: one innermost row per line.
void write_nested(std::ostringstream& out, const Tensor& t, size_t dim, Index offset, int indent,
                  bool binary) {
  const Index n = t.shape[dim];
  out << '[';
  if (dim + 1 == t.shape.size()) {
    for (Index i = 0; i < n; ++i) {
      const float value = t.data[static_cast<size_t>(offset + i)];
      out << (i ? ", " : "") << (binary ? std::to_string(value != 0.0f ? 1 : 0) : python_float(value));
    }
  } else {
    const Index stride = shape_product({t.shape.begin() + static_cast<long>(dim) + 1, t.shape.end()});
    for (Index i = 0; i < n; ++i) {
      if (i) out << ",\n" << std::string(static_cast<size_t>(indent + 1), ' ');
      write_nested(out, t, dim + 1, offset + i * stride, indent + 1, binary);
    }
  }
  out << ']';
}

std::string base64(const unsigned char* bytes, size_t size) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const unsigned a = bytes[i], b = i + 1 < size ? bytes[i + 1] : 0, c = i + 2 < size ? bytes[i + 2] : 0;
    out += alphabet[a >> 2];
    out += alphabet[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < size ? alphabet[((b & 15) << 2) | (c >> 6)] : '=';
    out += i + 2 < size ? alphabet[c & 63] : '=';
  }
  return out;
}

// `name = <tensor>`, under a comment naming its axes and their sizes. `binary`
// tensors (masks, dropout keeps) are written as 0/1 (as uint8 bytes when large).
void write_tensor(std::ostringstream& out, const std::string& name, const Tensor& t,
                  const std::string& comment, const std::string& axes, bool binary = false) {
  out << "# " << comment << ". " << axes << " = " << shape_tuple(t.shape) << "\n";
  if (t.size() == 0) {
    out << name << " = torch.zeros(" << shape_tuple(t.shape) << ")\n";
    return;
  }
  if (t.size() <= kInlineElements) {
    out << name << " = torch.tensor(";
    write_nested(out, t, 0, 0, static_cast<int>(name.size() + 16), binary);
    out << ", dtype=torch.float32)\n";
    return;
  }
  std::string encoded;
  if (binary) {
    std::vector<unsigned char> bits(t.data.size());
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = t.data[i] != 0.0f ? 1 : 0;
    encoded = base64(bits.data(), bits.size());
  } else {
    // x86 and ARM are little-endian, which is what unpack() reads.
    encoded = base64(reinterpret_cast<const unsigned char*>(t.data.data()), t.data.size() * sizeof(float));
  }
  out << name << " = unpack(" << shape_tuple(t.shape) << ", " << (binary ? "torch.uint8" : "torch.float32")
      << ", [\n";
  constexpr size_t kLine = 96;
  for (size_t i = 0; i < encoded.size(); i += kLine) out << "    \"" << encoded.substr(i, kLine) << "\",\n";
  out << "])" << (binary ? ".float()" : "") << "\n";
}

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
  const std::string x_q = cross ? "x_q" : "x", x_kv = cross ? "x_kv" : "x";
  out << "# ---------------------------------------------------------------------------\n"
         "# 2. Projections: every query token's embedding becomes a query vector, every\n"
         "#    key token's embedding a key and a value vector (nn.Linear: x @ W.T + b).\n"
         "# ---------------------------------------------------------------------------\n";
  if (w.fused()) {
    const std::string bias = bias_name(s, w.b_qkv, "b_qkv");
    if (!cross) {
      out << "in_proj = linear(W_qkv, " << bias << ")\n"
          << "# One matrix multiply gives Q, K and V side by side; chunk splits them.\n"
          << "Q, K, V = in_proj(x).chunk(3, dim=-1)  # (B, L, 3*d_model) -> 3 x (B, L, d_model)\n\n";
      return;
    }
    out << "# Cross attention: queries and keys/values come from different inputs, so the\n"
           "# stacked matrix is split first (as nn.MultiheadAttention does for cross attention).\n"
        << "W_q, W_k, W_v = W_qkv.chunk(3, dim=0)  # 3 x (d_model, d_model)\n";
    if (bias != "None") out << "b_q, b_k, b_v = b_qkv.chunk(3)  # 3 x (d_model,)\n";
    out << "Q = linear(W_q, " << (bias == "None" ? "None" : "b_q") << ")(" << x_q << ")  # (B, Lq, d_model)\n"
        << "K = linear(W_k, " << (bias == "None" ? "None" : "b_k") << ")(" << x_kv << ")  # (B, Lk, d_model)\n"
        << "V = linear(W_v, " << (bias == "None" ? "None" : "b_v") << ")(" << x_kv << ")  # (B, Lk, d_model)\n\n";
    return;
  }
  out << "q_proj = linear(W_q, " << bias_name(s, w.b_q, "b_q") << ")\n"
      << "k_proj = linear(W_k, " << bias_name(s, w.b_k, "b_k") << ")\n"
      << "v_proj = linear(W_v, " << bias_name(s, w.b_v, "b_v") << ")\n"
      << "Q = q_proj(" << x_q << ")  # (B, Lq, d_model)\n"
      << "K = k_proj(" << x_kv << ")  # (B, Lk, d_model)\n"
      << "V = v_proj(" << x_kv << ")  # (B, Lk, d_model)\n\n";
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
    write_tensor(out, "K", batched(*s.k, 3), "K: the keys, given directly, one row per key token" + key_rows,
                 "(B, Lk, d_model)");
    write_tensor(out, "V", batched(*s.v, 3), "V: the values, given directly, one row per key token" + key_rows,
                 "(B, Lk, d_model)");
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
  if (s.config.mode == InputMode::Projection) {
    if (w.fused()) {
      write_tensor(out, "W_qkv", transposed(*w.w_qkv),
                   "W_qkv: W_q, W_k, W_v stacked, exactly nn.MultiheadAttention's in_proj_weight",
                   "(3*d_model, d_model)");
      if (bias && w.b_qkv) write_tensor(out, "b_qkv", *w.b_qkv, "b_qkv: b_q, b_k, b_v stacked (in_proj_bias)", "(3*d_model,)");
    } else {
      const std::pair<const char*, const TensorPtr*> projections[] = {
          {"q", &w.w_q}, {"k", &w.w_k}, {"v", &w.w_v}};
      const TensorPtr* biases[] = {&w.b_q, &w.b_k, &w.b_v};
      for (int i = 0; i < 3; ++i) {
        const std::string p = projections[i].first;
        write_tensor(out, "W_" + p, transposed(**projections[i].second), "W_" + p + ": the " + p + " projection",
                     "(d_model out, d_model in)");
        if (bias && *biases[i]) write_tensor(out, "b_" + p, **biases[i], "b_" + p, "(d_model,)");
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

void write_mask(std::ostringstream& out, const Session& s) {
  const MaskSpec& m = s.config.mask;
  const double fill = s.config.mask_fill;
  out << "# ---------------------------------------------------------------------------\n"
         "# 6. Mask: 1 = this query may attend to this key, 0 = it may not. Masked scores\n"
         "#    are replaced by the fill value before the softmax.\n"
         "# ---------------------------------------------------------------------------\n";
  if (!m.causal && !m.key_padding && !m.custom) {
    out << "mask = None  # this session masks nothing\n"
        << "masked = scaled  # (B, h, Lq, Lk)\n\n";
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
      << "masked = scaled.masked_fill(mask[:, None] == 0, fill)  # (B, h, Lq, Lk)\n\n";
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
      << "       h = " << dims.heads << " heads of d_k = d_model / h = " << dims.d_k << " dimensions.\n\"\"\"\n"
      << kPreamble;

  out << "# ---------------------------------------------------------------------------\n"
         "# 1. The session's numbers, float32, exactly as Attention Lab holds them.\n"
         "# ---------------------------------------------------------------------------\n"
      << "B, Lq, Lk, d_model, h = " << dims.batch << ", " << dims.len_q << ", " << dims.len_kv << ", "
      << dims.d_model << ", " << dims.heads << "\n"
      << "d_k = d_model // h  # each head works in its own d_k-dimensional slice\n";
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

  out << "# ---------------------------------------------------------------------------\n"
         "# 3. Split into heads: the d_model columns are h groups of d_k columns; each\n"
         "#    head attends on its own group.\n"
         "# ---------------------------------------------------------------------------\n"
         "def split_heads(t):\n"
         "    \"\"\"(B, L, d_model) -> view as (B, L, h, d_k) -> transpose to (B, h, L, d_k).\"\"\"\n"
         "    return t.view(t.shape[0], t.shape[1], h, d_k).transpose(1, 2)\n\n\n"
         "q = split_heads(Q)  # (B, h, Lq, d_k)\n"
         "k = split_heads(K)  # (B, h, Lk, d_k)\n"
         "v = split_heads(V)  # (B, h, Lk, d_k)\n\n"
         "# 4. Scores: the dot product of every query with every key, per head.\n"
         "scores = q @ k.transpose(-2, -1)  # (B, h, Lq, d_k) @ (B, h, d_k, Lk) -> (B, h, Lq, Lk)\n\n";

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

  write_mask(out, s);

  out << "# 7. Softmax over the keys (last axis): each query's weights are non-negative and sum to 1.\n"
         "#    torch.softmax subtracts each row's max first, so exp never overflows.\n"
         "weights = torch.softmax(masked, dim=-1)  # (B, h, Lq, Lk)\n\n";

  write_dropout(out, s, dims);

  out << (s.config.dropout.training && s.config.dropout.p > 0
              ? "# 9. Context: each query's sum of the value vectors weighted by the weights after dropout\n"
                "#    (their rows no longer sum to 1, so it is not an average).\n"
              : "# 9. Context: each query's weighted average of the value vectors.\n")
      << 
         "context = dropped @ v  # (B, h, Lq, Lk) @ (B, h, Lk, d_k) -> (B, h, Lq, d_k)\n\n"
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
