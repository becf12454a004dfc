#include "widgets/heatmap_cells.hpp"

#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <memory>

namespace al::gui {

// Where on the colormap a value falls, to pick a readable text colour.
bool dark_background(const HeatmapStyle& style, float v) {
  if (!std::isfinite(v) || style.colormap == Colormap::Mask) return false;
  const float t = style.high > style.low ? (v - style.low) / (style.high - style.low) : 0.5f;
  if (style.colormap == Colormap::Sequential) return t < 0.6f;
  return std::fabs(t - 0.5f) > 0.32f;
}

MatrixView colour_ramp(const HeatmapStyle& style) {
  constexpr int kSteps = 64;
  auto ramp = std::make_shared<std::vector<float>>(kSteps);
  for (int i = 0; i < kSteps; ++i) (*ramp)[i] = style.low + (style.high - style.low) * i / (kSteps - 1);
  MatrixView bar;
  bar.owner = ramp;
  bar.data = ramp->data();
  bar.rows = 1;
  bar.cols = kSteps;
  bar.row_stride = kSteps;
  char key[96];
  std::snprintf(key, sizeof key, "bar/%d/%.9g/%.9g", static_cast<int>(style.colormap), style.low, style.high);
  bar.key = key;
  return bar;
}

std::string axis_label(const std::vector<std::string>* labels, Index index) {
  if (!labels || index >= static_cast<Index>(labels->size()) || (*labels)[index].empty()) return std::to_string(index);
  // A token may hold a line break or a tab: drawn as they are, they ran over the first row of cells.
  // Other control characters are written as escapes: a NUL ended the label where it stood.
  std::string label;
  for (const char c : (*labels)[index]) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      label += ' ';
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02X", byte);
      label += escape;
    } else {
      label += c;
    }
  }
  return label;
}

std::string fitted_label(std::string label, float width) {
  if (ImGui::CalcTextSize(label.c_str()).x <= width) return label;
  while (!label.empty()) {
    size_t cut = label.size() - 1;  // the last UTF-8 character starts here
    while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;
    label.erase(cut);
    if (ImGui::CalcTextSize((label + "…").c_str()).x <= width) return label + "…";
  }
  return "…";
}

}  // namespace al::gui
