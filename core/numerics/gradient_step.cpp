#include "numerics/gradient_step.hpp"

#include <cmath>

namespace al {

namespace {

// The output's cell (b, i, c) as a flat index, or -1 when out of range. The
// output is (B, Lq, d_model), or (Lq, d_model) when B = 1.
Index output_offset(const Tensor& output, Index batch, Index row, Index col) {
  const Index batches = output.rank() == 3 ? output.dim(0) : 1;
  if (batch < 0 || batch >= batches || row < 0 || row >= output.rows() || col < 0 || col >= output.cols()) return -1;
  return (batch * output.rows() + row) * output.cols() + col;
}

// The session's tensor of a gradient's name (the names backward() gives).
TensorPtr* slot(Session& s, const std::string& name) {
  Weights& w = s.weights;
  if (name == "q") return &s.q;
  if (name == "k") return &s.k;
  if (name == "v") return &s.v;
  if (name == "w_q") return &w.w_q;
  if (name == "b_q") return &w.b_q;
  if (name == "w_k") return &w.w_k;
  if (name == "b_k") return &w.b_k;
  if (name == "w_v") return &w.w_v;
  if (name == "b_v") return &w.b_v;
  if (name == "w_qkv") return &w.w_qkv;
  if (name == "b_qkv") return &w.b_qkv;
  if (name == "w_o") return &w.w_o;
  if (name == "b_o") return &w.b_o;
  return nullptr;  // x, x_q, x_kv: not trained
}

}  // namespace

std::optional<LossValue> evaluate_loss(const Trace& trace, const LossChoice& choice) {
  const Tensor& output = trace.stage(Stage::Output);
  LossValue result{0.0, Tensor(output.shape, 0.0f)};
  if (choice.kind == LossKind::PushCellUp) {
    const Index at = output_offset(output, choice.batch, choice.row, choice.col);
    if (at < 0) return std::nullopt;
    result.loss = -static_cast<double>(output.data[static_cast<size_t>(at)]);
    result.upstream.data[static_cast<size_t>(at)] = -1.0f;
  } else {
    if (!choice.target || choice.target->shape != output.shape) return std::nullopt;
    const double n = static_cast<double>(output.size());
    double sum = 0;
    for (size_t k = 0; k < output.data.size(); ++k) {
      const double diff = static_cast<double>(output.data[k]) - choice.target->data[k];
      sum += diff * diff;
      result.upstream.data[k] = static_cast<float>(2.0 * diff / n);
    }
    result.loss = sum / n;
  }
  if (!std::isfinite(result.loss)) return std::nullopt;
  return result;
}

std::optional<Tensor> target_from_output(const Trace& trace, Index batch, Index row, Index col, float value) {
  Tensor target = trace.stage(Stage::Output);
  const Index at = output_offset(target, batch, row, col);
  if (at < 0) return std::nullopt;
  target.data[static_cast<size_t>(at)] = value;
  return target;
}

std::vector<std::string> trainable_names(const Session& session) {
  std::vector<std::string> names;
  if (session.config.mode == InputMode::Direct) names = {"q", "k", "v"};
  else if (session.weights.fused()) names = {"w_qkv", "b_qkv"};
  else names = {"w_q", "b_q", "w_k", "b_k", "w_v", "b_v"};
  for (const char* name : {"w_o", "b_o"}) names.push_back(name);
  // Only the ones this session has (biases off, no W_O in direct mode).
  Session probe = session;
  std::vector<std::string> present;
  for (const std::string& name : names)
    if (TensorPtr* t = slot(probe, name); t && *t) present.push_back(name);
  return present;
}

Session descent_step(const Session& session, const Gradients& gradients, double learning_rate) {
  Session next = session;
  for (const std::string& name : trainable_names(session)) {
    const Tensor* gradient = gradients.input(name);
    TensorPtr* tensor = slot(next, name);
    if (!gradient || gradient->size() != (*tensor)->size()) continue;
    Tensor moved = **tensor;
    for (size_t k = 0; k < moved.data.size(); ++k)
      moved.data[k] = static_cast<float>(moved.data[k] - learning_rate * gradient->data[k]);
    *tensor = make_tensor(std::move(moved));
  }
  return next;
}

std::optional<SoftmaxInputGradient> softmax_input_gradient(const Trace& trace, const Gradients& gradients,
                                                           Index matrix, Index row, Index col) {
  const TensorPtr& d_weights = gradients.stages[static_cast<int>(Stage::Weights)];
  const Tensor& weights = trace.stage(Stage::Weights);
  if (!d_weights || matrix < 0 || matrix >= weights.matrices() || row < 0 || row >= weights.rows() || col < 0 ||
      col >= weights.cols())
    return std::nullopt;
  const ConstMatrixMap w = weights.matrix(matrix);
  const ConstMatrixMap g = d_weights->matrix(matrix);
  // A fully masked row's NaN weights are read as 0, as backward() does.
  auto weight = [&](Index k) { return std::isnan(w(row, k)) ? 0.0 : static_cast<double>(w(row, k)); };
  SoftmaxInputGradient out;
  for (Index k = 0; k < w.cols(); ++k) out.row_dot += weight(k) * g(row, k);
  out.weight = weight(col);
  out.upstream = g(row, col);
  out.value = out.weight * (out.upstream - out.row_dot);
  return out;
}

}  // namespace al
