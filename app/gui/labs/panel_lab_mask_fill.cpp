// Mask fill: the same example computed with −∞, −1e9, −1e20 and seed 002's
// −1e-20 side by side: which fills really mask (weight exactly 0), how much
// leaks through, and what a fully masked row becomes (NaN or uniform).
#include <algorithm>

#include "widgets/heatmap_widget.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

void compute_if_changed(AppState& app, MaskFillLabState& lab) {
  const bool current = !lab.use_example;
  if (current ? lab.revision == app.model.revision() && !lab.computed_example
              : lab.computed_example)
    return;
  lab.revision = app.model.revision();
  lab.computed_example = !current;
  lab.results.clear();
  lab.error.clear();
  const Session source = current ? app.model.session() : mask_fill_example();
  // Four full computations must fit in a frame.
  if (computes_in_background(source)) {
    lab.error = app.tr("labs.mask_fill.too_large");
    return;
  }
  lab.session = std::make_shared<const Session>(source);
  lab.results = compare_mask_fills(source, lab_mask_fills());
}

// What this fill did, in a column `width` wide.
void verdicts(AppState& app, const MaskFillResult& r, float width) {
  if (r.error) {
    wrapped_text_colored(kBadText, app.i18n.error_message(*r.error), width);
    return;
  }
  if (r.masked_cells == 0 && r.fully_masked_rows == 0) {
    wrapped_text_disabled(app.tr("labs.mask_fill.no_mask"), width);
    return;
  }
  if (r.masked_cells > 0) {
    if (r.masked_exactly_zero) wrapped_text_colored(kGoodText, app.tr("labs.mask_fill.exact_zero"), width);
    else wrapped_text_colored(kBadText, app.tr("labs.mask_fill.not_zero"), width);
    wrapped_text(app.i18n.format("labs.mask_fill.leak", {{"value", lab_number(r.max_leak)}}), width);
  }
  if (r.fully_masked_rows > 0) {
    const char* key = r.fully_masked_nan       ? "labs.mask_fill.full_nan"
                      : r.fully_masked_uniform ? "labs.mask_fill.full_uniform"
                                               : "labs.mask_fill.full_other";
    wrapped_text(app.tr(key), width);
  }
}

void draw_body(AppState& app, MaskFillLabState& lab) {
  const float font = ImGui::GetFontSize();
  wrapped_text(app.tr("labs.mask_fill.intro"));
  if (ImGui::RadioButton((std::string(app.tr("labs.mask_fill.source_example")) + "###mf_example").c_str(),
                         lab.use_example))
    lab.use_example = true;
  ImGui::SameLine();
  if (ImGui::RadioButton((std::string(app.tr("labs.mask_fill.source_session")) + "###mf_session").c_str(),
                         !lab.use_example))
    lab.use_example = false;
  compute_if_changed(app, lab);
  if (!lab.error.empty()) {
    wrapped_text_colored(kBadText, lab.error);
    return;
  }
  const Session& session = *lab.session;
  const std::vector<std::string>* keys =
      session.config.attention == AttentionKind::Cross ? &session.tokens_kv : &session.tokens;
  const float spacing = 1.0f * font;
  const float width = (ImGui::GetContentRegionAvail().x - 3.0f * spacing) / 4.0f;
  for (size_t i = 0; i < lab.results.size(); ++i) {
    const MaskFillResult& r = lab.results[i];
    if (i > 0) ImGui::SameLine(0.0f, spacing);
    ImGui::PushID(static_cast<int>(i));
    ImGui::BeginGroup();
    wrapped_text(app.i18n.format("labs.mask_fill.fill", {{"fill", lab_number(r.fill)}}), width);
    if (r.trace) {
      const Trace& t = *r.trace;
      const Index batch = std::clamp<Index>(app.view.batch, 0, t.dims.batch - 1);
      HeatmapSpec spec;
      spec.name = "labs.mask_fill.weights" + std::to_string(i);
      spec.title = "α  " + app.i18n.format("heatmap.head", {{"n", "0"}});
      spec.values = matrix_of(t.stage_ptr(Stage::Weights), batch * t.dims.heads);
      if (t.mask) spec.mask = matrix_of(t.mask, batch);
      spec.style = {Colormap::Sequential, 0.0f, 1.0f};
      spec.row_labels = &session.tokens;
      spec.col_labels = keys;
      spec.width = width;
      spec.max_height = 16.0f * font;
      spec.pin_on_click = false;
      heatmap_widget(app, spec);
    }
    verdicts(app, r, width);
    ImGui::EndGroup();
    ImGui::PopID();
  }
  ImGui::Separator();
  wrapped_text(app.tr("labs.mask_fill.conclusion"));
}

}  // namespace

void draw_mask_fill_lab(AppState& app) {
  MaskFillLabState& lab = app.labs.mask_fill;
  bool visible = false;
  if (!begin_lab_window(app, "mask_fill", "labs.mask_fill.title", &lab.open, ImVec2(64.0f, 34.0f), &visible))
    return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
