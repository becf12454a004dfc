#pragma once
// A heatmap as a picture for a slide: a title (stage, head, example), token labels on
// both axes, the numbers in the cells when they fit, and a colour bar with its range,
// drawn off screen at a chosen width with the shader and font of the window.
#include <optional>
#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "widgets/heatmap_spec.hpp"

namespace al::gui {

struct SlidePicture {
  int width = 0, height = 0;
  ImVec2 grid_min, grid_max;   // where the cells are, in picture pixels (tests read the colours there)
  bool numbers = false;        // the values are written in the cells
  std::vector<unsigned char> rgb;  // rows bottom-up, as GL reads them
};

// `caption` names the example (the document). An error message when GL cannot draw it.
std::optional<std::string> render_slide(AppState& app, const HeatmapSpec& spec, const std::string& caption,
                                        int width, SlidePicture* picture);

}  // namespace al::gui
