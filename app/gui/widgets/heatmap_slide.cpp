#include "widgets/heatmap_slide.hpp"

#include <algorithm>
#include <cfloat>

#include "teaching/lab_numbers.hpp"
#include "widgets/heatmap_cells.hpp"

namespace al::gui {

namespace {

// Sizes in units of the picture's text height `f`, as the window sizes things in font units.
struct SlideLayout {
  float f = 0, label_size = 0, number_size = 0;
  float row_label_width = 0, col_label_height = 0, cell = 0;
  bool row_labels = false, col_labels = false, numbers = false;
  ImVec2 title_at, grid_min, grid_max, bar_min, bar_max;
  int height = 0;
};

ImVec2 text_size(float size, const std::string& text) {
  return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, text.c_str());
}

SlideLayout lay_out(const HeatmapSpec& spec, int width) {
  const MatrixView& m = spec.values;
  SlideLayout l;
  l.f = std::max(12.0f, static_cast<float>(width) / 64.0f);
  const float margin = 1.2f * l.f;
  l.title_at = ImVec2(margin, margin);
  // Token labels while there are at most 64 of them, as on screen.
  l.row_labels = m.rows <= 64;
  l.label_size = l.f;
  for (Index r = 0; l.row_labels && r < m.rows; ++r)
    l.row_label_width = std::max(l.row_label_width, text_size(l.label_size, axis_label(spec.row_labels, r)).x);
  l.row_label_width = l.row_labels ? std::min(l.row_label_width, 10.0f * l.f) + 0.6f * l.f : 0.0f;
  const float available = static_cast<float>(width) - 2.0f * margin - l.row_label_width;
  l.cell = std::min(available / static_cast<float>(m.cols), 0.7f * static_cast<float>(width) / static_cast<float>(m.rows));
  if (l.cell < 0.7f * l.f) {  // rows too thin to label
    l.row_labels = false;
    l.row_label_width = 0.0f;
    l.cell = std::min((static_cast<float>(width) - 2.0f * margin) / static_cast<float>(m.cols),
                      0.7f * static_cast<float>(width) / static_cast<float>(m.rows));
  }
  float widest = 0.0f;
  for (Index c = 0; m.cols <= 64 && c < m.cols; ++c)
    widest = std::max(widest, text_size(l.label_size, axis_label(spec.col_labels, c)).x);
  l.col_labels = m.cols <= 64 && widest + 0.3f * l.f <= l.cell;
  l.col_label_height = l.col_labels ? 1.3f * l.f : 0.0f;
  l.number_size = std::min(l.f, 0.34f * l.cell);
  l.numbers = spec.style.colormap != Colormap::Mask && m.rows * m.cols <= 64 * 64 && l.number_size >= 0.55f * l.f &&
              text_size(l.number_size, "-0.00").x + 0.3f * l.number_size <= l.cell;
  // Centred across the chosen width when the height limits the cells.
  const float content = l.row_label_width + l.cell * static_cast<float>(m.cols);
  const float left = margin + std::max(0.0f, 0.5f * (static_cast<float>(width) - 2.0f * margin - content));
  l.title_at.x = left;
  l.grid_min = ImVec2(left + l.row_label_width, margin + 1.9f * l.f + l.col_label_height);
  l.grid_max = ImVec2(l.grid_min.x + l.cell * static_cast<float>(m.cols), l.grid_min.y + l.cell * static_cast<float>(m.rows));
  const bool bar = spec.style.colormap != Colormap::Mask;
  l.bar_min = ImVec2(l.grid_min.x, l.grid_max.y + 0.8f * l.f);
  l.bar_max = ImVec2(l.grid_min.x + std::max(l.grid_max.x - l.grid_min.x, 12.0f * l.f), l.bar_min.y + 0.7f * l.f);
  l.height = static_cast<int>((bar ? l.bar_max.y + 1.4f * l.f : l.grid_max.y) + margin);
  return l;
}

}  // namespace

std::optional<std::string> render_slide(AppState& app, const HeatmapSpec& spec, const std::string& caption, int width,
                                        SlidePicture* picture) {
  const MatrixView& m = spec.values;
  if (!m.valid()) return std::string("the matrix is empty");
  const SlideLayout l = lay_out(spec, width);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  ImFont* font = ImGui::GetFont();

  ImDrawList overlay(ImGui::GetDrawListSharedData());
  overlay._ResetForNewFrame();
  overlay.PushTextureID(ImGui::GetIO().Fonts->TexID);
  overlay.PushClipRect(ImVec2(0, 0), ImVec2(static_cast<float>(width), static_cast<float>(l.height)));
  const std::string title = caption.empty() ? spec.title : spec.title + "   ·   " + caption;
  overlay.AddText(font, 1.3f * l.f, l.title_at, text, title.c_str());
  for (Index r = 0; l.row_labels && r < m.rows; ++r) {
    const std::string label = axis_label(spec.row_labels, r);
    const ImVec2 size = text_size(l.label_size, label);
    overlay.AddText(font, l.label_size,
                    ImVec2(l.grid_min.x - size.x - 0.4f * l.f, l.grid_min.y + (r + 0.5f) * l.cell - 0.5f * size.y), text,
                    label.c_str());
  }
  for (Index c = 0; l.col_labels && c < m.cols; ++c) {
    const std::string label = axis_label(spec.col_labels, c);
    const ImVec2 size = text_size(l.label_size, label);
    overlay.AddText(font, l.label_size, ImVec2(l.grid_min.x + (c + 0.5f) * l.cell - 0.5f * size.x,
                                               l.grid_min.y - l.col_label_height), text, label.c_str());
  }
  for (Index r = 0; l.numbers && r < m.rows; ++r)
    for (Index c = 0; c < m.cols; ++c) {
      const float v = m.at(r, c);
      const std::string label = cell_value_text(v, true);
      const ImVec2 size = text_size(l.number_size, label);
      const ImU32 colour = dark_background(spec.style, v) ? IM_COL32(255, 255, 255, 255) : IM_COL32(0, 0, 0, 255);
      overlay.AddText(font, l.number_size, ImVec2(l.grid_min.x + (c + 0.5f) * l.cell - 0.5f * size.x,
                                                  l.grid_min.y + (r + 0.5f) * l.cell - 0.5f * size.y), colour,
                      label.c_str());
    }
  std::vector<HeatmapRenderer::PictureQuad> quads;
  const GLuint mask = spec.mask.valid() ? app.textures.get(spec.mask) : 0;
  quads.push_back({l.grid_min, l.grid_max, app.textures.get(m), mask, static_cast<int>(m.rows),
                   static_cast<int>(m.cols), spec.style});
  if (spec.style.colormap != Colormap::Mask) {
    const MatrixView ramp = colour_ramp(spec.style);
    quads.push_back({l.bar_min, l.bar_max, app.textures.get(ramp), 0, 1, static_cast<int>(ramp.cols), spec.style,
                     false});
    const std::string low = cell_value_text(spec.style.low, true), high = cell_value_text(spec.style.high, true);
    const float y = l.bar_max.y + 0.2f * l.f;
    overlay.AddText(font, l.f, ImVec2(l.bar_min.x, y), text, low.c_str());
    overlay.AddText(font, l.f, ImVec2(l.bar_max.x - text_size(l.f, high).x, y), text, high.c_str());
  }
  overlay.PopClipRect();
  overlay.PopTextureID();

  ImDrawList* lists[] = {&overlay};
  ImDrawData data;
  data.Valid = true;
  data.CmdLists = lists;
  data.CmdListsCount = 1;
  data.TotalVtxCount = overlay.VtxBuffer.Size;
  data.TotalIdxCount = overlay.IdxBuffer.Size;
  data.DisplayPos = ImVec2(0, 0);
  data.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(l.height));
  data.FramebufferScale = ImVec2(1, 1);
  picture->width = width;
  picture->height = l.height;
  picture->grid_min = l.grid_min;
  picture->grid_max = l.grid_max;
  picture->numbers = l.numbers;
  return app.heatmaps.render_picture(width, l.height, ImGui::GetStyle().Colors[ImGuiCol_WindowBg], quads, &data,
                                     &picture->rgb);
}

}  // namespace al::gui
