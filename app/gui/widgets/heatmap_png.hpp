#pragma once
// "Save heatmap as PNG": from any heatmap's right-click menu, from File > Export
// (the pinned heatmap) or from the command line (--export-heatmap NAME
// --heatmap-out FILE.png [--slide-width W]), as the cells alone or as a slide picture. The picture is drawn by the heatmap shader off screen
// (gl_heatmap_export.cpp) from the very spec the widget drew, so its colours are
// the ones on screen; it is written atomically.
#include <string>

#include "state/app_state.hpp"
#include "widgets/heatmap_spec.hpp"

namespace al::gui {

// Square blocks of `pixels_per_cell`: small matrices scaled up (nearest
// neighbour) until the longer side reaches 256 pixels, large ones at one pixel
// per cell.
struct HeatmapPngSize {
  int pixels_per_cell = 1, width = 0, height = 0;
};
HeatmapPngSize heatmap_png_size(Index rows, Index cols);

// Called by heatmap_widget right after its grid item: the right-click menu, and
// a request waiting for this heatmap.
void heatmap_png_hooks(AppState& app, const HeatmapSpec& spec);
// Saves heatmap `name` (a widget name, e.g. "weights.h0") to `path` the next time it is drawn:
// the cells alone, or with `slide_width` > 0 a slide picture that wide (heatmap_slide.hpp).
void request_heatmap_png(AppState& app, const std::string& name, const std::string& path, int slide_width = 0);
// The file name a heatmap's picture gets in the export folder: stage, head and batch item in it.
std::string heatmap_png_name(const AppState& app, const std::string& heatmap, bool slide);
// Every frame: a request no heatmap on screen answered within a few frames fails
// with a message (its heatmap is not at the current step).
void expire_heatmap_png_request(AppState& app);
// At exit, for --export-heatmap: 0 when the PNG was written, else 1 with the reason on stderr.
int heatmap_png_exit_status(AppState& app);

}  // namespace al::gui
