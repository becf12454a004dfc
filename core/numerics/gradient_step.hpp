#pragma once
// The window's gradient view and its "one step of gradient descent": a loss a
// learner can choose on the output, its upstream gradient G = dL/d(output) for
// backward(), one descent step on the session's weights, and the softmax
// input's gradient of one cell written out term by term.
#include <optional>
#include <string>
#include <vector>

#include "numerics/backward.hpp"

namespace al {

enum class LossKind {
  PushCellUp,    // L = −output[b, i, c]: a smaller loss is a larger cell
  SquaredError,  // L = (1/N) Σ (output − target)², N = every output cell (MSE)
};

struct LossChoice {
  LossKind kind = LossKind::PushCellUp;
  Index batch = 0, row = 0, col = 0;  // PushCellUp: the output cell
  TensorPtr target;                   // SquaredError: shaped like the output, (B, Lq, d_model) or (Lq, d_model)
};

struct LossValue {
  double loss = 0;  // in double
  Tensor upstream;  // G = dL/d(output), the output's shape
};

// The loss of `trace`'s output and its G. Empty when the choice does not fit
// the output (a cell out of range, a target of another shape) or the loss is
// not a finite number (an output cell that is NaN: a fully masked row).
std::optional<LossValue> evaluate_loss(const Trace& trace, const LossChoice& choice);

// The output with one cell (b, i, c) set to `value`: a squared-error target
// that asks for one change and keeps the rest. Empty when the cell is out of range.
std::optional<Tensor> target_from_output(const Trace& trace, Index batch, Index row, Index col, float value);

// The names of what one descent step moves: every weight and bias the session
// has (w_q b_q w_k b_k w_v b_v or w_qkv b_qkv, w_o b_o); in direct mode q, k, v
// (and w_o, b_o when present). Never x, x_q, x_kv: the step trains the model,
// not the sentence.
std::vector<std::string> trainable_names(const Session& session);

// The session with each trainable tensor moved by −lr · its gradient (gradients
// from backward() on this session). Everything else is shared, unchanged.
Session descent_step(const Session& session, const Gradients& gradients, double learning_rate);

// The softmax's rule for one cell of its input s (the masked scores):
// dL/ds_ij = w_ij (g_ij − Σ_k w_ik g_ik), with w the weights and g = dL/dw.
struct SoftmaxInputGradient {
  double weight = 0;    // w_ij
  double upstream = 0;  // g_ij = dL/dw_ij
  double row_dot = 0;   // Σ_k w_ik g_ik, over the row's keys
  double value = 0;     // w_ij (g_ij − row_dot)
};
// Matrix k = b·h + head, cell (i, j) of the trace's weights and the gradients'
// dL/d(weights). Empty when the cell is out of range or the stages were not kept.
std::optional<SoftmaxInputGradient> softmax_input_gradient(const Trace& trace, const Gradients& gradients,
                                                           Index matrix, Index row, Index col);

}  // namespace al
