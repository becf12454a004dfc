#include "teaching/labs.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "editing/edits.hpp"
#include "base/random.hpp"

namespace al {

// ---- Why √d_k -------------------------------------------------------------

double softmax_jacobian_norm(const std::vector<double>& weights) {
  // Entry (i, j) of diag(α) − ααᵀ is α_i [i = j] − α_i α_j.
  double sum_squares = 0;
  for (size_t i = 0; i < weights.size(); ++i)
    for (size_t j = 0; j < weights.size(); ++j) {
      const double entry = (i == j ? weights[i] : 0.0) - weights[i] * weights[j];
      sum_squares += entry * entry;
    }
  return std::sqrt(sum_squares);
}

double softmax_entropy(const std::vector<double>& weights) {
  double entropy = 0;
  for (double a : weights)
    if (a > 0) entropy -= a * std::log(a);  // 0 log 0 = 0
  return entropy;
}

std::vector<double> softmax_double(const std::vector<double>& scores) {
  const double max = *std::max_element(scores.begin(), scores.end());
  std::vector<double> weights(scores.size());
  double sum = 0;
  for (size_t i = 0; i < scores.size(); ++i) sum += weights[i] = std::exp(scores[i] - max);
  for (double& w : weights) w /= sum;
  return weights;
}

std::vector<SqrtDkPoint> sqrt_dk_experiment(const SqrtDkOptions& options) {
  std::vector<SqrtDkPoint> points;
  const Index n = std::max<Index>(options.keys, 1);
  const Index trials = std::max<Index>(options.trials, 2);
  for (Index d_k = 1; d_k <= options.max_d_k; d_k *= 2) {
    SqrtDkPoint point;
    point.d_k = d_k;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
    // Each d_k draws from its own stream, so adding a d_k leaves the others alone.
    const std::uint64_t seed = splitmix64(options.seed * 1000003u + static_cast<std::uint64_t>(d_k));
    std::uint64_t counter = 0;
    double sum = 0, sum_squares = 0;
    std::vector<double> q(static_cast<size_t>(d_k)), scores(static_cast<size_t>(n)), scaled(scores.size());
    for (Index t = 0; t < trials; ++t) {
      for (double& v : q) v = normal01(seed, counter++);
      for (Index j = 0; j < n; ++j) {
        double dot = 0;
        for (Index c = 0; c < d_k; ++c) dot += q[static_cast<size_t>(c)] * normal01(seed, counter++);
        scores[static_cast<size_t>(j)] = dot;
        scaled[static_cast<size_t>(j)] = dot * scale;
        // Every key's score, not one a draw: 200 draws of one score put d_k = 64 at 78 (the sample
        // variance's spread is about a tenth); all n keys cut the spread about fourfold.
        sum += dot;
        sum_squares += dot * dot;
      }
      const auto raw = softmax_double(scores);
      const auto soft = softmax_double(scaled);
      point.max_weight_raw += *std::max_element(raw.begin(), raw.end());
      point.max_weight_scaled += *std::max_element(soft.begin(), soft.end());
      point.entropy_raw += softmax_entropy(raw);
      point.entropy_scaled += softmax_entropy(soft);
      point.jacobian_raw += softmax_jacobian_norm(raw);
      point.jacobian_scaled += softmax_jacobian_norm(soft);
    }
    const double count = static_cast<double>(trials);
    const double scores_count = count * static_cast<double>(n);
    const double mean = sum / scores_count;
    // Sample variance over every score; scaling by 1/√d_k divides it by d_k exactly.
    point.variance_raw = (sum_squares - scores_count * mean * mean) / (scores_count - 1);
    point.variance_scaled = point.variance_raw * scale * scale;
    for (double* m : {&point.max_weight_raw, &point.max_weight_scaled, &point.entropy_raw,
                      &point.entropy_scaled, &point.jacobian_raw, &point.jacobian_scaled})
      *m /= count;
    points.push_back(point);
  }
  return points;
}

// ---- Mask fill --------------------------------------------------------------

std::vector<double> lab_mask_fills() {
  return {-std::numeric_limits<double>::infinity(), -1e9, -1e20, -1e-20};
}

std::vector<MaskFillResult> compare_mask_fills(const Session& session,
                                               const std::vector<double>& fills) {
  std::vector<MaskFillResult> results;
  for (double fill : fills) {
    MaskFillResult result;
    result.fill = fill;
    Session copy = session;
    copy.config.mask_fill = fill;
    auto trace = compute(copy);
    if (!trace) {
      result.error = trace.error();
      results.push_back(std::move(result));
      continue;
    }
    result.trace = *trace;
    const Trace& t = *result.trace;
    if (t.mask) {
      const Tensor& weights = t.stage(Stage::Weights);  // (B, h, Lq, Lk)
      const Dims& d = t.dims;
      for (Index b = 0; b < d.batch; ++b) {
        const auto mask = t.mask->matrix(b);  // (Lq, Lk)
        for (Index h = 0; h < d.heads; ++h) {
          const auto w = weights.matrix(b * d.heads + h);
          for (Index i = 0; i < d.len_q; ++i) {
            if (t.fully_masked_rows[static_cast<size_t>(b * d.len_q + i)]) {
              ++result.fully_masked_rows;
              bool nan = false, uniform = true;
              for (Index j = 0; j < d.len_kv; ++j) {
                nan = nan || std::isnan(w(i, j));
                uniform = uniform && std::abs(w(i, j) - 1.0f / static_cast<float>(d.len_kv)) < 1e-6f;
              }
              result.fully_masked_nan = result.fully_masked_nan || nan;
              result.fully_masked_uniform = result.fully_masked_uniform || uniform;
              continue;
            }
            for (Index j = 0; j < d.len_kv; ++j) {
              if (mask(i, j) != 0.0f) continue;
              ++result.masked_cells;
              result.masked_exactly_zero = result.masked_exactly_zero && w(i, j) == 0.0f;
              result.max_leak = std::max(result.max_leak, w(i, j));
            }
          }
        }
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

Session mask_fill_example() {
  Session s;
  s.config.mode = InputMode::Direct;
  s.config.d_model = 2;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.config.mask.causal = true;
  s.tokens = {"<pad>", "I", "like", "cats"};
  // (1, 4, 2) each: small numbers, so the scores are O(1) and a tiny fill
  // like −1e-20 sits right among them.
  s.q = make_tensor(Tensor({1, 4, 2}, {0.0f, 0.0f, 1.0f, 0.0f, 0.5f, 1.0f, 1.0f, 1.0f}));
  s.k = make_tensor(Tensor({1, 4, 2}, {0.0f, 0.0f, 1.0f, 0.5f, 0.0f, 1.0f, 1.0f, -0.5f}));
  s.v = make_tensor(Tensor({1, 4, 2}, {0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f}));
  s.config.mask.key_padding = make_tensor(Tensor({1, 4}, {0.0f, 1.0f, 1.0f, 1.0f}));
  return s;
}

// ---- Softmax stability ------------------------------------------------------

std::vector<float> softmax_naive(const std::vector<float>& x) {
  std::vector<float> e(x.size());
  float sum = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) sum += e[i] = std::exp(x[i]);  // float exp: inf above 88.72
  for (float& v : e) v /= sum;
  return e;
}

std::vector<float> softmax_stable(const std::vector<float>& x) {
  if (x.empty()) return {};
  const float max = *std::max_element(x.begin(), x.end());
  std::vector<float> e(x.size());
  float sum = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) sum += e[i] = std::exp(x[i] - max);
  for (float& v : e) v /= sum;
  return e;
}

float float_exp_limit() { return std::log(FLT_MAX); }

SoftmaxStabilityTable softmax_stability_table(const std::vector<float>& base, float scale) {
  SoftmaxStabilityTable t;
  if (base.empty()) return t;
  for (float b : base) t.x.push_back(b * scale);
  const float max = *std::max_element(t.x.begin(), t.x.end());
  for (float v : t.x) {
    t.exp_x.push_back(std::exp(v));
    t.shifted.push_back(v - max);
    t.exp_shifted.push_back(std::exp(v - max));
  }
  t.naive = softmax_naive(t.x);
  t.stable = softmax_stable(t.x);
  t.naive_broken = softmax_row_broken(t.naive);
  return t;
}

bool softmax_row_broken(const std::vector<float>& weights) {
  double sum = 0;
  for (float w : weights) {
    if (!std::isfinite(w)) return true;
    sum += w;
  }
  return std::abs(sum - 1.0) > 1e-3;
}

float naive_softmax_break_scale(const std::vector<float>& base) {
  auto broken = [&](float scale) {
    std::vector<float> x(base);
    for (float& v : x) v *= scale;
    return softmax_row_broken(softmax_naive(x));
  };
  if (base.empty() || !broken(FLT_MAX)) return std::numeric_limits<float>::infinity();
  // Once broken, a larger factor stays broken: bisect between fine and broken.
  float fine = 0.0f, bad = FLT_MAX;
  for (int i = 0; i < 200 && std::nextafter(fine, bad) < bad; ++i) {
    const float mid = fine + 0.5f * (bad - fine);
    (broken(mid) ? bad : fine) = mid;
  }
  return bad;
}

// ---- Fused QKV ---------------------------------------------------------------

namespace {
// (rows, cols) copy of a tensor's k-th trailing matrix (a 1-D tensor is one row).
Tensor matrix_copy(const Tensor& t, Index k = 0) {
  Tensor out({t.rows(), t.cols()});
  MatrixMap(out.data.data(), t.rows(), t.cols()) = t.matrix(k);
  return out;
}
Tensor columns(const Tensor& m, Index first, Index count) {
  Tensor out({m.rows(), count});
  MatrixMap(out.data.data(), m.rows(), count) = m.matrix().middleCols(first, count);
  return out;
}
float max_abs_diff(const Tensor& a, const Tensor& b) {
  float diff = 0;
  for (size_t i = 0; i < a.data.size(); ++i) diff = std::max(diff, std::abs(a.data[i] - b.data[i]));
  return diff;
}
}  // namespace

Result<FusedQkvComparison> compare_fused_qkv(const Session& session, Index batch) {
  if (session.config.mode != InputMode::Projection || session.config.attention != AttentionKind::Self)
    return make_error(ErrorCode::InvalidConfig,
                      "fused QKV needs projection mode and self attention (one X feeds Q, K and V)");
  if (auto error = validate(session)) return *error;
  const Index d = session.config.d_model;
  FusedQkvComparison c;
  const Index items = session.x->rank() >= 3 ? session.x->dim(0) : 1;
  c.x = matrix_copy(*session.x, std::clamp<Index>(batch, 0, items - 1));  // (L, d)
  const Index len = c.x.rows();
  const InputId weight_ids[3] = {InputId::WQ, InputId::WK, InputId::WV};
  const InputId bias_ids[3] = {InputId::BQ, InputId::BK, InputId::BV};
  Tensor* blocks[3] = {&c.w_q, &c.w_k, &c.w_v};
  // Q's block is d wide; K's and V's h_kv·d_k (d unless K/V heads are grouped).
  const Index kv = session.config.kv_width();
  const Index widths[3] = {d, kv, kv}, offsets[3] = {0, d, d + kv}, total = d + 2 * kv;
  c.w_qkv = Tensor({d, total});
  if (session.config.bias) c.b_qkv = Tensor({total});
  for (int i = 0; i < 3; ++i) {
    *blocks[i] = matrix_copy(*input(session, weight_ids[i]));
    c.w_qkv.matrix().middleCols(offsets[i], widths[i]) = blocks[i]->matrix();
    if (session.config.bias) {
      const TensorPtr bias = input(session, bias_ids[i]);
      std::copy(bias->data.begin(), bias->data.end(), c.b_qkv.data.begin() + offsets[i]);
    }
  }
  // One product for all three, as seed 004's V2/V3 do.
  c.qkv_fused = Tensor({len, total});
  MatrixMap fused(c.qkv_fused.data.data(), len, total);
  fused.noalias() = c.x.matrix() * c.w_qkv.matrix();
  if (session.config.bias) fused.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(c.b_qkv.data.data(), total);
  Tensor* split[3] = {&c.q_fused, &c.k_fused, &c.v_fused};
  Tensor* separate[3] = {&c.q_separate, &c.k_separate, &c.v_separate};
  float* diffs[3] = {&c.max_diff_q, &c.max_diff_k, &c.max_diff_v};
  for (int i = 0; i < 3; ++i) {
    *split[i] = columns(c.qkv_fused, offsets[i], widths[i]);
    // Three products, as seed 004's V1 does.
    *separate[i] = Tensor({len, widths[i]});
    MatrixMap out(separate[i]->data.data(), len, widths[i]);
    out.noalias() = c.x.matrix() * blocks[i]->matrix();
    if (session.config.bias)
      out.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(c.b_qkv.data.data() + offsets[i], widths[i]);
    *diffs[i] = max_abs_diff(*split[i], *separate[i]);
  }
  return c;
}

}  // namespace al
