#include "shell/frame_stats.hpp"

#include <epoxy/gl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "editing/edits.hpp"

namespace al::gui {

namespace {

constexpr int kWarmupFrames = 5;  // fonts, textures and ImGui's window sizes settle first
constexpr int kMinEdits = 20;     // the recompute phase shows at least this many edits (issue 16: a median of 20)
// ...unless that takes longer than this. In a sanitizer build on an Intel Xeon a 1024-token edit
// took 2.6-4.6 s to show (its trace a hundred times the release build's), so 60 s showed only 13.
constexpr double kMaxRecomputeSeconds = 180.0;

// The pan/zoom phase works on head 0's weights (the first of the step's row).
const std::string kPanZoomHeatmap = "weights.h0";
constexpr int kClickFrames = 4;  // pointer over a button, press, release, the frame it leads to

// One frame of the scripted pan and zoom, as a learner's hand would do it.
struct Gesture {
  enum Kind { Wheel, Press, Move, Release } kind = Press;
  float wheel = 0.0f;  // notches (Wheel)
  ImVec2 at;           // where over the grid, in fractions of its size (Wheel)
  ImVec2 move;         // pixels the pointer moves (Move)
};

const std::vector<Gesture>& pan_zoom_script() {
  static const std::vector<Gesture> script = [] {
    std::vector<Gesture> s;
    auto repeat = [&s](int times, Gesture g) { s.insert(s.end(), static_cast<size_t>(times), g); };
    auto wheel = [](float notches, ImVec2 at) { return Gesture{Gesture::Wheel, notches, at, {}}; };
    auto move = [](float dx, float dy) { return Gesture{Gesture::Move, 0.0f, {}, ImVec2(dx, dy)}; };
    const Gesture press{Gesture::Press, 0.0f, {}, {}}, release{Gesture::Release, 0.0f, {}, {}};
    // Two points apart, so that the second drag's press is not a double-click with the first's.
    const ImVec2 in_at(0.6f, 0.55f), out_at(0.4f, 0.4f);
    repeat(12, wheel(1.0f, in_at));  // in, one notch a frame: 1.25^12 = 14.6 times closer
    s.push_back(press);
    repeat(40, move(-12.0f, -8.0f));  // drag across
    s.push_back(release);
    repeat(7, wheel(-1.0f, out_at));  // out to 3x: at 4096, more cells than pixels again
    s.push_back(press);
    repeat(40, move(12.0f, 8.0f));
    s.push_back(release);
    repeat(5, wheel(-1.0f, out_at));  // out to the whole matrix
    return s;
  }();
  return script;
}

// What the enlarged heatmap's last frame drew: did a cell cover a pixel, and was each
// cell then a texel of its own?
struct ShownTexels {
  bool cells_cover_pixel = false, texel_per_cell = false;
};

ShownTexels shown_texels(const AppState& app) {
  ImVec2 min, max;
  std::vector<std::pair<std::string, double>> numbers;
  if (!app.widgets.find("heatmap." + kPanZoomHeatmap, &min, &max, &numbers)) return {};
  auto number = [&numbers](const char* key) {
    for (const auto& [name, value] : numbers)
      if (name == key) return value;
    return 0.0;
  };
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const double rows = number("shown_rows"), cols = number("shown_cols");
  ShownTexels shown;
  shown.cells_cover_pixel = rows > 0 && cols > 0 && (max.y - min.y) * scale.y >= rows && (max.x - min.x) * scale.x >= cols;
  shown.texel_per_cell = number("texel_rows") == rows && number("texel_cols") == cols;
  return shown;
}

bool centre_of(const AppState& app, const std::string& widget, ImVec2* at) {
  ImVec2 min, max;
  if (!app.widgets.find(widget, &min, &max)) return false;
  *at = ImVec2(0.5f * (min.x + max.x), 0.5f * (min.y + max.y));
  return true;
}

double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Seconds since this process was created (fork): /proc/self/stat's start time
// survives exec, so main()'s OpenMP re-exec and the dynamic loading count.
// Its unit is a clock tick (10 ms with USER_HZ = 100).
double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  // Field 22 (starttime); fields 3.. follow the name.
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  const double start = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return seconds(CLOCK_BOOTTIME) - start;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

std::string first_line_of(const char* path, const std::string& prefix) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

FrameStats::FrameStats(std::string out_path, int frames) : out_path_(std::move(out_path)), frames_(frames) {}

double FrameStats::now() const { return seconds(CLOCK_MONOTONIC); }

void FrameStats::before_frame(AppState& app) {
  frame_start_ = now();
  frame_cpu_start_ = seconds(CLOCK_THREAD_CPUTIME_ID);
  uploads_before_ = app.textures.upload_seconds();
  if (phase_ == Phase::PanZoom && !script_pointer(app)) {
    app.scripted_pointer.reset();
    phase_ = Phase::Recompute;
    phase_frames_ = 0;
    phase_start_ = now();
  }
  if (phase_ != Phase::Recompute) return;
  if (!edit_pending_) {
    // One X cell changes: everything downstream of X (every stage) is recomputed.
    // One merge key: the edits make a single undo step, not a copy of X each.
    const float value = 0.5f + 0.001f * static_cast<float>(edits_made_ % 100);
    edit_time_ = now();
    app.edit(with_cell(app.model.session(), InputId::X, 0, value), "frame stats", "frame_stats", "frame_stats");
    edit_call_ms_.push_back(1e3 * (now() - edit_time_));
    edit_pending_ = true;
    ++edits_made_;
  }
}

void FrameStats::after_swap(AppState& app) {
  glFinish();  // the swap is queued; the frame is on screen when the GL is done
  const double t = now();
  switch (phase_) {
    case Phase::Startup:
      startup_s_ = seconds_since_process_start();
      phase_ = Phase::Warmup;
      break;
    case Phase::Warmup:
      if (++phase_frames_ >= kWarmupFrames) {
        phase_ = Phase::Idle;
        phase_frames_ = 0;
      }
      break;
    case Phase::Idle:
      idle_frame_ms_.push_back(1e3 * (t - last_swap_));
      idle_ui_cpu_ms_.push_back(1e3 * (seconds(CLOCK_THREAD_CPUTIME_ID) - frame_cpu_start_));
      if (++phase_frames_ >= frames_) {
        phase_ = Phase::PanZoom;
        phase_frames_ = 0;
      }
      break;
    case Phase::PanZoom:
      if (scripted_frame_measured_) {
        pan_zoom_frame_ms_.push_back(1e3 * (t - last_swap_));
        pan_zoom_upload_ms_.push_back(1e3 * (app.textures.upload_seconds() - uploads_before_));
        const float after[3] = {app.view.zoom, app.view.center_row, app.view.center_col};
        if (!std::equal(after, after + 3, view_before_)) ++pan_zoom_moved_;
        deepest_zoom_ = std::max(deepest_zoom_, app.view.zoom);
        if (const auto shown = shown_texels(app); shown.cells_cover_pixel) {
          ++frames_cells_cover_pixel_;
          if (shown.texel_per_cell) ++frames_texel_per_cell_;
        }
      }
      ++phase_frames_;
      break;
    case Phase::Recompute:
      ++recompute_frames_;
      if (const auto trace = app.model.trace(); trace && trace.get() != last_drawn_trace_) {
        new_trace_frame_ms_.push_back(1e3 * (t - frame_start_));
        new_trace_upload_ms_.push_back(1e3 * (app.textures.upload_seconds() - uploads_before_));
        // Computed inside this frame's edit (below SessionModel's threshold), not on the worker.
        if (!computes_in_background(app.model.session())) compute_in_frame_ms_.push_back(trace->compute_ms);
      }
      // The model picks a finished computation up before the frame is built, so
      // a frame built while nothing was computing showed the latest edit.
      if (edit_pending_ && !app.model.computing()) {
        latency_ms_.push_back(1e3 * (t - edit_time_));
        // Computed inside the edit, the showing frame is the edit's own: it started before the edit.
        until_frame_ms_.push_back(std::max(0.0, 1e3 * (frame_start_ - edit_time_)));
        showing_frame_ms_.push_back(1e3 * (t - frame_start_));
        if (const auto trace = app.model.trace()) shown_compute_ms_.push_back(trace->compute_ms);
        edit_pending_ = false;
      }
      recompute_s_ = t - phase_start_;
      if ((recompute_frames_ >= frames_ && static_cast<int>(latency_ms_.size()) >= kMinEdits) ||
          recompute_s_ > kMaxRecomputeSeconds) {
        app.model.wait_idle();
        phase_ = Phase::Done;
      }
      break;
    case Phase::Done: break;
  }
  last_swap_ = t;
  last_drawn_trace_ = app.model.trace().get();
}

bool FrameStats::script_pointer(AppState& app) {
  const std::vector<Gesture>& script = pan_zoom_script();
  const int first = kClickFrames, back = first + static_cast<int>(script.size());
  const int k = phase_frames_;
  AppState::ScriptedPointer pointer = app.scripted_pointer.value_or(AppState::ScriptedPointer{});
  pointer.wheel = 0.0f;
  scripted_frame_measured_ = false;
  auto fail = [this](const std::string& widget) {
    pan_zoom_error_ = widget + " was not drawn";
    return false;
  };
  if (k < first) {  // a click on the heatmap's "+": it fills the panel
    if (k == 0 && !centre_of(app, "enlarge." + kPanZoomHeatmap, &pointer.pos)) return fail("enlarge." + kPanZoomHeatmap);
    pointer.down = k == 1;
  } else if (k < back) {
    ImVec2 min, max;
    if (!app.widgets.find("heatmap." + kPanZoomHeatmap, &min, &max)) return fail("heatmap." + kPanZoomHeatmap);
    const Gesture& g = script[static_cast<size_t>(k - first)];
    switch (g.kind) {
      case Gesture::Wheel:  // over the part the learner looks at
        pointer.pos = ImVec2(min.x + g.at.x * (max.x - min.x), min.y + g.at.y * (max.y - min.y));
        pointer.wheel = g.wheel;
        break;
      case Gesture::Press: pointer.down = true; break;
      case Gesture::Move: pointer.pos = ImVec2(pointer.pos.x + g.move.x, pointer.pos.y + g.move.y); break;
      case Gesture::Release: pointer.down = false; break;
    }
    scripted_frame_measured_ = true;
  } else if (k < back + kClickFrames) {  // a click on "back": every head again
    if (k == back && !centre_of(app, "zoom.back", &pointer.pos)) return fail("zoom.back");
    pointer.down = k == back + 1;
  } else {
    return false;
  }
  app.scripted_pointer = pointer;
  view_before_[0] = app.view.zoom;
  view_before_[1] = app.view.center_row;
  view_before_[2] = app.view.center_col;
  return true;
}

int FrameStats::finish(const AppState& app, int width, int height) const {
  using nlohmann::json;
  const auto trace = app.model.trace();
  const double idle_s = [&] {
    double sum = 0;
    for (double ms : idle_frame_ms_) sum += ms;
    return sum / 1e3;
  }();
  json j;
  j["session"] = app.document;
  j["window"] = std::to_string(width) + "x" + std::to_string(height);
  if (trace) {
    j["batch"] = trace->dims.batch;
    j["n"] = trace->dims.len_q;
    j["d_model"] = trace->dims.d_model;
    j["heads"] = trace->dims.heads;
    j["trace_bytes"] = trace->memory_bytes;
    j["last_compute_ms"] = trace->compute_ms;
  }
  j["computes_in_background"] = computes_in_background(app.model.session());
  j["startup_s"] = startup_s_;
  j["startup_resolution_s"] = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  j["idle"] = {{"frames", idle_frame_ms_.size()},
               {"fps", idle_s > 0 ? static_cast<double>(idle_frame_ms_.size()) / idle_s : 0.0},
               {"frame_ms_median", percentile(idle_frame_ms_, 0.5)},
               {"frame_ms_p90", percentile(idle_frame_ms_, 0.9)},
               {"ui_thread_cpu_ms_median", percentile(idle_ui_cpu_ms_, 0.5)}};
  j["recompute"] = {
      {"frames", recompute_frames_},
      {"seconds", recompute_s_},
      {"fps", recompute_s_ > 0 ? recompute_frames_ / recompute_s_ : 0.0},
      {"edits_shown", latency_ms_.size()},
      {"edits_shown_per_s", recompute_s_ > 0 ? static_cast<double>(latency_ms_.size()) / recompute_s_ : 0.0}};
  double pan_zoom_s = 0;
  for (double ms : pan_zoom_frame_ms_) pan_zoom_s += ms / 1e3;
  const Index n = trace ? trace->dims.len_q : 0;
  const auto deepest_cells = static_cast<Index>(std::ceil(static_cast<float>(n) / deepest_zoom_));
  j["pan_zoom"] = {{"heatmap", kPanZoomHeatmap},
                   {"frames", pan_zoom_frame_ms_.size()},
                   {"seconds", pan_zoom_s},
                   {"fps", pan_zoom_s > 0 ? static_cast<double>(pan_zoom_frame_ms_.size()) / pan_zoom_s : 0.0},
                   {"frame_ms_median", percentile(pan_zoom_frame_ms_, 0.5)},
                   {"frame_ms_p90", percentile(pan_zoom_frame_ms_, 0.9)},
                   {"frame_ms_max", percentile(pan_zoom_frame_ms_, 1.0)},
                   {"upload_ms_median", percentile(pan_zoom_upload_ms_, 0.5)},
                   {"upload_ms_max", percentile(pan_zoom_upload_ms_, 1.0)},
                   {"frames_view_moved", pan_zoom_moved_},
                   {"deepest_zoom", deepest_zoom_},
                   {"deepest_shown_cells", deepest_cells},
                   {"frames_cells_cover_a_pixel", frames_cells_cover_pixel_},
                   {"of_them_one_texel_per_cell", frames_texel_per_cell_},
                   {"back_to_every_head", app.view.enlarged.empty()},
                   {"error", pan_zoom_error_}};
  j["edit_to_visible_ms"] = {{"samples", latency_ms_.size()},
                             {"median", percentile(latency_ms_, 0.5)},
                             {"p90", percentile(latency_ms_, 0.9)},
                             {"max", percentile(latency_ms_, 1.0)}};
  // Where an edit's latency goes: the edit call (validation, the undo step, handing
  // the session over), the wait until the frame that shows it starts (the worker's
  // computation, its summaries, the hand-off), and that frame (uploads, drawing).
  j["edit_breakdown_ms"] = {{"edit_call_median", percentile(edit_call_ms_, 0.5)},
                            {"until_showing_frame_median", percentile(until_frame_ms_, 0.5)},
                            {"compute_median", percentile(shown_compute_ms_, 0.5)},
                            {"showing_frame_median", percentile(showing_frame_ms_, 0.5)}};
  j["new_trace_frame"] = {{"samples", new_trace_frame_ms_.size()},
                          {"frame_ms_median", percentile(new_trace_frame_ms_, 0.5)},
                          {"upload_ms_median", percentile(new_trace_upload_ms_, 0.5)},
                          {"compute_in_frame_ms_median", percentile(compute_in_frame_ms_, 0.5)}};
  j["machine"] = {{"nproc", std::thread::hardware_concurrency()},
                  {"cpu", first_line_of("/proc/cpuinfo", "model name")},
                  {"load", load_average()},
                  {"renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER))}};

  std::printf(
      "frame stats: %s, %s window\n"
      "  start-up          %.3f s (process start -> first frame swapped, +-%.2f s)\n"
      "  idle redraw       %.1f fps (frame %.1f ms median, %.1f ms p90, %zu frames; UI thread CPU %.1f ms)\n"
      "  pan/zoom          %.1f fps (frame %.1f ms median, %.1f ms p90, %.1f ms max, %zu frames, the view moved in %d;"
      " zoom up to %.1f: %lld cells a side; uploads %.1f ms median; one texel per cell in %d of the %d frames"
      " where a cell covered a pixel)%s%s\n"
      "  recompute         %.1f fps, %.1f edits shown/s (%d frames, %zu edits in %.1f s)\n"
      "  edit -> visible   %.1f ms median, %.1f ms p90, %.1f ms max\n"
      "  edit breakdown    %.1f ms the edit call, %.1f ms until the frame showing it (computed in %.1f ms), %.1f ms that frame\n"
      "  new-trace frame   %.1f ms median (texture uploads %.1f ms, computed in the frame %.1f ms)\n",
      app.document.c_str(), j["window"].get<std::string>().c_str(), startup_s_,
      j["startup_resolution_s"].get<double>(), j["idle"]["fps"].get<double>(), percentile(idle_frame_ms_, 0.5),
      percentile(idle_frame_ms_, 0.9), idle_frame_ms_.size(), percentile(idle_ui_cpu_ms_, 0.5),
      j["pan_zoom"]["fps"].get<double>(), percentile(pan_zoom_frame_ms_, 0.5), percentile(pan_zoom_frame_ms_, 0.9),
      percentile(pan_zoom_frame_ms_, 1.0), pan_zoom_frame_ms_.size(), pan_zoom_moved_, deepest_zoom_,
      static_cast<long long>(deepest_cells), percentile(pan_zoom_upload_ms_, 0.5), frames_texel_per_cell_,
      frames_cells_cover_pixel_, pan_zoom_error_.empty() ? "" : ": ",
      pan_zoom_error_.c_str(), j["recompute"]["fps"].get<double>(),
      j["recompute"]["edits_shown_per_s"].get<double>(), recompute_frames_, latency_ms_.size(), recompute_s_,
      percentile(latency_ms_, 0.5), percentile(latency_ms_, 0.9), percentile(latency_ms_, 1.0),
      percentile(edit_call_ms_, 0.5), percentile(until_frame_ms_, 0.5), percentile(shown_compute_ms_, 0.5),
      percentile(showing_frame_ms_, 0.5),
      percentile(new_trace_frame_ms_, 0.5), percentile(new_trace_upload_ms_, 0.5),
      percentile(compute_in_frame_ms_, 0.5));
  std::fflush(stdout);
  if (!out_path_.empty()) {
    std::ofstream out(out_path_);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "attention-lab: cannot write the frame stats to %s\n", out_path_.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace al::gui
