#pragma once
// One matrix on screen: title, token labels, the shader-coloured grid, numbers
// in the cells when they fit, a colour bar with its range, hover and pin.
#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "widgets/heatmap_cells.hpp"  // axis_label, for the callers that label rows
#include "widgets/heatmap_spec.hpp"

namespace al::gui {

struct HeatmapInteraction {
  bool clicked = false;  // pressed this frame on a cell
  bool held = false;     // the mouse button is down on the grid (a paint stroke)
  bool has_cell = false; // the mouse is over a cell: `row`, `col`
  Index row = 0, col = 0;
};

HeatmapInteraction heatmap_widget(AppState& app, const HeatmapSpec& spec);

// The height heatmap_widget takes besides the grid (title line, column labels, colour bar and
// the spacing after it), counting column labels wherever they may show: the step panel gives
// the grids what is left of the panel.
float heatmap_frame_height(const HeatmapSpec& spec);

}  // namespace al::gui
