#pragma once
// Rows of heatmaps in a panel: each row under its label, its maps side by side in lines, and
// every row shrunk by one factor so that the whole step fits the panel's height.
#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "widgets/heatmap_spec.hpp"

namespace al::gui {

// One row of heatmaps of a step: a label over them, side by side.
struct HeatmapRow {
  std::string label;
  std::vector<HeatmapSpec> specs;
  float max_height = 0;
  bool select_head_on_click = false;  // clicking a head shows that head's inputs
  Index head_group = 1;  // query heads per head of the row (a K/V head's first query head is n·group)
};

// Draws `rows` in the panel's remaining width, fitted to `region` pixels of height where they
// can be (no grid under four font units).
void draw_heatmap_rows(AppState& app, std::vector<HeatmapRow> rows, float region);

}  // namespace al::gui
