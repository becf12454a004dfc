#include "numerics/linear_attention.hpp"

#include <cmath>
#include <new>

#include "numerics/attention_kernels.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/kernel_dispatch.hpp"

namespace al {

namespace {

using detail::Plan;

// φ applied to every element of a (L, d_k) matrix; rows of masked keys set to 0
// so they drop out of every sum.
Matrix feature_map(const Eigen::Ref<const Matrix>& x, const float* key_padding = nullptr) {
  Matrix phi = x.unaryExpr([](float v) { return elu_plus_one(v); });
  if (key_padding)
    for (Index j = 0; j < phi.rows(); ++j)
      if (key_padding[j] == 0.0f) phi.row(j).setZero();
  return phi;
}

// context (Lq, d_k) of one head.
void linear_head(const Plan& plan, const Matrix& phi_q, const Matrix& phi_k, const Eigen::Ref<const Matrix>& v,
                 MatrixMap context) {
  const Index lq = phi_q.rows(), lk = phi_k.rows(), d_k = phi_q.cols();
  if (!plan.causal) {
    const Matrix kv = phi_k.transpose() * v;                                // (d_k, d_k) Σ_j φ(k_j)ᵀ v_j
    const Eigen::RowVectorXf z = phi_k.colwise().sum();                     // (d_k) Σ_j φ(k_j)
    const Eigen::VectorXf denominator = phi_q * z.transpose();              // (Lq)
    context.noalias() = phi_q * kv;                                         // (Lq, d_k)
    context.array().colwise() /= denominator.array();
    return;
  }
  // Causal: query i sees keys 0..i (torch.ones(Lq, Lk).tril()), so the sums run along i.
  Matrix kv = Matrix::Zero(d_k, d_k);
  Eigen::RowVectorXf z = Eigen::RowVectorXf::Zero(d_k);
  for (Index i = 0; i < lq; ++i) {
    if (i < lk) {
      kv.noalias() += phi_k.row(i).transpose() * v.row(i);
      z += phi_k.row(i);
    }
    context.row(i).noalias() = phi_q.row(i) * kv;
    context.row(i) /= phi_q.row(i).dot(z);
  }
}

// The implicit (Lq, Lk) matrix of one head: φ(q_i)·φ(k_j), masked cells 0, rows normalised.
void implicit_matrix(const Plan& plan, const Matrix& phi_q, const Matrix& phi_k, MatrixMap a) {
  a.noalias() = phi_q * phi_k.transpose();
  if (plan.causal) a.triangularView<Eigen::StrictlyUpper>().setZero();
  const Eigen::VectorXf row_sums = a.rowwise().sum();  // a temporary: a is rewritten below
  a.array().colwise() /= row_sums.array();
}

}  // namespace

float elu_plus_one(float x) { return x > 0.0f ? x + 1.0f : std::exp(x); }

Result<LinearAttentionResult> linear_attention(const Session& session, bool with_matrix) {
  AL_KERNEL_DISPATCH(linear, linear_attention, session, with_matrix);
  auto plan_result = detail::make_plan(session);
  if (!plan_result) return plan_result.error();
  const Plan& plan = *plan_result;
  if (plan.custom)
    return make_error(ErrorCode::InvalidConfig,
                      "linear attention cannot apply a custom mask: it never forms the query-key matrix a custom "
                      "mask would zero; use key padding or causal masks, or turn the custom mask off");
  if (plan.window > 0)
    return make_error(ErrorCode::InvalidConfig,
                      "linear attention cannot apply a sliding window: it sums over all keys (or all earlier keys, "
                      "causal) without forming the query-key matrix a window would cut; turn the window off");
  if (plan.alibi())
    return make_error(ErrorCode::InvalidConfig,
                      "linear attention cannot add ALiBi's bias: the bias acts on the scores before the softmax, "
                      "and linear attention has neither; choose RoPE or sinusoidal positions, or none");
  const Dims& d = plan.dims;
  LinearAttentionResult r;
  r.dims = d;
  try {
    Tensor q({d.batch, d.heads, d.len_q, d.d_k}), k({d.batch, d.kv_heads, d.len_kv, d.d_k}),
        v({d.batch, d.kv_heads, d.len_kv, d.d_k});
    detail::project_for_scores(plan, q, k, v);
    r.context = Tensor({d.batch, d.heads, d.len_q, d.d_k});
    if (with_matrix) r.attention = Tensor({d.batch, d.heads, d.len_q, d.len_kv});
    for (Index bh = 0; bh < d.batch * d.heads; ++bh) {
      const Index b = bh / d.heads, b_kv = b * d.kv_heads + d.kv_head(bh % d.heads);
      const float* padding = plan.key_padding ? plan.key_padding->data.data() + b * d.len_kv : nullptr;
      const Matrix phi_q = feature_map(q.matrix(bh));  // (Lq, d_k)
      const Matrix phi_k = feature_map(k.matrix(b_kv), padding);  // (Lk, d_k)
      linear_head(plan, phi_q, phi_k, v.matrix(b_kv), r.context.matrix(bh));
      if (with_matrix) implicit_matrix(plan, phi_q, phi_k, r.attention.matrix(bh));
    }
    Tensor concat({d.batch, d.len_q, d.d_model});
    detail::concat_heads(d, r.context, concat);
    if (plan.output_is_concat()) {
      r.output = std::move(concat);
    } else {
      r.output = Tensor({d.batch, d.len_q, d.d_model});
      detail::project_output(plan, concat, r.output, detail::Progress{});
    }
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::TooLarge,
                      "the machine could not provide the memory linear attention needs; make the sequences "
                      "shorter or the batch smaller, or do not ask for the n x n matrix");
  }
  return r;
}

AttentionCosts attention_costs(const Dims& d) {
  const Index heads = d.batch * d.heads, lq = d.len_q, lk = d.len_kv, dk = d.d_k;
  AttentionCosts c;
  c.softmax.multiply_adds = heads * (lq * lk * dk + lq * lk * dk);
  c.softmax.exponentials = heads * lq * lk;
  c.softmax.divisions = heads * lq * lk;
  c.linear.multiply_adds = heads * (lk * dk * dk + lk * dk + lq * dk * dk + lq * dk);
  c.linear.exponentials = heads * (lq + lk) * dk;
  c.linear.divisions = heads * lq * dk;
  return c;
}

}  // namespace al
