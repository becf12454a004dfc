// The mask painter: the Lq x Lk mask of one batch item as a grid. Press on a
// cell and drag: every cell the stroke crosses takes the opposite of the first
// cell's value (one undo step per stroke). Causal, padding and all-on buttons.
#include <algorithm>

#include "heatmap_widget.hpp"
#include "panels.hpp"

namespace al::gui {

namespace {

// The custom (painted) mask value of cell (i, j) of batch item b: 1 when absent.
bool custom_attends(const Session& s, Index b, Index i, Index j) {
  const TensorPtr& custom = s.config.mask.custom;
  if (!custom || custom->rows() <= i || custom->cols() <= j) return true;
  const Index k = custom->rank() == 3 ? std::min(b, custom->matrices() - 1) : 0;
  return custom->matrix(k)(i, j) >= 0.5f;
}

}  // namespace

void draw_mask_painter(AppState& app) {
  const Session s = app.model.session();
  const float font = ImGui::GetFontSize();
  ViewState& view = app.view;
  const Index batches = std::max<Index>(s.batch(), 1);
  const Index lq = s.len_q(), lk = s.len_kv();
  view.mask_batch = std::clamp<Index>(view.mask_batch, 0, batches - 1);
  const Index b = view.mask_batch;

  if (batches > 1) {
    int batch = static_cast<int>(b);
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputInt((std::string(app.tr("mask.batch")) + "###mask_batch").c_str(), &batch))
      view.mask_batch = std::clamp<Index>(batch, 0, batches - 1);
  }

  bool causal = s.config.mask.causal;
  if (ImGui::Checkbox((std::string(app.tr("mask.causal")) + "###causal").c_str(), &causal))
    app.edit(with_causal(s, causal), "edit.causal", "mask");
  app.widgets.add_last_item("mask.causal");
  ImGui::SameLine();
  if (ImGui::Button((std::string(app.tr("mask.all_on")) + "###all_on").c_str()))
    app.edit(with_mask_cleared(s), "edit.mask_cleared", "mask");
  app.widgets.add_last_item("mask.all_on");

  // Padding: this batch item attends to its first `length` keys.
  int length = static_cast<int>(lk);
  if (const TensorPtr& padding = s.config.mask.key_padding; padding && b < padding->matrices() * padding->rows()) {
    length = 0;
    for (Index j = 0; j < padding->cols(); ++j)
      if (padding->data[static_cast<size_t>(b * padding->cols() + j)] >= 0.5f) length = static_cast<int>(j + 1);
  }
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::SliderInt((std::string(app.tr("mask.padding")) + "###padding").c_str(), &length, 0,
                       static_cast<int>(lk)))
    app.edit(with_padding_length(s, b, length), "edit.padding", "mask", "mask.padding");
  show_error_if_from(app, "mask");
  ImGui::TextDisabled("%s", app.tr("mask.hint"));

  // The effective mask (causal, padding and painted cells combined) from the trace.
  auto trace = app.model.trace();
  MatrixView effective;
  if (trace && trace->mask && trace->dims.len_q == lq && trace->dims.len_kv == lk)
    effective = matrix_of(trace->mask, std::min(b, trace->mask->matrices() - 1));
  if (!effective.valid()) {
    // No mask at all: everything attends.
    auto ones = std::make_shared<std::vector<float>>(static_cast<size_t>(lq * lk), 1.0f);
    effective.owner = ones;
    effective.data = ones->data();
    effective.rows = lq;
    effective.cols = lk;
    effective.row_stride = lk;
    effective.key = "ones/" + std::to_string(lq) + "x" + std::to_string(lk);
  }
  HeatmapSpec spec;
  spec.name = "mask_painter";
  spec.title = app.tr("mask.grid");
  spec.values = effective;
  spec.style = {Colormap::Mask, 0.0f, 1.0f};
  spec.row_labels = &s.tokens;
  spec.col_labels = s.config.attention == AttentionKind::Cross ? &s.tokens_kv : &s.tokens;
  spec.width = ImGui::GetContentRegionAvail().x;
  spec.max_height = std::max(6.0f * font, ImGui::GetContentRegionAvail().y - 3.0f * font);
  spec.max_cell = 2.2f * font;
  spec.pin_on_click = false;
  const HeatmapInteraction hit = heatmap_widget(app, spec);

  if (hit.clicked) {
    view.mask_stroke_active = true;
    view.mask_stroke_value = !custom_attends(s, b, hit.row, hit.col);
    ++view.mask_stroke_id;
  }
  if (!hit.held) view.mask_stroke_active = false;
  if (view.mask_stroke_active && hit.has_cell &&
      custom_attends(s, b, hit.row, hit.col) != view.mask_stroke_value)
    app.edit(with_mask_cell(s, b, hit.row, hit.col, view.mask_stroke_value), "edit.paint_mask", "mask",
             "mask.stroke/" + std::to_string(view.mask_stroke_id));
}

}  // namespace al::gui
