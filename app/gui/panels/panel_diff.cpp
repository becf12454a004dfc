// Snapshot and diff: pin the current trace, edit, and see for every stage how
// many cells changed and by how much, and the chosen stage's "after − before"
// per head as a diverging heatmap (white = unchanged).
#include <algorithm>

#include "widgets/heatmap_widget.hpp"
#include "panels/panels.hpp"
#include "state/view_stages.hpp"
#include "model/stage_heads.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

void draw_diff_window(AppState& app) {
  TeachingViews& t = app.teaching;
  if (!t.diff_open) return;
  const float font = ImGui::GetFontSize();
  // Each view has its own first place, so several open at once don't cover each other.
  const ImVec2 work = ImGui::GetMainViewport()->WorkPos;
  ImGui::SetNextWindowPos(ImVec2(work.x + 30.0f * font, work.y + 3.0f * font), ImGuiCond_FirstUseEver);
  // Inside the screen, its resize grip too (at 1280 x 720, 40 font units ran past the bottom).
  const ImVec2 room = ImGui::GetMainViewport()->WorkSize;
  ImGui::SetNextWindowSize(ImVec2(std::max(20.0f * font, std::min(34.0f * font, room.x - 31.0f * font)),
                                  std::max(12.0f * font, std::min(40.0f * font, room.y - 4.0f * font))),
                           ImGuiCond_FirstUseEver);
  const std::string title = std::string(app.tr("teach.diff.title")) + "###diff_window";
  if (!ImGui::Begin(title.c_str(), &t.diff_open)) {
    ImGui::End();
    return;
  }
  app.widgets.add("window.diff", ImGui::GetWindowPos(),
                  ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x, ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  wrapped_text(app.tr("teach.diff.explain"));
  auto trace = app.model.trace();
  if (ImGui::Button((std::string(app.tr("teach.diff.snapshot")) + "###diff_snapshot").c_str()) && trace) {
    t.snapshot = trace;
    t.diff_of.reset();
  }
  app.widgets.add_last_item("diff.snapshot");
  if (t.snapshot) {
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("teach.diff.clear")) + "###diff_clear").c_str())) t.snapshot.reset();
    app.widgets.add_last_item("diff.clear");
  }
  if (!t.snapshot || !trace) {
    ImGui::TextDisabled("%s", app.tr("teach.diff.none"));
    ImGui::End();
    return;
  }
  if (t.diff_of != trace) {  // the trace changed since the diff was computed
    auto diff = diff_traces(*t.snapshot, *trace);
    t.diff_of = trace;
    t.diff_error = diff ? "" : app.i18n.error_message(diff.error());
    t.diff = diff ? std::make_shared<const TraceDiff>(std::move(*diff)) : nullptr;
  }
  if (!t.diff) {
    wrapped_text(t.diff_error);
    ImGui::End();
    return;
  }
  const TraceDiff& diff = *t.diff;

  // One row per stage: how far the edit travelled.
  int first_changed = -1;
  if (ImGui::BeginTable("diff_table", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn(app.tr("teach.diff.stage"));
    ImGui::TableSetupColumn(app.tr("teach.diff.changed"));
    ImGui::TableSetupColumn(app.tr("teach.diff.max"));
    ImGui::TableHeadersRow();
    for (Stage s : kAllStages) {
      const StageDiff& sd = diff.stage(s);
      const int k = static_cast<int>(s);
      if (!sd.difference && stage_not_kept(*trace, s)) {  // in the session, not in this lean trace
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(stage_name(s));
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", app.tr("keep.diff_not_kept"));
        ImGui::TableNextColumn();
        continue;
      }
      if (!sd.difference) continue;  // not in both traces
      if (sd.changed > 0 && first_changed < 0) first_changed = k;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(k);
      if (ImGui::Selectable(stage_name(s), t.diff_stage == k, ImGuiSelectableFlags_SpanAllColumns)) t.diff_stage = k;
      ImGui::PopID();
      ImGui::TableNextColumn();
      if (sd.changed == 0) ImGui::TextDisabled("%s", app.tr("teach.diff.unchanged"));
      else ImGui::Text("%lld / %lld", static_cast<long long>(sd.changed), static_cast<long long>(sd.cells));
      ImGui::TableNextColumn();
      // A cell masked to −∞ in one trace changed without limit: said beside the finite largest.
      std::string largest = lab_number(sd.max_abs);
      if (sd.non_finite > 0)
        largest += " " + app.i18n.format("teach.diff.non_finite", {{"n", std::to_string(sd.non_finite)}});
      ImGui::TextUnformatted(largest.c_str());
      if (sd.non_finite > 0) app.widgets.set_fact(std::string("diff.max.") + stage_name(s), largest);
      app.widgets.set_fact(std::string("diff.changed.") + stage_name(s), std::to_string(sd.changed));
    }
    ImGui::EndTable();
  }

  // The chosen stage as heatmaps: after − before, symmetric range.
  const int chosen = t.diff_stage >= 0 && diff.stage(static_cast<Stage>(t.diff_stage)).difference ? t.diff_stage : -1;
  const int shown = chosen >= 0           ? chosen
                    : first_changed >= 0 ? first_changed
                                         : static_cast<int>(Stage::Scores);
  const Stage stage = static_cast<Stage>(shown);
  const StageDiff& sd = diff.stage(stage);
  ImGui::TextUnformatted(app.i18n.format("teach.diff.showing", {{"stage", stage_name(stage)}}).c_str());
  if (!sd.difference) {  // not kept (or not in both traces): no difference to draw
    if (!draw_not_kept(app, stage_set({stage}), "diff")) ImGui::TextDisabled("%s", app.tr("keep.diff_not_kept"));
    ImGui::End();
    return;
  }
  const Dims& d = trace->dims;
  const Index batch = std::clamp<Index>(app.view.batch, 0, d.batch - 1);
  const bool per_head = stage_is_per_head(stage);
  const Index count = stage_heads(d, stage);  // K/V heads for k, v, k_rot
  const float range = sd.max_abs > 0 ? static_cast<float>(sd.max_abs) : 1.0f;
  const float spacing = 1.0f * font;
  const float width = (ImGui::GetContentRegionAvail().x - spacing * static_cast<float>(count - 1)) / static_cast<float>(count);
  for (Index h = 0; h < count; ++h) {
    if (h > 0) ImGui::SameLine(0.0f, spacing);
    HeatmapSpec spec;
    spec.name = std::string("diff.") + stage_name(stage) + (per_head ? ".h" + std::to_string(h) : "");
    spec.title = per_head ? app.i18n.format("heatmap.head", {{"n", std::to_string(h)}}) : stage_name(stage);
    spec.values = matrix_of(sd.difference, stage_matrix(d, stage, batch, h));
    spec.style = {Colormap::Diverging, -range, range};
    spec.width = width;
    spec.max_height = std::max(6.0f * font, ImGui::GetContentRegionAvail().y - 3.0f * font);
    spec.pin_on_click = false;
    heatmap_widget(app, spec);
  }
  ImGui::End();
}

}  // namespace al::gui
