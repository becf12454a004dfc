// Softmax stability: a row of scores scaled up by the learner, through the
// naive float32 exp(x)/Σexp(x) (overflows to ∞, then NaN, once a score passes
// ln(FLT_MAX) ≈ 88.72) and the max-subtracted one (fine at any scale).
#include <algorithm>
#include <cmath>

#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

void coloured_number(double v) {
  if (std::isfinite(v)) ImGui::TextUnformatted(lab_number(v).c_str());
  else ImGui::TextColored(kBadText, "%s", lab_number(v).c_str());
}

void draw_body(AppState& app, StabilityLabState& lab) {
  const float font = ImGui::GetFontSize();
  wrapped_text(app.tr("labs.stability.intro"));
  ImGui::TextUnformatted(app.tr("labs.stability.base"));
  for (size_t i = 0; i < lab.base.size(); ++i) {
    ImGui::SameLine();
    ImGui::PushID(static_cast<int>(i));
    ImGui::SetNextItemWidth(4.5f * font);
    ImGui::DragFloat("##base", &lab.base[i], 0.05f, -10.0f, 10.0f, "%.2f");
    ImGui::PopID();
  }
  ImGui::SetNextItemWidth(24.0f * font);
  ImGui::SliderFloat((std::string(app.tr("labs.stability.scale")) + "###stability_scale").c_str(), &lab.scale,
                     1.0f, 1000.0f, "× %.1f", ImGuiSliderFlags_Logarithmic);
  app.widgets.add_last_item("labs.stability.scale");

  const SoftmaxStabilityTable t = softmax_stability_table(lab.base, lab.scale);

  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame;
  if (ImGui::BeginTable("stability_table", 6, flags)) {
    ImGui::TableSetupColumn("x");
    ImGui::TableSetupColumn("exp(x)");
    ImGui::TableSetupColumn(app.tr("labs.stability.col_naive"));
    ImGui::TableSetupColumn("x − max");
    ImGui::TableSetupColumn("exp(x − max)");
    ImGui::TableSetupColumn(app.tr("labs.stability.col_stable"));
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < t.x.size(); ++i) {
      ImGui::TableNextRow();
      for (const std::vector<float>* column : {&t.x, &t.exp_x, &t.naive, &t.shifted, &t.exp_shifted, &t.stable}) {
        ImGui::TableNextColumn();
        coloured_number((*column)[i]);
      }
    }
    ImGui::EndTable();
  }
  app.widgets.add_last_item("labs.stability.table");
  const bool broken = t.naive_broken;
  const Params limit = {{"limit", lab_number(float_exp_limit())},
                        {"scale", lab_number(naive_softmax_break_scale(lab.base))}};
  if (broken) wrapped_text_colored(kBadText, app.i18n.format("labs.stability.broken", limit));
  else wrapped_text_colored(kGoodText, app.i18n.format("labs.stability.fine", limit));
  app.widgets.set_fact("labs.stability.naive_broken", broken ? "yes" : "no");
  wrapped_text(app.tr("labs.stability.conclusion"));
}

}  // namespace

void draw_stability_lab(AppState& app) {
  StabilityLabState& lab = app.labs.stability;
  bool visible = false;
  if (!begin_lab_window(app, "softmax_stability", "labs.stability.title", &lab.open, ImVec2(50.0f, 26.0f),
                        &visible))
    return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
