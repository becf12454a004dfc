#pragma once
// Test support for the backward pass: the forward written again in double
// precision with plain loops (independent of core/), whose inputs and stages can
// be nudged, so central finite differences give every gradient.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "numerics/attention.hpp"
#include "model/trace.hpp"

namespace backward_test {

using al::Index;
using Values = std::vector<double>;
// Every input and weight the session uses, by the session's own name, flat in
// math layout (the session holds weights that way).
using Inputs = std::map<std::string, Values>;
// Called after each stage is computed, to nudge one of its values.
using StageHook = std::function<void(al::Stage, Values&)>;

inline Values values_of(const al::Tensor& t) { return Values(t.data.begin(), t.data.end()); }

inline Inputs inputs_of(const al::Session& s) {
  Inputs in;
  auto put = [&](const char* name, const al::TensorPtr& t) {
    if (t) in[name] = values_of(*t);
  };
  const bool cross = s.config.attention == al::AttentionKind::Cross;
  if (s.config.mode == al::InputMode::Direct) {
    put("q", s.q);
    put("k", s.k);
    put("v", s.v);
  } else {
    put(cross ? "x_q" : "x", s.x);
    if (cross) put("x_kv", s.x_kv);
    if (s.weights.fused()) {
      put("w_qkv", s.weights.w_qkv);
      if (s.config.bias) put("b_qkv", s.weights.b_qkv);
    } else {
      put("w_q", s.weights.w_q);
      put("w_k", s.weights.w_k);
      put("w_v", s.weights.w_v);
      if (s.config.bias) {
        put("b_q", s.weights.b_q);
        put("b_k", s.weights.b_k);
        put("b_v", s.weights.b_v);
      }
    }
  }
  put("w_o", s.weights.w_o);
  if (s.config.bias && s.weights.w_o) put("b_o", s.weights.b_o);
  return in;
}

struct Forward {
  std::map<al::Stage, Values> stages;
  double loss = 0;
};

// Press et al.'s ALiBi slopes for n heads: 2^(−8(h+1)/n) for n a power of two; otherwise those of the
// largest power of two below n, then every other slope of twice that many.
inline std::vector<double> alibi_slopes(Index n) {
  auto power_of_2 = [](Index m) {
    std::vector<double> slopes;
    const double start = std::pow(2.0, -8.0 / double(m));
    for (Index i = 0; i < m; ++i) slopes.push_back(std::pow(start, double(i + 1)));
    return slopes;
  };
  Index closest = 1;
  while (closest * 2 <= n) closest *= 2;
  std::vector<double> slopes = power_of_2(closest);
  const std::vector<double> more = power_of_2(2 * closest);
  for (Index i = 0; slopes.size() < size_t(n); i += 2) slopes.push_back(more[size_t(i)]);
  return slopes;
}

// The session's computation on `in`, with L = Σ output ⊙ G. A query whose every
// key is masked with −∞ fill attends nothing (weights 0): the convention the
// backward's gradients follow (backward.hpp).
inline Forward reference_forward(const al::Session& s, const Inputs& in, const Values& upstream,
                                 const StageHook& hook = nullptr) {
  using al::Stage;
  const al::Config& c = s.config;
  const bool direct = c.mode == al::InputMode::Direct, cross = c.attention == al::AttentionKind::Cross;
  const Index d = c.d_model, h = c.num_heads, dk = d / h;
  const al::TensorPtr& q_input = direct ? s.q : s.x;
  const al::TensorPtr& kv_input = direct ? s.k : (cross ? s.x_kv : s.x);
  const Index Lq = q_input->dim(-2), Lk = kv_input->dim(-2), B = q_input->size() / (Lq * d);
  Forward f;
  auto stage = [&](Stage st, Values v) {
    if (hook) hook(st, v);
    return f.stages[st] = std::move(v);
  };

  // Grouped-query K/V: K and V have kv_heads heads (kv_width columns); query head hh reads hh / group.
  const Index kv_heads = c.num_kv_heads > 0 ? c.num_kv_heads : h, kv_width = kv_heads * dk, group = h / kv_heads;
  const al::PositionalType positional = c.positional.type;

  // The inputs, with sinusoidal positions added: x′[p, 2i] = x + sin(p / 10000^(2i/d)), x′[p, 2i+1] = x + cos(…).
  std::array<Values, 2> inputs;  // queries' and keys'/values' (B, L, d), projection mode only
  if (!direct) {
    const char* names[2] = {cross ? "x_q" : "x", "x_kv"};
    for (int side = 0; side < (cross ? 2 : 1); ++side) {
      inputs[side] = in.at(names[side]);
      if (positional != al::PositionalType::Sinusoidal) continue;
      const Index L = side == 0 ? Lq : Lk;
      for (Index b = 0; b < B; ++b)
        for (Index p = 0; p < L; ++p)
          for (Index col = 0; col < d; ++col) {
            const double angle = double(p) / std::pow(10000.0, double(col - col % 2) / double(d));
            inputs[side][size_t((b * L + p) * d + col)] += col % 2 == 0 ? std::sin(angle) : std::cos(angle);
          }
      inputs[side] = stage(side == 0 ? Stage::XPos : Stage::XKvPos, inputs[side]);
    }
    if (!cross) inputs[1] = inputs[0];
  }

  // Q, K, V before the split into heads: (B, L, d) for Q, (B, L, kv_width) for K and V.
  std::array<Values, 3> projected;
  const char* direct_names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const Index L = i == 0 ? Lq : Lk, width = i == 0 ? d : kv_width;
    if (direct) {
      projected[i] = in.at(direct_names[i]);
      continue;
    }
    const Values& x = inputs[i == 0 ? 0 : 1];
    const bool fused = in.count("w_qkv") > 0;
    const char* w_names[3] = {"w_q", "w_k", "w_v"};
    const char* b_names[3] = {"b_q", "b_k", "b_v"};
    const Values& w = in.at(fused ? "w_qkv" : w_names[i]);
    const Index offsets[3] = {0, d, d + kv_width};
    const Index w_cols = fused ? d + 2 * kv_width : width, col = fused ? offsets[i] : 0;
    const Values* bias = c.bias ? &in.at(fused ? "b_qkv" : b_names[i]) : nullptr;
    projected[i].assign(static_cast<size_t>(B * L * width), 0.0);
    for (Index r = 0; r < B * L; ++r)
      for (Index o = 0; o < width; ++o) {
        double sum = bias ? (*bias)[size_t(col + o)] : 0.0;
        for (Index m = 0; m < d; ++m) sum += x[size_t(r * d + m)] * w[size_t(m * w_cols + col + o)];
        projected[i][size_t(r * width + o)] = sum;
      }
  }
  const Stage qkv[3] = {Stage::Q, Stage::K, Stage::V};
  std::array<Values, 3> heads;
  for (int i = 0; i < 3; ++i) {
    const Index L = i == 0 ? Lq : Lk, n = i == 0 ? h : kv_heads, width = n * dk;
    Values v(static_cast<size_t>(B * n * L * dk));
    for (Index b = 0; b < B; ++b)
      for (Index hh = 0; hh < n; ++hh)
        for (Index l = 0; l < L; ++l)
          for (Index e = 0; e < dk; ++e)
            v[size_t(((b * n + hh) * L + l) * dk + e)] = projected[i][size_t((b * L + l) * width + hh * dk + e)];
    heads[i] = stage(qkv[i], std::move(v));
  }
  // RoPE: dimensions a, b of every query and key row at position p turned by θ = p·base^(−2k/d_k), with
  // (a, b) = (k, k + d_k/2) (half) or (2k, 2k + 1) (interleaved).
  std::array<Values, 2> scored = {heads[0], heads[1]};
  if (positional == al::PositionalType::Rope) {
    const bool half = c.positional.rope_style == al::RopeStyle::Half;
    for (int i = 0; i < 2; ++i) {
      const Index L = i == 0 ? Lq : Lk, rows = B * (i == 0 ? h : kv_heads) * L;
      for (Index r = 0; r < rows; ++r)
        for (Index k = 0; k < dk / 2; ++k) {
          const double theta = double(r % L) * std::pow(c.positional.rope_base, -2.0 * double(k) / double(dk));
          const size_t a = size_t(r * dk + (half ? k : 2 * k)), b = size_t(r * dk + (half ? k + dk / 2 : 2 * k + 1));
          const double xa = heads[i][a], xb = heads[i][b];
          scored[i][a] = xa * std::cos(theta) - xb * std::sin(theta);
          scored[i][b] = xb * std::cos(theta) + xa * std::sin(theta);
        }
      scored[i] = stage(i == 0 ? Stage::QRot : Stage::KRot, scored[i]);
    }
  }

  const size_t square = static_cast<size_t>(B * h * Lq * Lk);
  auto cell = [&](Index b, Index hh, Index i, Index j) { return size_t(((b * h + hh) * Lq + i) * Lk + j); };
  Values scores(square);
  for (Index b = 0; b < B; ++b)
    for (Index hh = 0; hh < h; ++hh)
      for (Index i = 0; i < Lq; ++i)
        for (Index j = 0; j < Lk; ++j) {
          double sum = 0;
          for (Index e = 0; e < dk; ++e)
            sum += scored[0][size_t(((b * h + hh) * Lq + i) * dk + e)] *
                   scored[1][size_t(((b * kv_heads + hh / group) * Lk + j) * dk + e)];
          scores[cell(b, hh, i, j)] = sum;
        }
  scores = stage(Stage::Scores, scores);
  const double scale = c.scale.mode == al::ScaleMode::SqrtDk ? 1.0 / std::sqrt(double(dk))
                       : c.scale.mode == al::ScaleMode::None ? 1.0
                                                             : c.scale.factor;
  Values scaled(square);
  for (size_t n = 0; n < square; ++n) scaled[n] = scores[n] * scale;
  scaled = stage(Stage::Scaled, scaled);
  // ALiBi: B = S′ − m_h·|i − j|, Press et al.'s slopes.
  Values before_mask = scaled;
  if (positional == al::PositionalType::Alibi) {
    const std::vector<double> slopes = alibi_slopes(h);
    for (Index b = 0; b < B; ++b)
      for (Index hh = 0; hh < h; ++hh)
        for (Index i = 0; i < Lq; ++i)
          for (Index j = 0; j < Lk; ++j)
            before_mask[cell(b, hh, i, j)] -= double(float(slopes[size_t(hh)] * double(std::abs(i - j))));
    before_mask = stage(Stage::Biased, before_mask);
  }

  auto is_global = [&](Index p) {
    return std::find(c.mask.global_tokens.begin(), c.mask.global_tokens.end(), p) != c.mask.global_tokens.end();
  };
  auto attends = [&](Index b, Index i, Index j) {
    if (c.mask.causal && j > i) return false;
    if (const auto& p = c.mask.key_padding; p && p->data[size_t(b * Lk + j)] == 0.0f) return false;
    if (const auto& m = c.mask.custom; m && m->data[size_t((m->rank() == 3 ? b * Lq * Lk : 0) + i * Lk + j)] == 0.0f)
      return false;
    if (c.mask.window > 0 && std::abs(i - j) >= c.mask.window && !is_global(i) && !is_global(j)) return false;
    return true;
  };
  const double fill = static_cast<float>(c.mask_fill);
  Values masked(square);
  for (Index b = 0; b < B; ++b)
    for (Index hh = 0; hh < h; ++hh)
      for (Index i = 0; i < Lq; ++i)
        for (Index j = 0; j < Lk; ++j)
          masked[cell(b, hh, i, j)] = attends(b, i, j) ? before_mask[cell(b, hh, i, j)] : fill;
  masked = stage(Stage::Masked, masked);

  Values weights(square);
  for (size_t row = 0; row < square; row += size_t(Lk)) {
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (Index j = 0; j < Lk; ++j) max = std::max(max, masked[row + size_t(j)]);
    if (std::isinf(max) && max < 0) continue;  // every key masked with −∞: attends nothing
    for (Index j = 0; j < Lk; ++j) sum += std::exp(masked[row + size_t(j)] - max);
    for (Index j = 0; j < Lk; ++j) weights[row + size_t(j)] = std::exp(masked[row + size_t(j)] - max) / sum;
  }
  weights = stage(Stage::Weights, weights);

  Values dropped = weights;
  if (c.dropout.training && c.dropout.p > 0)
    for (size_t n = 0; n < square; ++n)
      dropped[n] = al::dropout_keeps(c.dropout.seed, c.dropout.p, Index(n)) ? weights[n] / (1.0 - c.dropout.p) : 0.0;
  dropped = stage(Stage::Dropped, dropped);

  Values context(static_cast<size_t>(B * h * Lq * dk));
  for (Index b = 0; b < B; ++b)
    for (Index hh = 0; hh < h; ++hh)
      for (Index i = 0; i < Lq; ++i)
        for (Index e = 0; e < dk; ++e) {
          double sum = 0;
          for (Index j = 0; j < Lk; ++j)
            sum += dropped[cell(b, hh, i, j)] * heads[2][size_t(((b * kv_heads + hh / group) * Lk + j) * dk + e)];
          context[size_t(((b * h + hh) * Lq + i) * dk + e)] = sum;
        }
  context = stage(Stage::Context, context);

  Values concat(static_cast<size_t>(B * Lq * d));
  for (Index b = 0; b < B; ++b)
    for (Index i = 0; i < Lq; ++i)
      for (Index hh = 0; hh < h; ++hh)
        for (Index e = 0; e < dk; ++e)
          concat[size_t((b * Lq + i) * d + hh * dk + e)] = context[size_t(((b * h + hh) * Lq + i) * dk + e)];
  concat = stage(Stage::Concat, concat);

  Values output = concat;
  if (in.count("w_o")) {
    const Values& w = in.at("w_o");
    const Values* bias = in.count("b_o") ? &in.at("b_o") : nullptr;
    for (Index r = 0; r < B * Lq; ++r)
      for (Index o = 0; o < d; ++o) {
        double sum = bias ? (*bias)[size_t(o)] : 0.0;
        for (Index m = 0; m < d; ++m) sum += concat[size_t(r * d + m)] * w[size_t(m * d + o)];
        output[size_t(r * d + o)] = sum;
      }
  }
  output = stage(Stage::Output, output);
  for (size_t n = 0; n < output.size(); ++n) f.loss += output[n] * upstream[n];
  return f;
}

// dL/d(every input) by central differences.
inline Inputs finite_difference_inputs(const al::Session& s, const Values& upstream, double step = 1e-6) {
  const Inputs base = inputs_of(s);
  Inputs grads;
  for (const auto& [name, values] : base) {
    Values& g = grads[name];
    g.resize(values.size());
    for (size_t n = 0; n < values.size(); ++n) {
      Inputs plus = base, minus = base;
      plus[name][n] += step;
      minus[name][n] -= step;
      g[n] = (reference_forward(s, plus, upstream).loss - reference_forward(s, minus, upstream).loss) / (2 * step);
    }
  }
  return grads;
}

// dL/d(stage value) by central differences: the stage is nudged as it is
// computed and everything after it follows.
inline Values finite_difference_stage(const al::Session& s, const Values& upstream, al::Stage which,
                                      double step = 1e-6) {
  const Inputs in = inputs_of(s);
  const Values base = reference_forward(s, in, upstream).stages.at(which);
  Values g(base.size());
  for (size_t n = 0; n < base.size(); ++n) {
    auto nudge = [&](double by) {
      return reference_forward(s, in, upstream, [&](al::Stage st, Values& v) {
               if (st == which) v[n] += by;
             }).loss;
    };
    // A stage value may be large (a −1e9 fill): the step grows with it, and the
    // difference is divided by the step actually taken after rounding.
    const double v = base[n], h = std::isfinite(v) ? std::max(step, 1e-12 * std::abs(v)) : step;
    g[n] = (nudge(h) - nudge(-h)) / (std::isfinite(v) ? (v + h) - (v - h) : 2 * h);
  }
  return g;
}

}  // namespace backward_test
