#pragma once
// The numbers of the guided lesson "how a head learns to look back"
// (app/gui/panels/panel_lessons.cpp, lessons.look_back_*): the Training lab's
// previous_token task before any training, its loss, the gradient view's
// ∂L/∂S″ at the previous token, one step of gradient descent, and the learned
// head's attention on the previous token as the lab trains. Every number a
// sentence of the lesson states is one of the TextParams made here, from the
// computation (the texts hold only placeholders).
#include <optional>
#include <string>
#include <vector>

#include "numerics/gradient_step.hpp"
#include "teaching/stage_text.hpp"
#include "training/training.hpp"

namespace al {

// The Training lab's previous_token model as it starts (its default config and seed).
struct LookBackStart {
  TrainingConfig config;  // default_training(previous_token)
  Session session;        // the held-out example through the untrained attention layer
  Index vocabulary = 0;   // the symbols the model chooses its output from
  double uniform_loss = 0;  // ln(vocabulary): the cross-entropy of a uniform guess
  double first_loss = 0;    // the cross-entropy of its first training batch (the lab's step 1)
};
LookBackStart look_back_start();

// Step 1, the loss. `loss` is the gradient view's loss on `trace` (push output[b, row, col] up).
// {lq} {h} {d_k} {vocab} {uniform_loss} {first_loss} {steps} {row} {col} {loss}
TextParams look_back_loss_params(const LookBackStart& start, const Trace& trace, const LossChoice& choice,
                                 const LossValue& loss);

// Step 2, ∂L/∂S″ at query `row` and its previous key row − 1, head 0 of batch item 0.
// {row} {key} {q_tok} {k_tok} {w} {g} {row_dot} {value} {loss}; `raise`: the value is negative,
// so a descent step raises that score. Empty when row − 1 is not a key or the stages were not kept.
struct LookBackGradient {
  TextParams params;
  bool raise = false;
};
std::optional<LookBackGradient> look_back_gradient(const Trace& trace, const Gradients& gradients, Index row,
                                                   const std::vector<std::string>& tokens);

// Step 3, one descent step: the loss now and after moving every weight by −lr·∂L/∂W
// (descent_step) and recomputing. {lr} {before} {after}. Empty if the step does not compute.
std::optional<TextParams> look_back_descent(const Session& session, const Trace& trace, const Gradients& gradients,
                                            const LossChoice& choice, double learning_rate);

// Step 4: the mean weight a head puts on the previous token, over the rows that have one
// (i = 1 … L−1; row 0 has nothing before it). `weights` is (B, h, L, L), matrix k = b·h + head.
double previous_token_share(const Tensor& weights, Index matrix);
// The head with the largest share, and the texts' numbers as training goes:
// {steps} {batch} {lr} (the run), and once it has a pattern {step} {total} {loss} {accuracy}
// {pattern_step} {head} {share} {ideal} (the share of the task's ideal pattern, (L, L)).
// `formed`: that head's share is at least kLookBackFormed.
constexpr double kLookBackFormed = 0.9;
struct LookBackTraining {
  TextParams params;
  bool formed = false;
};
LookBackTraining look_back_training(const TrainingConfig& config, int step, int total, double loss,
                                    double accuracy, const Tensor* weights, int pattern_step, const Tensor* ideal);

}  // namespace al
