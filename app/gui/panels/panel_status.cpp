// The status line: the current error (translated), compute time and memory of
// the trace on screen, the pinned cell, start-up notices (missing font ...).
#include "panels/panels.hpp"
#include "model/stage_heads.hpp"
#include "state/teaching_views.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {
// The memory of the trace being computed, estimated before it is allocated (once per edit).
Index estimated_bytes(const AppState& app) {
  static std::uint64_t revision = ~std::uint64_t{0};
  static Index bytes = 0;
  if (revision != app.model.revision()) {
    revision = app.model.revision();
    auto estimate = estimate_trace_bytes(app.model.session(), app.model.keep());
    bytes = estimate ? *estimate : 0;
  }
  return bytes;
}

// A pinned stage cell that the trace on screen no longer has (weights.h1 after
// going down to one head, a row past a shorter sequence) is forgotten.
void forget_missing_pin(AppState& app) {
  auto trace = app.model.trace();
  if (!app.view.pinned || !trace) return;
  const auto cell = cell_address_of(*app.view.pinned, 0);
  if (!cell) return;  // inputs and the mask: not a stage
  if (!trace->has(cell->stage)) {  // x_pos, q_rot, biased ... after their option was turned off
    app.view.pinned.reset();
    return;
  }
  const Tensor& t = trace->stage(cell->stage);
  const bool per_head = t.rank() == 4;
  const bool head_exists = per_head ? cell->head < stage_heads(trace->dims, cell->stage)  // K/V heads for k, v
                                    : cell->head == 0;  // -1: the average
  if (!head_exists || cell->row < 0 || cell->row >= t.rows() || cell->col < 0 || cell->col >= t.cols())
    app.view.pinned.reset();
}
}  // namespace

void show_error_if_from(AppState& app, const std::string& control) {
  const auto& error = app.model.error();
  if (!error || app.view.error_control != control) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.35f, 1.0f));
  wrapped_text(app.i18n.error_message(*error));
  ImGui::PopStyleColor();
  app.widgets.add_last_item("error");
  draw_keep_offer(app, control);
}

void refuse_typing(AppState& app, const std::string& widget, const std::string& key, Params params) {
  app.view.refusal = Refusal{widget, key, std::move(params), app.model.revision()};
}

void show_refusal(AppState& app, const std::string& widget) {
  const std::optional<Refusal>& refusal = app.view.refusal;
  if (!refusal || refusal->widget != widget || refusal->revision != app.model.revision()) return;
  const std::string text = app.i18n.format(refusal->key, refusal->params);
  wrapped_text_colored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), text);
  app.widgets.add_last_item(widget);
  app.widgets.set_fact(widget, text);
}

bool awaits_trace(const AppState& app) { return app.model.computing() && !app.model.error(); }

const char* no_trace_text(const AppState& app) {
  return app.tr(awaits_trace(app) ? "heatmap.computing" : "heatmap.no_trace");
}

void draw_status_bar(AppState& app) {
  const auto& error = app.model.error();
  if (error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.35f, 1.0f));
    ImGui::TextUnformatted(app.i18n.error_message(*error).c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::TextDisabled("%s", app.tr("status.last_valid"));
  } else if (app.model.computing()) {
    // Off the UI thread: the panels keep drawing the previous trace meanwhile.
    ImGui::ProgressBar(app.model.progress(), ImVec2(12.0f * ImGui::GetFontSize(), 0.0f), app.tr("status.computing"));
    app.widgets.add_last_item("status.progress");
    ImGui::SameLine();
    // The first trace of a document has no previous result to keep on screen.
    const bool previous = app.model.trace() != nullptr;
    ImGui::TextDisabled("%s", app.i18n.format(previous ? "perf.status.computing" : "perf.status.computing_first",
                                              {{"size", bytes_text(estimated_bytes(app))}}).c_str());
    app.widgets.add_last_item(previous ? "status.computing" : "status.computing_first");
  } else if (auto trace = app.model.trace()) {
    ImGui::TextDisabled("%s", app.i18n.format("perf.status.trace", {
        {"ms", lab_number(trace->compute_ms)},
        {"size", bytes_text(trace->memory_bytes)}}).c_str());
  }
  draw_kept_note(app);
  forget_missing_pin(app);
  if (app.view.pinned) {
    ImGui::SameLine();
    // The pin is a cell of the batch item shown: with several, say which.
    const auto trace = app.model.trace();
    const bool batched = trace && trace->dims.batch > 1;
    const std::string text = app.i18n.format(batched ? "status.pinned_batch" : "status.pinned", {
        {"name", app.view.pinned->heatmap},
        {"row", std::to_string(app.view.pinned->row)},
        {"col", std::to_string(app.view.pinned->col)},
        {"b", std::to_string(app.view.batch)}});
    ImGui::TextDisabled("| %s", text.c_str());
    app.widgets.set_fact("status.pinned", text);
  }
  if (app.start_problem) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "| %s", app.i18n.error_message(*app.start_problem).c_str());
  }
  for (const auto& notice : app.notices) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "| %s", app.i18n.message(notice).c_str());
  }
}

}  // namespace al::gui
