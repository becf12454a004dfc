// The status line: the current error (translated), compute time and memory of
// the trace on screen, the pinned cell, start-up notices (missing font ...).
#include <cstdio>

#include "panels.hpp"

namespace al::gui {

void show_error_if_from(AppState& app, const std::string& control) {
  const auto& error = app.model.error();
  if (!error || app.view.error_control != control) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.35f, 1.0f));
  ImGui::TextWrapped("%s", app.i18n.error_message(*error).c_str());
  ImGui::PopStyleColor();
  app.widgets.add_last_item("error");
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
    ImGui::ProgressBar(app.model.progress(), ImVec2(12.0f * ImGui::GetFontSize(), 0.0f), app.tr("status.computing"));
  } else if (auto trace = app.model.trace()) {
    ImGui::TextDisabled("%s", app.i18n.format("status.trace", {
        {"ms", [&] { char b[32]; std::snprintf(b, sizeof b, "%.2f", trace->compute_ms); return std::string(b); }()},
        {"kib", std::to_string(trace->memory_bytes / 1024)}}).c_str());
  }
  if (app.view.pinned) {
    ImGui::SameLine();
    ImGui::TextDisabled("| %s", app.i18n.format("status.pinned", {
        {"name", app.view.pinned->heatmap},
        {"row", std::to_string(app.view.pinned->row)},
        {"col", std::to_string(app.view.pinned->col)}}).c_str());
  }
  for (const auto& notice : app.notices) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "| %s", notice.c_str());
  }
}

}  // namespace al::gui
