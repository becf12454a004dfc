#pragma once
// The backward pass: the gradient of the scalar loss L = Σ output ⊙ G (G, the
// upstream gradient, has the output's shape) with respect to every input and
// weight of a session and every stage of its trace.
//
// Each stage's rule is its own step (backward.cpp), from the output back:
//   output = concat·W_O + b_O   dConcat = dOutput·W_Oᵀ, dW_O = concatᵀ·dOutput, db_O = Σ_rows dOutput
//   concat = heads side by side dContext = dConcat split into heads
//   context = dropped·V         dDropped = dContext·Vᵀ, dV = droppedᵀ·dContext
//   dropped = weights ⊙ keep/(1−p)   dWeights = dDropped ⊙ keep/(1−p)  (the trace's own keep decisions)
//   weights = softmax(masked)   dMasked_ij = w_ij (dWeights_ij − Σ_k w_ik dWeights_ik)
//   masked = scaled or fill     dScaled = dMasked where the mask attends, 0 where it is masked
//   scaled = scale · scores     dScores = scale · dScaled
//   scores = Q·Kᵀ               dQ = dScores·K, dK = dScoresᵀ·Q
//   Q = x·W_Q + b_Q (per head)  dW_Q = xᵀ·dQ, db_Q = Σ_rows dQ, dx += dQ·W_Qᵀ  (likewise K, V)
// A masked cell with −∞ fill has weight exactly 0, so its gradient is exactly 0
// (never NaN). A query whose every key is masked with −∞ fill has NaN weights,
// context and output, as in PyTorch, and so the loss is NaN; its gradients are
// those of the same computation with that row's weights read as 0 (the query
// attends nothing): the row's masked/scaled/scores gradients are 0, it adds
// nothing to dV or dW_O, and every gradient stays finite. (PyTorch instead
// spreads the NaN into dV, dW_V, dW_O and dx.) With a finite fill such a row is
// an ordinary uniform softmax and its gradient is the ordinary one.
#include <array>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct BackwardOptions {
  // Keep the gradient of every stage (the gradient view, `attention-lab grad`).
  // Off, only the inputs' and weights' gradients are made (training, the
  // benchmark): the (B, h, Lq, Lk) gradients then live only per head, briefly.
  bool keep_stages = true;
};

struct NamedGradient {
  std::string name;  // the session's own name: x, x_q, x_kv, q, k, v, w_q, b_q, ..., w_qkv, b_qkv, w_o, b_o
  TensorPtr gradient;  // the shape of that input as the session holds it (weights in math layout, in × out)
};

struct Gradients {
  double loss = 0;  // Σ output ⊙ G, summed in double
  // Inputs first (x or x_q, x_kv, or q, k, v), then weights and biases in the
  // order w_q b_q w_k b_k w_v b_v (or w_qkv b_qkv) w_o b_o; biases only when
  // config.bias is on, w_o/b_o only when the session has W_O.
  std::vector<NamedGradient> inputs;
  // dL/d(stage), each in the stage's shape, indexed like Trace::stages; all
  // null unless keep_stages. Stages with equal gradients share one tensor.
  std::array<TensorPtr, kStageCount> stages;

  const Tensor* input(const std::string& name) const;  // null if absent
  const Tensor& stage(Stage s) const { return *stages[static_cast<int>(s)]; }
};

// The upstream gradient G must have the output's shape (B, Lq, d_model), or
// (Lq, d_model) when B = 1; anything else is a ShapeMismatch naming both shapes.
std::optional<Error> check_upstream(const Trace& trace, const Tensor& upstream);

// `trace` must be compute(session)'s result (the same session, unchanged).
Result<Gradients> backward(const Session& session, const Trace& trace, const Tensor& upstream,
                           const BackwardOptions& options = {});

namespace detail {
// The backward pass in another compiled copy (numerics/kernel_dispatch.hpp).
struct BackwardKernels {
  decltype(&al::backward) backward;
};
}  // namespace detail

}  // namespace al
