#pragma once
// --frame-stats: the window measures itself (issue 6). Phases, each in the real
// frame loop with a redraw forced every frame:
//   idle       nothing changes: how fast the window redraws (8 heads visible)
//   pan/zoom   head 0's weights enlarged (a click on its "+"), then zoomed in with
//              the wheel, dragged across, zoomed out, dragged again, zoomed out to
//              the whole matrix, and back (a click on "back"): the scripted pointer
//              (AppState::scripted_pointer) goes through ImGui like the real mouse;
//              frames/s while the view moves, and how close the zoom came
//   recompute  an edit of one X cell whenever the previous one is on screen, so
//              every stage is recomputed again and again: frames/s, edits shown/s,
//              and each edit's latency (the edit call -> the swap of the first
//              frame showing it)
// plus start-up: process start (fork, so the OpenMP re-exec counts) -> first swap,
// and what a frame that shows a new trace costs on the UI thread beside an idle
// one (texture uploads, a computation made inside the frame, the rest).
#include <string>
#include <vector>

#include "state/app_state.hpp"

namespace al::gui {

class FrameStats {
 public:
  // frames: how many frames the idle and recompute phases draw each.
  FrameStats(std::string out_path, int frames);

  // Before a frame is built: may make this frame's edit.
  void before_frame(AppState& app);
  // After the frame was swapped (waits for the GL to finish, so the time is real).
  void after_swap(AppState& app);
  bool done() const { return phase_ == Phase::Done; }
  // Prints the summary, writes the JSON; returns a process exit code.
  int finish(const AppState& app, int width, int height) const;

 private:
  enum class Phase { Startup, Warmup, Idle, PanZoom, Recompute, Done };
  double now() const;
  // The pan/zoom phase's pointer for this frame; false once the script is over.
  bool script_pointer(AppState& app);

  std::string out_path_;
  int frames_ = 120;
  Phase phase_ = Phase::Startup;
  int phase_frames_ = 0;
  double phase_start_ = 0, last_swap_ = 0;
  double startup_s_ = -1;

  std::vector<double> idle_frame_ms_;
  std::vector<double> idle_ui_cpu_ms_;  // CPU time of the UI thread itself (not llvmpipe's threads)
  double frame_cpu_start_ = 0;
  // Pan/zoom: frames while the view moves (wheel or drag), whether each moved it.
  std::vector<double> pan_zoom_frame_ms_, pan_zoom_upload_ms_;
  int pan_zoom_moved_ = 0;
  float deepest_zoom_ = 1.0f;
  // Of those frames, the ones where a cell covered at least a pixel, and of them the
  // ones whose texture held one texel per cell (the learner sees the cells themselves).
  int frames_cells_cover_pixel_ = 0, frames_texel_per_cell_ = 0;
  bool scripted_frame_measured_ = false;
  std::string pan_zoom_error_;  // the script could not run (the heatmap was not drawn)
  float view_before_[3] = {0, 0, 0};
  int recompute_frames_ = 0;
  double recompute_s_ = 0;
  int edits_made_ = 0;
  bool edit_pending_ = false;  // made, not yet on screen
  double edit_time_ = 0;
  std::vector<double> latency_ms_;
  // Each edit's parts: the edit call, from the edit to the start of the frame showing it,
  // the shown trace's own compute time, and that frame.
  std::vector<double> edit_call_ms_, until_frame_ms_, shown_compute_ms_, showing_frame_ms_;

  // Frames of the recompute phase that drew a trace the previous frame did not.
  double frame_start_ = 0, uploads_before_ = 0;
  const void* last_drawn_trace_ = nullptr;
  std::vector<double> new_trace_frame_ms_, new_trace_upload_ms_, compute_in_frame_ms_;
};

}  // namespace al::gui
