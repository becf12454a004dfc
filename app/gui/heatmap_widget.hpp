#pragma once
// One matrix on screen: title, token labels, the shader-coloured grid, numbers
// in the cells when they fit, a colour bar with its range, hover and pin.
#include <string>
#include <vector>

#include "app_state.hpp"

namespace al::gui {

struct HeatmapSpec {
  std::string name;   // unique per frame: ImGui id, widget name, pin target
  std::string title;
  MatrixView values;  // (rows, cols)
  MatrixView mask;    // (rows, cols) of 1 = attend / 0 = masked, or invalid
  HeatmapStyle style;
  const std::vector<std::string>* row_labels = nullptr;  // tokens, or null for indices
  const std::vector<std::string>* col_labels = nullptr;
  float width = 0;       // the box the widget must fit in
  float max_height = 0;
  float max_cell = 0;    // largest cell side; 0: a default in font units
  bool pin_on_click = true;  // false: the caller handles clicks (mask painter)
};

struct HeatmapInteraction {
  bool clicked = false;  // pressed this frame on a cell
  bool held = false;     // the mouse button is down on the grid (a paint stroke)
  bool has_cell = false; // the mouse is over a cell: `row`, `col`
  Index row = 0, col = 0;
};

HeatmapInteraction heatmap_widget(AppState& app, const HeatmapSpec& spec);

// The label of row/col `index`: the token when there is one, else the index.
std::string axis_label(const std::vector<std::string>* labels, Index index);

}  // namespace al::gui
