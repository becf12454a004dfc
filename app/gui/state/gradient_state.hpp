#pragma once
// State of the gradient view (panel_gradient.cpp): the loss the learner chose
// on the output, the gradients of the trace on screen under that loss, and the
// last "one step of gradient descent" with its loss before and after.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "numerics/gradient_step.hpp"
#include "state/gradient_worker.hpp"

namespace al::gui {

struct AppState;

struct GradientView {
  bool show = false;                 // the stepper shows dL/d(stage) beside the values
  LossKind kind = LossKind::PushCellUp;
  Index batch = 0, row = -1, col = 0;  // the output cell both losses are about (row -1: the last query,
                                       // which sees every key under a causal mask)
  std::string adopted_pin;           // "b:row:col" of the output heatmap's pin last taken as that cell
  float target_value = 0.0f;         // squared error: what that cell should become
  TensorPtr target;                  // squared error: the output as it was, with that cell changed; (B, Lq, d_model)
  int target_generation = 0;         // bumps with every new target (the cache's key)
  float learning_rate = 0.1f;

  // The gradients of `for_trace` under the loss above; recomputed when the
  // trace or the loss changes (`settings` says which loss they are for).
  std::shared_ptr<const Trace> for_trace;
  std::string settings;
  std::optional<LossValue> loss;     // empty: the loss does not fit this output (see message)
  std::shared_ptr<const Gradients> gradients;
  std::string message;               // i18n key of why there are no gradients, or empty
  // A session computed off the UI thread is differentiated off it too; started on first use.
  std::unique_ptr<GradientWorker> worker;

  // The last descent step: the loss before, and after once its trace is on screen.
  std::optional<double> step_before, step_after;
  std::uint64_t step_revision = 0;   // the model's revision the step made
};

// The gradient view's checkbox, on the stepper's line, and, while it is on, the
// loss controls and the descent step under the step's explanation (panel_gradient.cpp).
void draw_gradient_toggle(AppState& app);
void draw_gradient_controls(AppState& app);
// The gradients of the trace on screen, up to date, or null (view off, no trace,
// a loss that does not fit, or a large session's still being computed).
const Gradients* current_gradients(AppState& app);
// Whether the view waits for a large session's gradients from the worker: the window
// then redraws as it does while a trace is computed, until they are shown.
bool gradients_pending(const AppState& app);
// Explain-this-cell for a gradient heatmap ("grad.masked.h0"): what the cell is,
// and for the softmax input the rule with its real numbers. False if `heatmap`
// is not a gradient heatmap.
bool explain_gradient_cell(AppState& app, const std::string& heatmap, Index row, Index col);

}  // namespace al::gui
