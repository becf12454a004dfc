#include "numerics/heads.hpp"

#include <cmath>

namespace al {

Result<HeadSumCheck> check_head_sum(const Trace& trace, const Session& session) {
  const Dims& d = trace.dims;
  HeadSumCheck check;
  const Tensor& context = trace.stage(Stage::Context);  // (B, h, Lq, d_k)
  const Tensor& output = trace.stage(Stage::Output);    // (B, Lq, d_model)
  const TensorPtr& w_o = session.weights.w_o;           // (d_model, d_model)
  check.has_w_o = w_o != nullptr;
  if (w_o && (w_o->rows() != d.d_model || w_o->cols() != d.d_model))
    return Error{ErrorCode::ShapeMismatch,
                 "W_O is " + shape_string(w_o->shape) + " but the trace has d_model = " + std::to_string(d.d_model),
                 {}};
  const bool bias = w_o && session.config.bias && session.weights.b_o;
  check.per_head_sum = Tensor({d.batch, d.len_q, d.d_model});
  for (Index b = 0; b < d.batch; ++b)
    for (Index i = 0; i < d.len_q; ++i)
      for (Index c = 0; c < d.d_model; ++c) {
        double sum = bias ? session.weights.b_o->data[static_cast<size_t>(c)] : 0.0;
        for (Index h = 0; h < d.heads; ++h) {
          const auto ctx = context.matrix(b * d.heads + h).row(i);  // (d_k)
          for (Index p = 0; p < d.d_k; ++p) {
            const double w = w_o ? (*w_o).matrix()(h * d.d_k + p, c) : (h * d.d_k + p == c ? 1.0 : 0.0);
            sum += static_cast<double>(ctx(p)) * w;
          }
        }
        const float out = output.matrix(b)(i, c);
        check.per_head_sum.matrix(b)(i, c) = static_cast<float>(sum);
        if (std::isfinite(out) && std::isfinite(sum))
          check.max_abs_difference = std::max(check.max_abs_difference, std::fabs(sum - out));
      }
  return check;
}

}  // namespace al
