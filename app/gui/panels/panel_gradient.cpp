// The gradient view: a loss on the output the learner chooses (push one output
// cell up, or squared error to a target), dL/d(stage) for the heatmaps beside
// the values (panel_heatmaps.cpp), "one step of gradient descent" with a
// learning rate, and explain-this-cell on a gradient cell.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "panels/panels.hpp"
#include "state/view_stages.hpp"
#include "model/stage_heads.hpp"
#include "teaching/lab_numbers.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

std::string num(double v) { return lab_number(v); }
// A factor of a product: negative numbers in parentheses, "0.61×(−0.78)".
std::string factor(double v) { return v < 0 ? "(" + num(v) + ")" : num(v); }

// Full precision for the test hooks (the widget file), not for the learner.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A two-index subscript: "53", or "99,37" once an index has more than one digit
// (s_9937 would not say which is the row).
std::string subscript(const std::string& a, const std::string& b) {
  return a.size() > 1 || b.size() > 1 ? a + "," + b : a + b;
}

std::string cell_text(const GradientView& g) {
  return "[" + std::to_string(g.row) + ", " + std::to_string(g.col) + "]";
}

// The output cell as a number, or 0 when out of range.
float output_cell(const Trace& trace, const GradientView& g) {
  const Dims& d = trace.dims;  // the output is (B, Lq, d_model)
  if (g.batch < 0 || g.batch >= d.batch || g.row < 0 || g.row >= d.len_q || g.col < 0 || g.col >= d.d_model)
    return 0.0f;
  return trace.stage(Stage::Output).data[static_cast<size_t>((g.batch * d.len_q + g.row) * d.d_model + g.col)];
}

// The squared error's target: the output on screen, with the chosen cell set to target_value.
void capture_target(GradientView& g, const Trace& trace) {
  auto target = target_from_output(trace, g.batch, g.row, g.col, g.target_value);
  g.target = target ? make_tensor(std::move(*target)) : nullptr;
  ++g.target_generation;
}

// The view takes a backward pass's result, or says it failed.
void adopt(GradientView& g, Result<Gradients> result) {
  if (result)
    g.gradients = std::make_shared<const Gradients>(std::move(*result));
  else
    g.message = "grad.failed";
}

// A pinned cell of the output heatmap becomes the loss's cell.
void adopt_pinned_cell(AppState& app, const Trace& trace) {
  GradientView& g = app.gradient;
  if (!app.view.pinned || app.view.pinned->heatmap != "output") return;
  const std::string pin = std::to_string(app.view.batch) + ":" + std::to_string(app.view.pinned->row) + ":" +
                          std::to_string(app.view.pinned->col);
  if (pin == g.adopted_pin) return;
  g.adopted_pin = pin;
  g.batch = app.view.batch;
  g.row = app.view.pinned->row;
  g.col = app.view.pinned->col;
  if (g.kind == LossKind::SquaredError) capture_target(g, trace);
}

}  // namespace

const Gradients* current_gradients(AppState& app) {
  GradientView& g = app.gradient;
  if (!g.show) return nullptr;
  auto trace = app.model.trace();
  if (!trace) return nullptr;
  adopt_pinned_cell(app, *trace);
  // The cell stays inside the output when the sizes change (row -1 at first: the last query).
  const Dims& d = trace->dims;
  g.batch = std::clamp<Index>(g.batch, 0, d.batch - 1);
  g.row = g.row < 0 ? d.len_q - 1 : std::min(g.row, d.len_q - 1);
  g.col = std::clamp<Index>(g.col, 0, d.d_model - 1);
  if (g.step_before && app.model.revision() != g.step_revision) g.step_before.reset(), g.step_after.reset();
  if (g.kind == LossKind::SquaredError && (!g.target || g.target->shape != trace->stage(Stage::Output).shape))
    capture_target(g, *trace);
  const std::string settings = std::to_string(static_cast<int>(g.kind)) + ":" + std::to_string(g.batch) + ":" +
                               std::to_string(g.row) + ":" + std::to_string(g.col) + ":" +
                               std::to_string(g.target_generation);
  if (trace != g.for_trace || settings != g.settings) {
    g.for_trace = trace;
    g.settings = settings;
    g.gradients.reset();
    g.loss.reset();
    g.message.clear();
    const Session& session = app.model.trace_session();
    const LossChoice choice{g.kind, g.batch, g.row, g.col, g.target};
    const bool lean = std::any_of(kSquareStages.begin(), kSquareStages.end(),
                                  [&](Stage s) { return stage_not_kept(*trace, s); });
    if (lean) {
      g.message = "keep.gradient_needs_all";  // the backward pass reads every (B, h, Lq, Lk) stage
    } else if (!(g.loss = evaluate_loss(*trace, choice))) {
      g.message = "grad.loss_unfit";
    } else if (computes_in_background(session)) {  // too long for a frame: on the worker
      if (!g.worker) g.worker = std::make_unique<GradientWorker>();
      g.worker->request({session, trace, g.loss->upstream, settings});
      g.message = "grad.computing";
    } else {
      adopt(g, backward(session, *trace, g.loss->upstream));
    }
  }
  if (g.worker) {
    if (auto done = g.worker->take(); done && done->trace == g.for_trace && done->settings == g.settings) {
      g.message.clear();
      adopt(g, std::move(done->gradients));
      app.keep_drawing = true;  // a panel drawn before this call shows them next frame
    }
  }
  // The step's "after": the loss of the trace its edit made, once that is on screen.
  if (g.step_before && !g.step_after && g.loss && app.model.revision() == g.step_revision &&
      !app.model.computing() && !app.model.error())
    g.step_after = g.loss->loss;
  return g.gradients.get();
}

bool gradients_pending(const AppState& app) {
  return app.gradient.show && app.gradient.worker && app.gradient.worker->busy();
}

void draw_gradient_toggle(AppState& app) {
  ImGui::Checkbox((std::string(app.tr("grad.show")) + "###gradient_show").c_str(), &app.gradient.show);
  app.widgets.add_last_item("gradient.show");
}

void draw_gradient_controls(AppState& app) {
  GradientView& g = app.gradient;
  const float font = ImGui::GetFontSize();
  auto trace = app.model.trace();
  if (!trace) return;
  current_gradients(app);

  ImGui::SetNextItemWidth(18.0f * font);
  const char* kinds[] = {app.tr("grad.loss.push"), app.tr("grad.loss.mse")};
  int kind = static_cast<int>(g.kind);
  if (ImGui::Combo((std::string(app.tr("grad.loss")) + "###gradient_loss").c_str(), &kind, kinds, 2)) {
    g.kind = static_cast<LossKind>(kind);
    if (g.kind == LossKind::SquaredError) {
      g.target_value = output_cell(*trace, g) + 1.0f;  // a target one above the cell, to start with
      capture_target(g, *trace);
    }
  }
  app.widgets.add_last_item("gradient.loss");

  // The output cell: typed here, or a pinned cell of the output heatmap.
  const Dims& d = trace->dims;
  int row = static_cast<int>(g.row), col = static_cast<int>(g.col);
  ImGui::SetNextItemWidth(6.0f * font);
  const bool row_changed = ImGui::InputInt((std::string(app.tr("grad.row")) + "###gradient_row").c_str(), &row);
  app.widgets.add_last_item("gradient.row");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(6.0f * font);
  const bool col_changed = ImGui::InputInt((std::string(app.tr("grad.col")) + "###gradient_col").c_str(), &col);
  app.widgets.add_last_item("gradient.col");
  if (row_changed || col_changed) {
    g.batch = std::clamp<Index>(app.view.batch, 0, d.batch - 1);
    g.row = std::clamp<Index>(row, 0, d.len_q - 1);
    g.col = std::clamp<Index>(col, 0, d.d_model - 1);
    if (g.kind == LossKind::SquaredError) capture_target(g, *trace);
  }
  if (g.kind == LossKind::SquaredError) {
    ImGui::SameLine(0.0f, 1.5f * font);
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputFloat((std::string(app.tr("grad.target")) + "###gradient_target").c_str(), &g.target_value, 0.0f,
                          0.0f, "%.4g"))
      capture_target(g, *trace);
    app.widgets.add_last_item("gradient.target");
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("grad.retarget")) + "###gradient_retarget").c_str())) {
      g.target_value = output_cell(*trace, g);
      capture_target(g, *trace);
    }
    app.widgets.add_last_item("gradient.retarget");
  }
  const std::string cell = cell_text(g);
  wrapped_text_disabled(g.kind == LossKind::PushCellUp
                            ? app.i18n.format("grad.explain.push", {{"cell", cell}})
                            : app.i18n.format("grad.explain.mse", {{"cell", cell}, {"t", num(g.target_value)}}));
  current_gradients(app);  // the controls above may have changed the loss
  if (g.message == "grad.computing") {
    wrapped_text_disabled(app.tr(g.message));
    return;
  }
  if (!g.message.empty()) {
    wrapped_text_colored(ImVec4(1.0f, 0.55f, 0.45f, 1.0f), app.tr(g.message));
    return;
  }

  // L, then the descent step.
  ImGui::Text("L = %s", num(g.loss->loss).c_str());
  ImGui::SameLine(0.0f, 1.5f * font);
  ImGui::SetNextItemWidth(7.0f * font);
  ImGui::InputFloat((std::string(app.tr("grad.lr")) + "###gradient_lr").c_str(), &g.learning_rate, 0.0f, 0.0f, "%.4g");
  app.widgets.add_last_item("gradient.lr");
  ImGui::SameLine();
  const bool can_step = g.gradients && g.learning_rate > 0 && std::isfinite(g.learning_rate) &&
                        !app.model.computing() && !app.model.error();
  ImGui::BeginDisabled(!can_step);
  if (ImGui::Button((std::string(app.tr("grad.step")) + "###gradient_step").c_str())) {
    const double before = g.loss->loss;
    Session next = descent_step(app.model.trace_session(), *g.gradients, g.learning_rate);
    app.edit(std::move(next), app.tr("grad.step_label"), "gradient.step");
    g.step_before = before;
    g.step_after.reset();
    g.step_revision = app.model.revision();
    current_gradients(app);  // a small session's new trace is there already: its loss is the "after"
  }
  ImGui::EndDisabled();
  app.widgets.add_last_item("gradient.step");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", app.tr(trainable_names(app.model.trace_session()).front() == "q" ? "grad.step_tip_direct"
                                                                                            : "grad.step_tip"));
  if (g.step_before) {
    ImGui::SameLine(0.0f, 1.5f * font);
    ImGui::Text("%s", app.i18n
                          .format("grad.before_after", {{"before", num(*g.step_before)},
                                                        {"after", g.step_after ? num(*g.step_after) : "…"}})
                          .c_str());
  }
  if (app.widgets.enabled()) {
    app.widgets.set_fact("gradient.loss", exact(g.loss->loss));
    app.widgets.set_fact("gradient.lr", exact(g.learning_rate));
    app.widgets.set_fact("gradient.cell", std::to_string(g.batch) + ":" + std::to_string(g.row) + ":" +
                                              std::to_string(g.col));
    app.widgets.set_fact("gradient.step_before", g.step_before ? exact(*g.step_before) : "");
    app.widgets.set_fact("gradient.step_after", g.step_after ? exact(*g.step_after) : "");
  }
}

bool explain_gradient_cell(AppState& app, const std::string& heatmap, Index row, Index col) {
  if (heatmap.rfind("grad.", 0) != 0) return false;
  auto trace = app.model.trace();
  const Gradients* grads = current_gradients(app);
  if (grads && heatmap.rfind("grad.input.", 0) == 0) {  // dL/dX, or dL/dQ, dL/dK, dL/dV in direct mode
    const std::string name = heatmap.substr(11);
    const Tensor* gradient = grads->input(name);
    if (!gradient) return true;
    const Index batch = std::clamp<Index>(app.view.batch, 0, gradient->matrices() - 1);
    ImGui::TextUnformatted(app.i18n.format("grad.explain.cell", {{"stage", app.tr("teach.matrix." + name)},
                                                                 {"row", std::to_string(row)},
                                                                 {"col", std::to_string(col)}}).c_str());
    ImGui::Text("= %s", num(gradient->matrix(batch)(row, col)).c_str());
    ImGui::Separator();
    wrapped_text(app.tr("grad.explain.meaning"));
    return true;
  }
  auto cell = cell_address_of(CellRef{heatmap.substr(5), row, col}, std::clamp<Index>(app.view.batch, 0,
                                                                                     trace ? trace->dims.batch - 1 : 0));
  if (!trace || !grads || !cell || cell->head < 0) {
    wrapped_text(app.tr("grad.explain.none"));
    return true;
  }
  const Dims& d = trace->dims;
  const bool per_head = stage_is_per_head(cell->stage);
  if (!grads->stages[static_cast<int>(cell->stage)] || (per_head && cell->head >= stage_heads(d, cell->stage))) {
    wrapped_text(app.tr("grad.explain.none"));
    return true;
  }
  const Index matrix = stage_matrix(d, cell->stage, cell->batch, cell->head);  // K/V heads for k, v, k_rot
  const Tensor& gradient = grads->stage(cell->stage);
  const double value = gradient.matrix(matrix)(row, col);
  std::string where = app.i18n.format("grad.explain.cell", {{"stage", app.tr("teach.matrix." + std::string(stage_name(cell->stage)))},
                                                             {"row", std::to_string(row)}, {"col", std::to_string(col)}});
  if (per_head) where += "  " + app.i18n.format("heatmap.head", {{"n", std::to_string(cell->head)}});
  ImGui::TextUnformatted(where.c_str());
  ImGui::Text("= %s", num(value).c_str());
  ImGui::Separator();
  wrapped_text(app.tr("grad.explain.meaning"));
  if (app.widgets.enabled()) app.widgets.set_fact("explain.grad.value", exact(value));
  const bool softmax_input = cell->stage == Stage::Masked || cell->stage == Stage::Scaled;
  if (!softmax_input) return true;
  if (cell->stage == Stage::Scaled && trace->mask && trace->mask->matrix(cell->batch)(row, col) == 0.0f) {
    wrapped_text(app.tr("grad.explain.masked_zero"));
    return true;
  }
  auto terms = softmax_input_gradient(*trace, *grads, matrix, row, col);
  if (!terms) return true;
  wrapped_text(app.tr(cell->stage == Stage::Scaled ? "grad.explain.scaled" : "grad.explain.softmax"));
  const std::string i = std::to_string(row), ij = subscript(i, std::to_string(col)), ik = subscript(i, "k");
  wrapped_text_colored(kFormulaColour, "∂L/∂s_" + ij + " = w_" + ij + " (g_" + ij + " − Σ_k w_" + ik + " g_" + ik + ")");
  // The row's sum written out (its first terms on a long row).
  const ConstMatrixMap w = trace->stage(Stage::Weights).matrix(matrix);
  const ConstMatrixMap gw = grads->stage(Stage::Weights).matrix(matrix);
  constexpr Index kShown = 6;
  std::string sum;
  for (Index k = 0; k < std::min(w.cols(), kShown); ++k)
    sum += (k ? " + " : "") + num(std::isnan(w(row, k)) ? 0.0 : w(row, k)) + "×" + factor(gw(row, k));
  if (w.cols() > kShown) sum += " + … (" + std::to_string(w.cols() - kShown) + ")";
  wrapped_text_colored(kFormulaColour, "Σ_k w_" + ik + " g_" + ik + " = " + sum + " = " + num(terms->row_dot));
  wrapped_text_colored(kFormulaColour, num(terms->weight) + " × (" + num(terms->upstream) + " − " +
                                           factor(terms->row_dot) + ") = " + num(terms->value));
  wrapped_text_disabled(app.tr("grad.explain.softmax_why"));
  if (app.widgets.enabled()) {
    app.widgets.set_fact("explain.grad.w", exact(terms->weight));
    app.widgets.set_fact("explain.grad.g", exact(terms->upstream));
    app.widgets.set_fact("explain.grad.row_dot", exact(terms->row_dot));
    app.widgets.set_fact("explain.grad.formula", exact(terms->value));
  }
  return true;
}

}  // namespace al::gui
