#pragma once
// What one heatmap shows: the widget draws it, the PNG export redraws it off
// screen from the same spec (so neither needs the other's header).
#include <string>
#include <vector>

#include "gl/gl_heatmap.hpp"   // HeatmapStyle
#include "gl/matrix_view.hpp"

namespace al::gui {

struct HeatmapSpec {
  std::string name;   // unique per frame: ImGui id, widget name, pin target
  std::string title;
  MatrixView values;  // (rows, cols)
  MatrixView mask;    // (rows, cols) of 1 = attend / 0 = masked, or invalid
  MatrixView before_dropout;  // (rows, cols) weights of the dropped stage: its zeroed cells are marked
  HeatmapStyle style;
  bool no_finite_values = false;  // nothing to scale (all masked, ±inf or NaN): the colour bar says so
  const std::vector<std::string>* row_labels = nullptr;  // tokens, or null for indices
  const std::vector<std::string>* col_labels = nullptr;
  float width = 0;       // the box the widget must fit in
  float max_height = 0;
  float max_cell = 0;    // largest cell side; 0: a default in font units
  bool pin_on_click = true;  // false: the caller handles clicks (mask painter)
  bool enlargeable = false;  // offers "enlarge": the heatmap panel then shows it alone (ViewState::enlarged)
  bool enlarged = false;     // it is that one: wheel zooms, a drag pans, a double-click fits it again
};

}  // namespace al::gui
