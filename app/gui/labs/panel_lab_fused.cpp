// Fused QKV (seed 004 V1 → V2 → V3): W_Q, W_K, W_V side by side, their
// concatenation W_qkv (d, d + 2·h_kv·d_k: 3d without grouped K/V heads), one product X·W_qkv split into Q | K | V, and the
// check that it equals the three separate products. A button switches the
// session itself between fused and separate weights.
#include <algorithm>

#include "widgets/heatmap_widget.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

void compute_if_changed(AppState& app, FusedLabState& lab) {
  if (lab.revision == app.model.revision() && lab.batch == app.view.batch) return;
  lab.revision = app.model.revision();
  lab.batch = app.view.batch;
  lab.comparison.reset();
  lab.error.clear();
  auto result = compare_fused_qkv(app.model.session(), app.view.batch);
  if (!result) {
    lab.error = result.error().code == ErrorCode::InvalidConfig ? app.tr("labs.fused.needs_self")
                                                                : app.i18n.error_message(result.error());
    return;
  }
  lab.comparison = std::make_shared<const FusedQkvComparison>(std::move(*result));
}

using Labels = const std::vector<std::string>*;

// Heatmaps of `tensors` side by side, `weights[i]` of the width each gets; rows labelled by
// `row_labels[i]` (tokens for X, Q, K, V; none, so indices, for a weight's input features).
void heatmap_row(AppState& app, const FusedLabState& lab, const std::vector<const Tensor*>& tensors,
                 const std::vector<std::string>& titles, const std::vector<float>& weights,
                 const std::vector<Labels>& row_labels, float max_height) {
  const float font = ImGui::GetFontSize();
  const float spacing = 1.0f * font;
  float total = 0;
  for (float w : weights) total += w;
  const float available = ImGui::GetContentRegionAvail().x - spacing * static_cast<float>(tensors.size() - 1);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) ImGui::SameLine(0.0f, spacing);
    HeatmapSpec spec;
    // Named by the title's first word ("labs.fused.W_qkv"): the explain window outlines it.
    spec.name = "labs.fused." + titles[i].substr(0, titles[i].find(' '));
    spec.title = titles[i];
    spec.values = lab_view(lab.comparison, *tensors[i],
                           "labs.fused/" + std::to_string(lab.revision) + "/" + std::to_string(lab.batch) + "/" + titles[i]);
    float extent = 0;
    for (float v : tensors[i]->data) extent = std::max(extent, std::abs(v));
    spec.style = {Colormap::Diverging, -std::max(extent, 1e-6f), std::max(extent, 1e-6f)};
    spec.row_labels = row_labels[i];
    spec.width = available * weights[i] / total;
    spec.max_height = max_height;
    spec.pin_on_click = false;
    heatmap_widget(app, spec);
  }
}

void draw_body(AppState& app, FusedLabState& lab) {
  const float font = ImGui::GetFontSize();
  wrapped_text(app.tr("labs.fused.intro"));
  wrapped_text(app.tr("labs.fused.seed_bug"));
  const Session& session = app.model.session();
  const bool fused = session.weights.fused();
  // Fusing needs one X behind Q, K and V: on a cross or direct session the lab
  // says why it does not apply, with its button off, instead of an error.
  const bool cross = session.config.attention == AttentionKind::Cross;
  const bool applies = session.config.mode == InputMode::Projection && !cross;
  if (!applies) {
    wrapped_text(app.tr(cross ? "labs.fused.not_for_cross" : "labs.fused.not_for_direct"));
    app.widgets.add_last_item("labs.fused.not_applicable");
  }
  ImGui::Text("%s", app.tr(fused ? "labs.fused.session_fused" : "labs.fused.session_separate"));
  ImGui::SameLine();
  ImGui::BeginDisabled(!applies);
  if (ImGui::Button((std::string(app.tr(fused ? "labs.fused.split" : "labs.fused.fuse")) + "###fused_toggle").c_str()))
    app.edit(with_fused(session, !fused), app.tr(fused ? "labs.fused.split" : "labs.fused.fuse"), "labs.fused.toggle");
  ImGui::EndDisabled();
  app.widgets.add_last_item("labs.fused.toggle");
  show_error_if_from(app, "labs.fused.toggle");
  if (!applies) return;
  compute_if_changed(app, lab);
  if (!lab.error.empty()) {
    wrapped_text_colored(kBadText, lab.error);
    return;
  }
  const FusedQkvComparison& c = *lab.comparison;
  // The check first, where it is seen without scrolling.
  const float worst = std::max({c.max_diff_q, c.max_diff_k, c.max_diff_v});
  wrapped_text_colored(worst < 1e-5f ? kGoodText : kBadText,
                       app.i18n.format("labs.fused.check", {{"q", lab_number(c.max_diff_q)},
                                                            {"k", lab_number(c.max_diff_k)},
                                                            {"v", lab_number(c.max_diff_v)}}));
  app.widgets.set_fact("labs.fused.max_diff", lab_number(worst));
  const float height = 9.0f * font;
  // With grouped K/V heads W_K and W_V are narrower than W_Q (h_kv·d_k columns): widths follow the columns.
  const Index d = c.w_q.cols(), kv = c.w_k.cols();
  const float k_share = static_cast<float>(kv) / static_cast<float>(d);
  const TextParams sizes = {{"d", std::to_string(d)}, {"kv", std::to_string(kv)}, {"total", std::to_string(d + 2 * kv)}};
  wrapped_text_disabled(kv == d ? app.tr("labs.fused.v1") : app.i18n.format("labs.fused.v1_grouped", sizes));
  heatmap_row(app, lab, {&c.w_q, &c.w_k, &c.w_v}, {"W_Q", "W_K", "W_V"}, {1, k_share, k_share}, {nullptr, nullptr, nullptr},
              height);
  wrapped_text_disabled(kv == d ? app.tr("labs.fused.v2") : app.i18n.format("labs.fused.v2_grouped", sizes));
  heatmap_row(app, lab, {&c.x, &c.w_qkv}, {"X", "W_qkv = [W_Q | W_K | W_V]"}, {1, 1 + 2 * k_share},
              {&session.tokens, nullptr}, height);
  ImGui::TextDisabled("%s", app.tr("labs.fused.split_text"));
  heatmap_row(app, lab, {&c.q_fused, &c.k_fused, &c.v_fused}, {"Q", "K", "V"}, {1, k_share, k_share},
              {&session.tokens, &session.tokens, &session.tokens}, height);
}

}  // namespace

void draw_fused_lab(AppState& app) {
  FusedLabState& lab = app.labs.fused;
  bool visible = false;
  if (!begin_lab_window(app, "fused_qkv", "labs.fused.title", &lab.open, ImVec2(56.0f, 48.0f), &visible))
    return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
