// File > Export: the pinned heatmap's matrix or the whole trace as CSV and .npy,
// the pinned heatmap as PNG (heatmap_png.cpp), and the session as a runnable
// PyTorch script (core/io/export_torch.hpp), into a folder typed in a text field.
// Every file is written atomically.
#include <algorithm>
#include <cstdio>

#include "io/export_torch.hpp"
#include "io/matrix_io.hpp"
#include "panels/panels.hpp"
#include "state/view_stages.hpp"
#include "model/stage_heads.hpp"
#include "teaching/table_text.hpp"
#include "widgets/heatmap_png.hpp"
#include "widgets/text_wrap.hpp"
#include "widgets/floating_window.hpp"

namespace al::gui {

namespace {

void report(AppState& app, const std::optional<Error>& error, const std::string& what) {
  app.teaching.export_failed = error.has_value();
  app.teaching.export_status = error ? app.i18n.format("teach.export.failed", {{"why", error->message}})
                                     : app.i18n.format("teach.export.wrote", {{"what", what}});
}

// The matrix a stage heatmap shows: one (batch, head), or the head average.
Tensor shown_matrix(AppState& app, const Trace& trace, const CellAddress& cell) {
  const Dims& d = trace.dims;
  const TensorPtr& tensor = trace.stage_ptr(cell.stage);
  const bool per_head = stage_is_per_head(cell.stage);
  const MatrixView view = !per_head ? matrix_of(tensor, cell.batch)
                          : cell.head < 0 ? app.derived.head_average(tensor, cell.batch, stage_heads(d, cell.stage))
                                          : matrix_of(tensor, stage_matrix(d, cell.stage, cell.batch, cell.head));
  Tensor m({view.rows, view.cols});
  for (Index r = 0; r < view.rows; ++r)
    for (Index c = 0; c < view.cols; ++c) m.data[static_cast<size_t>(r * view.cols + c)] = view.at(r, c);
  return m;
}

// The labels a stage heatmap shows: query tokens on the rows (key tokens for K
// and V), key tokens on the columns of the key-by-key stages, else indices.
std::pair<std::vector<std::string>, std::vector<std::string>> axis_labels(const Session& s, Stage stage) {
  const auto& keys = s.config.attention == AttentionKind::Cross ? s.tokens_kv : s.tokens;
  const bool key_rows = stage_rows_are_keys(stage);
  const bool key_cols = stage == Stage::Scores || stage == Stage::Scaled || stage == Stage::Masked ||
                        stage == Stage::Weights || stage == Stage::Dropped;
  return {key_rows ? keys : s.tokens, key_cols ? keys : std::vector<std::string>{}};
}

}  // namespace

std::string export_path(const AppState& app, const std::string& name) {
  std::string folder = app.teaching.export_folder.empty() ? "." : app.teaching.export_folder;
  if (folder.back() != '/') folder += '/';
  return folder + name;
}

void draw_export_menu_items(AppState& app) {
  if (ImGui::MenuItem((std::string(app.tr("teach.export.menu")) + "###export").c_str()))
    app.teaching.export_open = true;
  app.widgets.add_last_item("export.menu");
}

void draw_export_window(AppState& app) {
  TeachingViews& t = app.teaching;
  if (!t.export_open) return;
  const float font = ImGui::GetFontSize();
  place_over_editors(16.0f, 0.0f, true);  // at the bottom: Explain opens at the top
  const std::string title = std::string(app.tr("teach.export.title")) + "###export_window";
  if (!ImGui::Begin(title.c_str(), &t.export_open)) {
    ImGui::End();
    return;
  }
  app.widgets.add("window.export", ImGui::GetWindowPos(),
                  ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                         ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  char folder[1024];
  std::snprintf(folder, sizeof folder, "%s", t.export_folder.c_str());
  ImGui::SetNextItemWidth(-8.0f * font);
  if (ImGui::InputText((std::string(app.tr("teach.export.folder")) + "###export_folder").c_str(), folder, sizeof folder))
    t.export_folder = folder;
  app.widgets.add_last_item("export.folder");

  auto trace = app.model.trace();
  ImGui::Separator();
  ImGui::TextUnformatted(app.tr("teach.export.pinned"));
  std::optional<CellAddress> cell;
  if (trace && app.view.pinned)
    cell = cell_address_of(*app.view.pinned, std::clamp<Index>(app.view.batch, 0, trace->dims.batch - 1));
  if (!cell) {
    ImGui::TextDisabled("%s", app.tr("teach.export.pinned_none"));
  } else {
    const std::string base = app.view.pinned->heatmap + ".b" + std::to_string(cell->batch);
    ImGui::SameLine();
    ImGui::TextDisabled("(%s)", base.c_str());
    if (ImGui::Button((std::string(app.tr("teach.export.csv")) + "###export_pinned_csv").c_str())) {
      const std::string path = export_path(app, base + ".csv");
      report(app, write_file_atomic(path, csv_text(shown_matrix(app, *trace, *cell))), path);
    }
    app.widgets.add_last_item("export.pinned_csv");
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("teach.export.npy")) + "###export_pinned_npy").c_str())) {
      const std::string path = export_path(app, base + ".npy");
      report(app, write_file_atomic(path, npy_bytes(shown_matrix(app, *trace, *cell))), path);
    }
    app.widgets.add_last_item("export.pinned_npy");
    ImGui::SameLine();
    // The heatmap widget draws the picture on its next frame, with its own colours.
    if (ImGui::Button((std::string(app.tr("png.button")) + "###export_pinned_png").c_str()))
      request_heatmap_png(app, app.view.pinned->heatmap, export_path(app, base + ".png"));
    app.widgets.add_last_item("export.pinned_png");
    // The same heatmap for a slide: title, token labels, numbers, colour bar, at a chosen width.
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("png.slide_button")) + "###export_pinned_slide").c_str()))
      request_heatmap_png(app, app.view.pinned->heatmap, export_path(app, base + ".slide.png"), t.slide_width);
    app.widgets.add_last_item("export.pinned_slide");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(7.0f * ImGui::GetFontSize());
    const std::string width_label = std::to_string(t.slide_width) + " px";
    if (ImGui::BeginCombo("###slide_width", width_label.c_str())) {
      for (int width : {1280, 1920, 2560, 3840}) {
        ImGui::PushID(width);
        if (ImGui::Selectable((std::to_string(width) + " px").c_str(), width == t.slide_width)) t.slide_width = width;
        app.widgets.add_last_item("export.slide_width." + std::to_string(width));
        ImGui::PopID();
      }
      ImGui::EndCombo();
    }
    app.widgets.add_last_item("export.slide_width");
    // Tables for slides and notes, labelled as on screen.
    const auto [rows, cols] = axis_labels(app.model.trace_session(), cell->stage);
    const std::string corner = app.view.pinned->heatmap;
    if (ImGui::Button((std::string(app.tr("export.markdown")) + "###export_pinned_md").c_str())) {
      const std::string path = export_path(app, base + ".md");
      report(app, write_file_atomic(path, markdown_table(shown_matrix(app, *trace, *cell), rows, cols, corner)), path);
    }
    app.widgets.add_last_item("export.pinned_markdown");
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("export.latex")) + "###export_pinned_tex").c_str())) {
      const std::string path = export_path(app, base + ".tex");
      report(app, write_file_atomic(path, latex_table(shown_matrix(app, *trace, *cell), rows, cols, corner)), path);
    }
    app.widgets.add_last_item("export.pinned_latex");
  }
  expire_heatmap_png_request(app);
  ImGui::Separator();
  if (ImGui::Button((std::string(app.tr("teach.export.trace")) + "###export_trace").c_str()) && trace) {
    // One file per stage and format, named as `attention-lab trace` names the stages.
    std::optional<Error> error;
    std::string not_kept;  // stages the session has but this trace dropped (SessionModel::keep)
    for (Stage s : kAllStages) {
      if (stage_not_kept(*trace, s)) not_kept += (not_kept.empty() ? "" : ", ") + kept_stage_name(app, s);
      if (!trace->has(s)) continue;
      if (!error) error = write_file_atomic(export_path(app, std::string("trace.") + stage_name(s) + ".npy"),
                                            npy_bytes(trace->stage(s)));
      if (!error) error = write_file_atomic(export_path(app, std::string("trace.") + stage_name(s) + ".csv"),
                                            csv_text(trace->stage(s)));
    }
    report(app, error, export_path(app, "trace.*.npy / .csv"));
    if (!error && !not_kept.empty())
      t.export_status += " " + app.i18n.format("keep.export_absent", {{"stages", not_kept}});
  }
  app.widgets.add_last_item("export.trace");
  if (ImGui::Button((std::string(app.tr("teach.export.torch")) + "###export_torch").c_str())) {
    const std::string path = export_path(app, "attention_session.py");
    auto script = torch_script(app.model.session(), app.document);
    report(app, script ? write_file_atomic(path, *script) : std::optional<Error>(script.error()), path);
  }
  app.widgets.add_last_item("export.torch");
  if (!t.export_status.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, t.export_failed ? ImVec4(1.0f, 0.4f, 0.4f, 1.0f) : ImVec4(0.5f, 0.9f, 0.5f, 1.0f));
    wrapped_text(t.export_status);
    app.widgets.set_fact("export_status", t.export_status);
    ImGui::PopStyleColor();
  }
  ImGui::End();
}

}  // namespace al::gui
