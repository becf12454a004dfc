#pragma once
// State of the teaching views opened from the View menu: "Explain this cell"
// (panel_explain.cpp), token lines (panel_token_lines.cpp), heads as a reshape
// (panel_heads.cpp), snapshot and diff (panel_diff.cpp) and File > Export
// (panel_export.cpp). AppState holds one TeachingViews.
#include <memory>
#include <string>
#include <vector>

#include "teaching/explain.hpp"
#include "model/trace.hpp"
#include "teaching/trace_diff.hpp"

namespace al::gui {

struct AppState;
struct CellRef;

// Rows/columns of one heatmap (by its widget name) drawn with an outline: the
// inputs a cell came from. Set by the explain window, read by heatmap_widget.
struct HeatmapHighlight {
  std::string heatmap;
  std::vector<Index> rows, cols;
};

struct TeachingViews {
  bool explain_open = false;
  bool token_lines_open = false;
  bool heads_open = false;
  bool diff_open = false;
  bool export_open = false;

  std::vector<HeatmapHighlight> highlights;  // rebuilt by the explain window each frame

  int token_lines_head = -1;  // -1: the average over heads

  std::shared_ptr<const Trace> snapshot;  // Snapshot and diff: the pinned "before"
  std::shared_ptr<const TraceDiff> diff;  // snapshot vs diff_of, recomputed when the trace changes
  std::shared_ptr<const Trace> diff_of;
  std::string diff_error;
  int diff_stage = -1;                    // stage shown as heatmaps (-1: the first that changed)

  std::string export_folder = ".";
  std::string export_status;              // last export's result, shown in the window
  bool export_failed = false;

  // Save as PNG (heatmap_png.cpp): the heatmap (widget name) to save when it is next drawn.
  std::string png_heatmap;
  std::string png_path;
  int png_slide_width = 0;                // > 0: a slide picture that wide (heatmap_slide.cpp); 0: the cells alone
  int slide_width = 1920;                 // the width File > Export offers for slide pictures
  std::string slide_grid;                 // "x,y,w,h" of the cells in the last slide picture saved (for tests)
  long png_frame = 0;                     // frame of the request; unanswered a few frames later, it fails
};

void draw_explain_window(AppState& app);      // panel_explain.cpp
void draw_token_lines_window(AppState& app);  // panel_token_lines.cpp
void draw_heads_window(AppState& app);        // panel_heads.cpp
void draw_diff_window(AppState& app);         // panel_diff.cpp
void draw_export_window(AppState& app);       // panel_export.cpp
// View menu items (the windows above) and File menu export items.
void draw_view_menu(AppState& app);           // panel_explain.cpp
void draw_export_menu_items(AppState& app);   // panel_export.cpp
// `name` in the export window's folder (panel_export.cpp).
std::string export_path(const AppState& app, const std::string& name);
// The trace cell a heatmap cell shows ("scores.h1", "weights.avg" -> head -1,
// "concat"); nullopt for inputs, the mask and other non-stage heatmaps.
std::optional<CellAddress> cell_address_of(const CellRef& ref, Index batch);  // panel_explain.cpp
// Opens the windows named by --open and applies --pin (first frame).
void apply_teaching_options(AppState& app);   // panel_explain.cpp

}  // namespace al::gui
