// Why √d_k: the variance of q·k grows like d_k, so unscaled softmax rows
// saturate (one weight → 1, entropy → 0) and the Jacobian diag(α) − ααᵀ shrinks
// to 0: gradients vanish. Dividing by √d_k keeps the variance at 1.
#include <cmath>

#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

void legend(AppState& app) {
  ImGui::TextColored(ImColor(kRawColour), "— %s", app.tr("labs.sqrt_dk.raw"));
  ImGui::SameLine(0.0f, 2.0f * ImGui::GetFontSize());
  ImGui::TextColored(ImColor(kScaledColour), "— %s", app.tr("labs.sqrt_dk.scaled"));
}

void table(AppState& app, const std::vector<SqrtDkPoint>& points) {
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame;
  if (!ImGui::BeginTable("sqrt_dk_table", 5, flags)) return;
  ImGui::TableSetupColumn("d_k");
  ImGui::TableSetupColumn(app.tr("labs.sqrt_dk.col_variance"));
  ImGui::TableSetupColumn(app.tr("labs.sqrt_dk.col_max"));
  ImGui::TableSetupColumn(app.tr("labs.sqrt_dk.col_entropy"));
  ImGui::TableSetupColumn(app.tr("labs.sqrt_dk.col_jacobian"));
  ImGui::TableHeadersRow();
  for (const auto& p : points) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(p.d_k));
    auto pair = [](double raw, double scaled) {
      ImGui::TableNextColumn();
      ImGui::TextColored(ImColor(kRawColour), "%s", lab_number(raw).c_str());
      ImGui::SameLine();
      ImGui::TextColored(ImColor(kScaledColour), "%s", lab_number(scaled).c_str());
    };
    pair(p.variance_raw, p.variance_scaled);
    pair(p.max_weight_raw, p.max_weight_scaled);
    pair(p.entropy_raw, p.entropy_scaled);
    pair(p.jacobian_raw, p.jacobian_scaled);
  }
  ImGui::EndTable();
}

void draw_body(AppState& app, SqrtDkLabState& lab) {
  const float font = ImGui::GetFontSize();
  wrapped_text(app.tr("labs.sqrt_dk.intro"));
  ImGui::SetNextItemWidth(10.0f * font);
  ImGui::SliderInt((std::string(app.tr("labs.sqrt_dk.keys")) + "###sqrt_dk_keys").c_str(), &lab.keys, 2, 64);
  // Recomputed when the slider is let go (a drag would redo it every frame).
  if (lab.computed_keys != lab.keys && !ImGui::IsItemActive()) {
    SqrtDkOptions options;
    options.keys = lab.keys;
    options.trials = 200;
    lab.points = sqrt_dk_experiment(options);
    lab.computed_keys = lab.keys;
  }
  std::vector<std::string> x_labels;
  std::vector<double> series[8];
  for (const auto& p : lab.points) {
    x_labels.push_back(std::to_string(p.d_k));
    const double values[8] = {p.variance_raw, p.variance_scaled, p.max_weight_raw, p.max_weight_scaled,
                              p.entropy_raw,  p.entropy_scaled,  p.jacobian_raw,   p.jacobian_scaled};
    for (int i = 0; i < 8; ++i) series[i].push_back(values[i]);
  }
  legend(app);
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const ImVec2 plot(0.5f * (ImGui::GetContentRegionAvail().x - spacing), 9.0f * font);
  const char* titles[4] = {"labs.sqrt_dk.plot_variance", "labs.sqrt_dk.plot_max", "labs.sqrt_dk.plot_entropy",
                           "labs.sqrt_dk.plot_jacobian"};
  for (int i = 0; i < 4; ++i) {
    if (i % 2 == 1) ImGui::SameLine();
    ImGui::BeginGroup();
    const std::string id = "plot" + std::to_string(i);
    lab_plot(id.c_str(), app.tr(titles[i]), x_labels,
             {{&series[2 * i], kRawColour}, {&series[2 * i + 1], kScaledColour}}, i == 0, plot);
    app.widgets.add_last_item(std::string("labs.sqrt_dk.") + id);
    ImGui::EndGroup();
  }
  wrapped_text(app.i18n.format("labs.sqrt_dk.uniform_note",
                               {{"n", std::to_string(lab.keys)},
                                {"entropy", lab_number(std::log(double(lab.keys)))},
                                {"jacobian", lab_number(std::sqrt(lab.keys - 1.0) / lab.keys)}}));
  wrapped_text(app.tr("labs.sqrt_dk.conclusion"));
  table(app, lab.points);
}

}  // namespace

void draw_sqrt_dk_lab(AppState& app) {
  SqrtDkLabState& lab = app.labs.sqrt_dk;
  bool visible = false;
  if (!begin_lab_window(app, "sqrt_dk", "labs.sqrt_dk.title", &lab.open, ImVec2(52.0f, 44.0f), &visible)) return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
