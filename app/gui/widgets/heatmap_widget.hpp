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

// A heatmap's size in a box before it is drawn (heatmap_widget sizes itself with it): the
// labels are measured once, so the step panel can try many boxes a frame.
class HeatmapSizer {
 public:
  // `shown`: the part of spec.values on screen, from (first_row, first_col).
  HeatmapSizer(const HeatmapSpec& spec, const MatrixView& shown, Index first_row, Index first_col);
  struct Geometry {
    float cell = 0;              // a cell's height (and side, unless widened), pixels
    float cell_width = 0;        // a cell's width: `cell`, or more for a tall, narrow matrix
    float row_label_width = 0;   // left of the grid, 0 when the tokens are not drawn
    float col_label_height = 0;  // above the grid, 0 when the keys are not drawn
  };
  Geometry geometry(float width, float max_height) const;
  // All heatmap_widget takes down the page when not enlarged: title line, column labels, grid,
  // colour bar and the spacing after it.
  float height(float width, float max_height) const;

 private:
  const HeatmapSpec& spec_;
  Index rows_, cols_;
  float widest_row_label_ = -1.0f;  // < 0: no row labels
  float widest_col_label_ = -1.0f;  // < 0: no column labels
};

}  // namespace al::gui
