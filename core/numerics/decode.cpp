#include "numerics/decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/dropout.hpp"
#include "base/number_text.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/positions.hpp"

namespace al {

namespace {

using detail::Plan;

// A fill that lets masked keys through cannot be decoded: a decoder never sees
// a future token, but the full trace would give it weight exp(fill − max).
constexpr double kLeakyFill = -1e4;

std::optional<Error> check_decodable(const Session& s, const Plan& plan) {
  if (s.config.attention == AttentionKind::Cross)
    return make_error(ErrorCode::InvalidConfig,
                      "decoding runs a causal self-attention session token by token; this session is cross "
                      "attention, whose keys are a separate sequence known in full from the start");
  if (!plan.causal)
    return make_error(ErrorCode::InvalidConfig,
                      "decoding needs a causal mask: a decoder produces one token at a time and a token cannot "
                      "attend to tokens that do not exist yet; turn causal on");
  if (plan.mask_fill > kLeakyFill)
    return make_error(ErrorCode::InvalidConfig,
                      "with a mask fill of " + shortest_text(plan.mask_fill) +
                          " the full trace lets masked (future) keys through, which a decoder never sees; use -inf "
                          "or -1e9 to decode");
  return std::nullopt;
}

// Row t of a (B, L, width) input as a (1, width) matrix.
Matrix input_row(const Tensor& input, Index b, Index t, Index length) {
  const Index width = input.dim(-1);
  return ConstMatrixMap(input.data.data() + (b * length + t) * width, 1, width);
}

// The new token's q (h, d_k) or k/v (h_kv, d_k): x_t·W[:, block] + b, or the direct row.
Tensor project_token(const detail::ProjectionSource& src, const Matrix& x_row, Index heads, Index d_k) {
  const Index width = heads * d_k;
  Matrix y(1, width);
  if (!src.weight) {
    y = x_row;
  } else {
    const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> w(src.weight->data.data() + src.column, x_row.cols(),
                                                                width, Eigen::OuterStride<>(src.weight->cols()));
    y.noalias() = x_row * w;
    if (src.bias) y += Eigen::Map<const Eigen::RowVectorXf>(src.bias->data.data() + src.column, width);
  }
  return Tensor({1, heads, 1, d_k}, std::vector<float>(y.data(), y.data() + width));  // heads are column blocks
}

}  // namespace

bool DecodeStep::any_fully_masked() const {
  return std::find(fully_masked.begin(), fully_masked.end(), 1) != fully_masked.end();
}

Result<DecodeRun> decode(const Session& session) {
  auto planned = detail::make_plan(session);
  if (!planned) return planned.error();
  const Plan& plan = *planned;
  if (auto e = check_decodable(session, plan)) return *e;
  const Dims& d = plan.dims;
  const Index length = d.len_q, d_k = d.d_k, h = d.heads, h_kv = d.kv_heads;
  const float scale = static_cast<float>(plan.scale), fill = static_cast<float>(plan.mask_fill);

  DecodeRun run;
  run.dims = d;
  run.cache_bytes_per_token = 2 * h_kv * d_k * static_cast<Index>(sizeof(float));
  run.multi_head_bytes_per_token = 2 * h * d_k * static_cast<Index>(sizeof(float));
  auto is_global = [&](Index p) { return !plan.global_query.empty() && plan.global_query[static_cast<size_t>(p)]; };

  // The caches, per batch item, in position order: (positions), (h_kv, n, d_k) kept as rows per position.
  std::vector<std::vector<Index>> positions(static_cast<size_t>(d.batch));
  std::vector<std::vector<Tensor>> keys(static_cast<size_t>(d.batch)), values(static_cast<size_t>(d.batch));
  for (Index t = 0; t < length; ++t) {
    // Which cached positions a query from t on may still need: inside the window,
    // a global key, or any key at all while a global query is still to come.
    bool global_query_ahead = false;
    for (Index g = t; g < length && !global_query_ahead; ++g) global_query_ahead = is_global(g);
    auto kept = [&](Index p) { return plan.window == 0 || t - p < plan.window || is_global(p) || global_query_ahead; };

    DecodeStep step;
    step.t = t;
    for (Index b = 0; b < d.batch; ++b) {
      auto& pos = positions[static_cast<size_t>(b)];
      auto& ks = keys[static_cast<size_t>(b)];
      auto& vs = values[static_cast<size_t>(b)];
      // The new token: q, k, v from x row t (+ its sinusoidal position), q and k turned by RoPE to position t.
      std::array<Matrix, 3> rows;
      for (int i = 0; i < 3; ++i) {
        const detail::ProjectionSource& src = plan.qkv[i];
        rows[i] = input_row(*src.input, b, t, length);
        if (plan.sinusoidal())
          for (Index c = 0; c < rows[i].cols(); ++c)
            rows[i](0, c) += static_cast<float>(sinusoidal_position(t, c, d.d_model));
      }
      Tensor q = project_token(plan.qkv[detail::kQ], rows[0], h, d_k);
      Tensor k = project_token(plan.qkv[detail::kK], rows[1], h_kv, d_k);
      Tensor v = project_token(plan.qkv[detail::kV], rows[2], h_kv, d_k);
      if (plan.rope()) {
        rotate_by_position(q, plan.positional, q, t);
        rotate_by_position(k, plan.positional, k, t);
      }
      // Evict what no later query needs (a rolling buffer with a window), then append.
      for (size_t c = pos.size(); c-- > 0;)
        if (!kept(pos[c])) {
          pos.erase(pos.begin() + static_cast<long>(c));
          ks.erase(ks.begin() + static_cast<long>(c));
          vs.erase(vs.begin() + static_cast<long>(c));
        }
      pos.push_back(t);
      ks.push_back(std::move(k));
      vs.push_back(std::move(v));
      const Index n = static_cast<Index>(pos.size());
      if (b == 0) {
        step.positions = pos;
        step.q = Tensor({d.batch, h, 1, d_k});
        step.k_cache = Tensor({d.batch, h_kv, n, d_k});
        step.v_cache = Tensor({d.batch, h_kv, n, d_k});
        step.weights = Tensor({d.batch, h, 1, n});
        if (plan.dropout_active) step.dropped = Tensor({d.batch, h, 1, n});
        step.output = Tensor({d.batch, 1, d.d_model});
        step.fully_masked.assign(static_cast<size_t>(d.batch), 0);
      }
      bool sees_a_key = false;
      for (Index p : pos) sees_a_key = sees_a_key || detail::attends(plan, b, t, p);
      step.fully_masked[static_cast<size_t>(b)] = sees_a_key ? 0 : 1;
      for (Index g = 0; g < h_kv; ++g)
        for (Index c = 0; c < n; ++c)
          for (Index e = 0; e < d_k; ++e) {
            const Index at = ((b * h_kv + g) * n + c) * d_k + e;
            step.k_cache.data[static_cast<size_t>(at)] = ks[static_cast<size_t>(c)].data[static_cast<size_t>(g * d_k + e)];
            step.v_cache.data[static_cast<size_t>(at)] = vs[static_cast<size_t>(c)].data[static_cast<size_t>(g * d_k + e)];
          }
      Matrix concat(1, d.d_model);  // heads side by side
      for (Index head = 0; head < h; ++head) {
        const Index g = d.kv_head(head);
        const float* qh = q.data.data() + head * d_k;
        std::copy(qh, qh + d_k, step.q.data.begin() + (b * h + head) * d_k);
        // Scores over the cache: q·k · scale, − m_h·(t − p) with ALiBi, the fill where the mask says so.
        std::vector<float> s(static_cast<size_t>(n));
        float max = -std::numeric_limits<float>::infinity();
        for (Index c = 0; c < n; ++c) {
          const Index p = pos[static_cast<size_t>(c)];
          const float* kc = step.k_cache.data.data() + ((b * h_kv + g) * n + c) * d_k;
          float dot = 0;
          for (Index e = 0; e < d_k; ++e) dot += qh[e] * kc[e];
          float value = dot * scale;
          if (plan.alibi())
            value -= static_cast<float>(plan.alibi_slopes[static_cast<size_t>(head)] * static_cast<double>(t - p));
          if (!detail::attends(plan, b, t, p)) value = fill;
          s[static_cast<size_t>(c)] = value;
          max = std::max(max, value);
        }
        double sum = 0;
        for (float& value : s) sum += value = std::exp(value - max);
        float* w = step.weights.data.data() + (b * h + head) * n;
        Eigen::RowVectorXf context = Eigen::RowVectorXf::Zero(d_k);
        for (Index c = 0; c < n; ++c) {
          const Index p = pos[static_cast<size_t>(c)];
          w[c] = static_cast<float>(s[static_cast<size_t>(c)] / sum);
          // Dropout decides by the full trace's cell (b, head, t, p), so training decodes the same.
          const Index flat = ((b * h + head) * length + t) * length + p;
          const float kept_weight =
              plan.dropout_active ? (dropout_keeps(plan.dropout_seed, plan.dropout_p, flat)
                                         ? w[c] * static_cast<float>(1.0 / (1.0 - plan.dropout_p))
                                         : w[c] * 0.0f)
                                  : w[c];
          if (plan.dropout_active) step.dropped.data[static_cast<size_t>((b * h + head) * n + c)] = kept_weight;
          context += kept_weight * ConstMatrixMap(step.v_cache.data.data() + ((b * h_kv + g) * n + c) * d_k, 1, d_k);
        }
        concat.block(0, head * d_k, 1, d_k) = context;
      }
      Eigen::RowVectorXf out = concat;
      if (plan.w_o) {
        out = concat * ConstMatrixMap(plan.w_o->data.data(), d.d_model, d.d_model);
        if (plan.b_o) out += Eigen::Map<const Eigen::RowVectorXf>(plan.b_o->data.data(), d.d_model);
      }
      std::copy(out.data(), out.data() + d.d_model, step.output.data.begin() + b * d.d_model);
    }
    run.steps.push_back(std::move(step));
  }
  return run;
}

}  // namespace al
