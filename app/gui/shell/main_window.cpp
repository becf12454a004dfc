// The layout of the one main window: menu bar; on the left the editors
// (config, matrices, mask painter) in tabs; on the right the stepper, the
// explanation of the step and its heatmaps; a status line at the bottom.
#include "panels/panels.hpp"
#include "state/documents.hpp"
#include "widgets/floating_window.hpp"

namespace al::gui {

void AppState::edit(Session next, const std::string& label, const std::string& control,
                    std::string merge_key) {
  view.error_control = control;
  model.edit(std::move(next), label, std::move(merge_key));
}

void draw_main_window(AppState& app) {
  // --pin, --snapshot, --open's views: before anything draws, so the first frame already shows them
  // (applied after the status line, frame 0 had a pinned cell but not its status text).
  apply_teaching_options(app);
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  // No background of its own: glClear already paints WindowBg's colour, and on
  // llvmpipe this full-window blended quad cost more than half of a frame
  // (n = 256, 1600x1000: 33 -> 80 fps idle, see docs/performance.md).
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoBackground;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::Begin("Attention Lab###main", nullptr, flags);
  ImGui::PopStyleVar();
  draw_menu_bar(app);
  handle_shortcuts(app);
  handle_file_shortcuts(app);

  const float font = ImGui::GetFontSize();
  const float status_height = ImGui::GetFrameHeightWithSpacing() + 0.2f * font;
  const float body_height = ImGui::GetContentRegionAvail().y - status_height;
  const float left_width = editors_column_width(ImGui::GetContentRegionAvail().x);

  // Left: editors. --tab opens one of them on the first frame.
  auto tab_flags = [&](const char* name) {
    return (app.frame == 0 && app.options.tab == name) || app.view.select_tab == name
               ? ImGuiTabItemFlags_SetSelected : 0;
  };
  ImGui::BeginChild("editors", ImVec2(left_width, body_height), true);
  if (ImGui::BeginTabBar("editor_tabs")) {
    if (ImGui::BeginTabItem((std::string(app.tr("tab.config")) + "###tab_config").c_str(), nullptr,
                            tab_flags("config"))) {
      ImGui::BeginChild("config_scroll");
      draw_config_panel(app);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    app.widgets.add_last_item("tab.config");
    if (ImGui::BeginTabItem((std::string(app.tr("tab.matrices")) + "###tab_matrices").c_str(), nullptr,
                            tab_flags("matrices"))) {
      draw_matrix_editor(app);
      ImGui::EndTabItem();
    }
    app.widgets.add_last_item("tab.matrices");
    if (ImGui::BeginTabItem((std::string(app.tr("tab.mask")) + "###tab_mask").c_str(), nullptr,
                            tab_flags("mask"))) {
      draw_mask_painter(app);
      ImGui::EndTabItem();
    }
    app.widgets.add_last_item("tab.mask");
    ImGui::EndTabBar();
    app.view.select_tab.clear();
  }
  ImGui::EndChild();

  // Right: the pipeline.
  ImGui::SameLine();
  ImGui::BeginChild("pipeline", ImVec2(0.0f, body_height), true);
  draw_stepper(app);
  ImGui::Separator();
  draw_explanation(app);
  ImGui::Separator();
  if (app.gradient.show) {
    draw_gradient_controls(app);
    ImGui::Separator();
  }
  // Batch item shown by every heatmap.
  if (auto trace = app.model.trace(); trace && trace->dims.batch > 1) {
    int batch = static_cast<int>(app.view.batch);
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputInt((std::string(app.tr("heatmap.batch")) + "###view_batch").c_str(), &batch))
      app.view.batch = std::clamp<Index>(batch, 0, trace->dims.batch - 1);
    app.widgets.add_last_item("view.batch");
  }
  ImGui::BeginChild("heatmaps", ImVec2(0.0f, 0.0f), false, ImGuiWindowFlags_HorizontalScrollbar);
  draw_heatmaps(app);
  ImGui::EndChild();
  ImGui::EndChild();

  draw_status_bar(app);
  ImGui::End();

  // Floating windows, over the layout.
  draw_flash_lab(app);
  draw_linear_lab(app);
  draw_sqrt_dk_lab(app);
  draw_mask_fill_lab(app);
  draw_stability_lab(app);
  draw_fused_lab(app);
  draw_decode_lab(app);
  draw_rope_lab(app);
  draw_training_lab(app);
  draw_quiz(app);
  draw_explain_window(app);
  draw_token_lines_window(app);
  draw_heads_window(app);
  draw_diff_window(app);
  draw_export_window(app);
  draw_lessons(app);  // it points at widgets drawn above
  // Modal dialogs last, above everything. ImGui 1.86 asserts (blocking_modal
  // != NULL, its issue #4920) when a window appears after a modal that is
  // begun for the first time in the same frame, e.g. a lab or lesson opened at
  // start-up under the recovery question; after all other windows it cannot.
  draw_file_windows(app);
}

}  // namespace al::gui
