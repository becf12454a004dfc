#include "stages.hpp"

namespace al::gui {

namespace {
constexpr StepInfo kSteps[kStepCount] = {
    {Step::X, "x", "X", "X : (B, L, d_model)"},
    {Step::Qkv, "qkv", "Q/K/V", "Q = X·W_Q + b_Q    K = X·W_K + b_K    V = X·W_V + b_V"},
    {Step::Scores, "scores", "QKᵀ", "S = Q·Kᵀ    S_ij = Σₖ q_ik·k_jk"},
    {Step::Scaled, "scaled", "÷√d_k", "S′ = S / √d_k"},
    {Step::Masked, "masked", "mask", "S′_ij ← fill  (mask_ij = 0)"},
    {Step::Weights, "weights", "softmax",
     "α = softmax(QKᵀ/√d_k)    α_ij = exp(S′_ij − maxₖ S′_ik) / Σₖ exp(S′_ik − maxₖ S′_ik)"},
    {Step::Dropped, "dropped", "dropout", "α′ = α ⊙ m / (1 − p),   m_ij ∈ {0, 1}"},
    {Step::Context, "context", "·V", "head = α′·V    head_i = Σⱼ α′_ij · v_j"},
    {Step::Concat, "concat", "concat", "Concat(head₁, …, head_h) : (B, L, h·d_k)"},
    {Step::WO, "w_o", "W_O", "Output = Concat·W_O + b_O"},
    {Step::Output, "output", "output",
     "MultiHead(X) = Concat(softmax(QKᵀ/√d_k)·V)·W_O"},
};
}  // namespace

const StepInfo& step_info(Step step) { return kSteps[static_cast<int>(step)]; }

std::optional<Step> step_from_name(const std::string& name) {
  for (const auto& info : kSteps)
    if (name == info.id) return info.step;
  if (name == "q" || name == "k" || name == "v") return Step::Qkv;
  return std::nullopt;
}

}  // namespace al::gui
