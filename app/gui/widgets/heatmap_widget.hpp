#pragma once
// One matrix on screen: title, token labels, the shader-coloured grid, numbers
// in the cells when they fit, a colour bar with its range, hover and pin.
#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "widgets/heatmap_spec.hpp"

namespace al::gui {

struct HeatmapInteraction {
  bool clicked = false;  // pressed this frame on a cell
  bool held = false;     // the mouse button is down on the grid (a paint stroke)
  bool has_cell = false; // the mouse is over a cell: `row`, `col`
  Index row = 0, col = 0;
};

HeatmapInteraction heatmap_widget(AppState& app, const HeatmapSpec& spec);

// The label of row/col `index`: the token when there is one, else the index.
std::string axis_label(const std::vector<std::string>* labels, Index index);
// A cell's value as a learner reads it: "NaN", "−∞", 3 or 4 decimals, never "-0.00".
std::string format_value(float v, bool compact);
// Whether `v`'s colour is dark enough to need white text on it.
bool dark_background(const HeatmapStyle& style, float v);
// A 1 x 64 matrix running from the style's low to its high value: the colour bar.
MatrixView colour_ramp(const HeatmapStyle& style);

}  // namespace al::gui
