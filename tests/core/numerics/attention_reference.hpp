#pragma once
// Test support for the attention tests: tensors from literals, random
// sessions, and a reference computation written independently of core/ —
// naive loops in double precision with std::exp, straight from the formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "numerics/attention.hpp"
#include "base/random.hpp"

namespace attention_test {

using al::Index;
using al::Tensor;
using al::TensorPtr;

inline TensorPtr tensor(std::vector<Index> shape, std::vector<float> values) {
  return al::make_tensor(Tensor(std::move(shape), std::move(values)));
}
inline TensorPtr random_tensor(std::vector<Index> shape, std::uint64_t seed, double stddev = 1.0) {
  return al::make_tensor(al::random_normal(std::move(shape), seed, stddev));
}

// A projection-mode self-attention session with random inputs and weights.
inline al::Session random_projection_session(Index batch, Index len, Index d_model, Index heads,
                                             std::uint64_t seed = 1) {
  al::Session s;
  s.config.mode = al::InputMode::Projection;
  s.config.d_model = d_model;
  s.config.num_heads = heads;
  s.config.bias = true;
  s.x = random_tensor({batch, len, d_model}, seed);
  const double w = 1.0 / std::sqrt(static_cast<double>(d_model));
  s.weights.w_q = random_tensor({d_model, d_model}, seed + 1, w);
  s.weights.w_k = random_tensor({d_model, d_model}, seed + 2, w);
  s.weights.w_v = random_tensor({d_model, d_model}, seed + 3, w);
  s.weights.w_o = random_tensor({d_model, d_model}, seed + 4, w);
  s.weights.b_q = random_tensor({d_model}, seed + 5, 0.1);
  s.weights.b_k = random_tensor({d_model}, seed + 6, 0.1);
  s.weights.b_v = random_tensor({d_model}, seed + 7, 0.1);
  s.weights.b_o = random_tensor({d_model}, seed + 8, 0.1);
  return s;
}

// The session with grouped-query K/V: num_kv_heads heads, new random W_K, W_V (d_model, H_kv·d_k)
// and b_K, b_V (H_kv·d_k).
inline al::Session with_kv_heads(al::Session s, Index kv_heads, std::uint64_t seed) {
  const Index d = s.config.d_model, width = kv_heads * (d / s.config.num_heads);
  const double w = 1.0 / std::sqrt(static_cast<double>(d));
  s.config.num_kv_heads = kv_heads;
  s.weights.w_k = random_tensor({d, width}, seed, w);
  s.weights.w_v = random_tensor({d, width}, seed + 1, w);
  s.weights.b_k = random_tensor({width}, seed + 2, 0.1);
  s.weights.b_v = random_tensor({width}, seed + 3, 0.1);
  return s;
}

// A direct-mode session: Q (B, Lq, d), K and V (B, Lk, d), no W_O.
inline al::Session random_direct_session(Index batch, Index len_q, Index len_kv, Index d_model, Index heads,
                                         std::uint64_t seed = 1) {
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.attention = len_q == len_kv ? al::AttentionKind::Self : al::AttentionKind::Cross;
  s.config.d_model = d_model;
  s.config.num_heads = heads;
  s.config.bias = false;
  s.q = random_tensor({batch, len_q, d_model}, seed);
  s.k = random_tensor({batch, len_kv, d_model}, seed + 1);
  s.v = random_tensor({batch, len_kv, d_model}, seed + 2);
  return s;
}

// ---- the reference ----------------------------------------------------------

struct Reference {
  Index B = 0, h = 0, Lq = 0, Lk = 0, d = 0, dk = 0;
  std::vector<double> q, k, v;                        // (B, h, L, d_k)
  std::vector<double> scores, masked, weights, dropped;  // (B, h, Lq, Lk)
  std::vector<double> concat, output;                 // (B, Lq, d)
};

// x (rows, d) · w (d, out) with w's columns [col, col + d) and bias, one row at a time.
inline std::vector<double> naive_linear(const Tensor& x, const Tensor& w, Index col, const Tensor* bias, Index d) {
  const Index rows = x.size() / d, w_cols = w.shape[1];
  std::vector<double> y(static_cast<size_t>(rows * d));
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < d; ++c) {
      double sum = bias ? bias->data[static_cast<size_t>(col + c)] : 0.0;
      for (Index i = 0; i < d; ++i) sum += double(x.data[size_t(r * d + i)]) * w.data[size_t(i * w_cols + col + c)];
      y[size_t(r * d + c)] = sum;
    }
  return y;
}

inline std::vector<double> to_double(const Tensor& t) { return std::vector<double>(t.data.begin(), t.data.end()); }

// (B, L, d) -> (B, h, L, d_k): head hh is columns [hh·d_k, (hh+1)·d_k).
inline std::vector<double> split_heads(const std::vector<double>& x, Index B, Index L, Index d, Index h) {
  const Index dk = d / h;
  std::vector<double> y(x.size());
  for (Index b = 0; b < B; ++b)
    for (Index l = 0; l < L; ++l)
      for (Index c = 0; c < d; ++c)
        y[size_t(((b * h + c / dk) * L + l) * dk + c % dk)] = x[size_t((b * L + l) * d + c)];
  return y;
}

inline Reference reference_attention(const al::Session& s) {
  const al::Config& c = s.config;
  Reference r;
  r.d = c.d_model;
  r.h = c.num_heads;
  r.dk = r.d / r.h;
  const bool direct = c.mode == al::InputMode::Direct;
  const Tensor& xq = direct ? *s.q : *s.x;
  const Tensor& xkv = direct ? *s.k : (c.attention == al::AttentionKind::Cross ? *s.x_kv : *s.x);
  r.B = xq.rank() == 3 ? xq.shape[0] : 1;
  r.Lq = xq.shape[xq.shape.size() - 2];
  r.Lk = xkv.shape[xkv.shape.size() - 2];
  std::vector<double> q, k, v;
  if (direct) {
    q = to_double(*s.q);
    k = to_double(*s.k);
    v = to_double(*s.v);
  } else {
    const al::Weights& w = s.weights;
    const Tensor* xs[3] = {s.x.get(), &xkv, &xkv};
    std::vector<double>* outs[3] = {&q, &k, &v};
    for (int i = 0; i < 3; ++i) {
      if (w.fused()) {
        *outs[i] = naive_linear(*xs[i], *w.w_qkv, i * r.d, c.bias ? w.b_qkv.get() : nullptr, r.d);
      } else {
        const TensorPtr ws[3] = {w.w_q, w.w_k, w.w_v}, bs[3] = {w.b_q, w.b_k, w.b_v};
        *outs[i] = naive_linear(*xs[i], *ws[i], 0, c.bias ? bs[i].get() : nullptr, r.d);
      }
    }
  }
  r.q = split_heads(q, r.B, r.Lq, r.d, r.h);
  r.k = split_heads(k, r.B, r.Lk, r.d, r.h);
  r.v = split_heads(v, r.B, r.Lk, r.d, r.h);

  const double scale = c.scale.mode == al::ScaleMode::SqrtDk ? 1.0 / std::sqrt(double(r.dk))
                       : c.scale.mode == al::ScaleMode::None ? 1.0
                                                             : c.scale.factor;
  auto attends = [&](Index b, Index i, Index j) {
    if (c.mask.causal && j > i) return false;
    if (c.mask.key_padding && c.mask.key_padding->data[size_t(b * r.Lk + j)] == 0.0f) return false;
    if (c.mask.custom) {
      const Index base = c.mask.custom->rank() == 3 ? b * r.Lq * r.Lk : 0;
      if (c.mask.custom->data[size_t(base + i * r.Lk + j)] == 0.0f) return false;
    }
    return true;
  };
  const size_t n = size_t(r.B * r.h * r.Lq * r.Lk);
  r.scores.resize(n);
  r.masked.resize(n);
  r.weights.resize(n);
  r.dropped.resize(n);
  const double fill = double(float(c.mask_fill));  // the core stores scores as float
  std::vector<double> context(size_t(r.B * r.h * r.Lq * r.dk));
  for (Index b = 0; b < r.B; ++b)
    for (Index hh = 0; hh < r.h; ++hh)
      for (Index i = 0; i < r.Lq; ++i) {
        const Index bh = b * r.h + hh, row = (bh * r.Lq + i) * r.Lk;
        for (Index j = 0; j < r.Lk; ++j) {
          double dot = 0;
          for (Index t = 0; t < r.dk; ++t)
            dot += r.q[size_t((bh * r.Lq + i) * r.dk + t)] * r.k[size_t((bh * r.Lk + j) * r.dk + t)];
          r.scores[size_t(row + j)] = dot;
          r.masked[size_t(row + j)] = attends(b, i, j) ? dot * scale : fill;
        }
        double max = -std::numeric_limits<double>::infinity();
        for (Index j = 0; j < r.Lk; ++j) max = std::max(max, r.masked[size_t(row + j)]);
        double sum = 0;
        for (Index j = 0; j < r.Lk; ++j) sum += std::exp(r.masked[size_t(row + j)] - max);
        for (Index j = 0; j < r.Lk; ++j) {
          const double w = std::exp(r.masked[size_t(row + j)] - max) / sum;
          r.weights[size_t(row + j)] = w;
          const bool active = c.dropout.training && c.dropout.p > 0;
          const bool keep = !active || al::dropout_keeps(c.dropout.seed, c.dropout.p, row + j);
          r.dropped[size_t(row + j)] = keep ? (active ? w / (1.0 - c.dropout.p) : w) : 0.0;
        }
        for (Index t = 0; t < r.dk; ++t) {
          double acc = 0;
          for (Index j = 0; j < r.Lk; ++j)
            acc += r.dropped[size_t(row + j)] * r.v[size_t((bh * r.Lk + j) * r.dk + t)];
          context[size_t((bh * r.Lq + i) * r.dk + t)] = acc;
        }
      }
  r.concat.resize(size_t(r.B * r.Lq * r.d));
  for (Index b = 0; b < r.B; ++b)
    for (Index i = 0; i < r.Lq; ++i)
      for (Index cc = 0; cc < r.d; ++cc)
        r.concat[size_t((b * r.Lq + i) * r.d + cc)] =
            context[size_t(((b * r.h + cc / r.dk) * r.Lq + i) * r.dk + cc % r.dk)];
  if (s.weights.w_o) {
    const Tensor* b_o = c.bias ? s.weights.b_o.get() : nullptr;
    r.output.resize(r.concat.size());
    for (size_t row = 0; row < size_t(r.B * r.Lq); ++row)
      for (Index cc = 0; cc < r.d; ++cc) {
        double acc = b_o ? b_o->data[size_t(cc)] : 0.0;
        for (Index t = 0; t < r.d; ++t)
          acc += r.concat[row * size_t(r.d) + size_t(t)] * s.weights.w_o->data[size_t(t * r.d + cc)];
        r.output[row * size_t(r.d) + size_t(cc)] = acc;
      }
  } else {
    r.output = r.concat;
  }
  return r;
}

// ---- comparisons --------------------------------------------------------------

// Every value within atol + rtol·|expected|; NaN matches NaN, infinities match exactly.
inline void check_close(const Tensor& actual, const std::vector<double>& expected, const std::string& what,
                        double rtol = 1e-5, double atol = 1e-5) {
  REQUIRE_MESSAGE(actual.data.size() == expected.size(), what);
  int reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double a = actual.data[i], e = expected[i];
    const bool ok = (std::isnan(a) && std::isnan(e)) || (std::isinf(e) && a == e) ||
                    std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!ok && reported++ < 5) FAIL_CHECK(what << "[" << i << "] = " << a << ", expected " << e);
  }
  CHECK_MESSAGE(reported == 0, what << ": " << reported << " values differ");
}

inline void check_same_values(const Tensor& a, const Tensor& b, const std::string& what, double tol) {
  REQUIRE_MESSAGE(a.shape == b.shape, what);
  check_close(a, std::vector<double>(b.data.begin(), b.data.end()), what, tol, tol);
}

inline std::shared_ptr<const al::Trace> compute_ok(const al::Session& s, const al::ComputeOptions& options = {}) {
  auto result = al::compute(s, options);
  if (!result) FAIL(result.error().message);
  return result.value();
}

// Every row of the weights sums to 1.
inline void check_rows_sum_to_one(const al::Trace& t) {
  const Tensor& w = t.stage(al::Stage::Weights);
  const Index lk = t.dims.len_kv;
  for (Index row = 0; row < w.size() / lk; ++row) {
    double sum = 0;
    for (Index j = 0; j < lk; ++j) sum += w.data[size_t(row * lk + j)];
    REQUIRE(sum == doctest::Approx(1.0).epsilon(1e-5));
  }
}

// The error of a session compute() refuses.
inline al::Error compute_error(const al::Session& s, const al::ComputeOptions& options = {}) {
  auto result = al::compute(s, options);
  REQUIRE_FALSE(result.ok());
  // validate() must agree with compute() about what is wrong (except the memory check).
  if (result.error().code != al::ErrorCode::TooLarge) {
    auto v = al::validate(s);
    REQUIRE(v.has_value());
    CHECK(v->code == result.error().code);
  }
  return result.error();
}

}  // namespace attention_test
