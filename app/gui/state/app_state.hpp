#pragma once
// The one state object of the desktop app (no globals): the session model,
// what the learner is looking at, the GL resources and the test hooks.
// Panels (panel_*.cpp) read it and send edits through AppState::edit().
#include <imgui.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "state/document_state.hpp"
#include "editing/edits.hpp"
#include "state/flash_linear_lessons.hpp"
#include "platform/fonts.hpp"
#include "gl/gl_heatmap.hpp"
#include "state/gradient_state.hpp"
#include "platform/i18n.hpp"
#include "state/labs_state.hpp"
#include "gl/matrix_view.hpp"
#include "editing/session_model.hpp"
#include "state/stages.hpp"
#include "state/teaching_views.hpp"
#include "state/training_lab.hpp"
#include "platform/widget_registry.hpp"

namespace al::gui {

// Parsed command line (see options.cpp for the syntax).
struct Options {
  std::string source;            // preset name or session path; empty: the default preset
  bool screenshot = false;       // render, write `out`, exit
  std::string out;               // PNG path of the screenshot
  std::string stage;             // initial step (step id or trace stage name)
  int width = 0, height = 0;     // window size; 0: from the monitor
  std::optional<Language> language;
  int head = -1;                 // show only this head (-1: every head + the average)
  std::string widgets_out;       // JSON of widget rectangles, rewritten when it changes
  std::string save_on_exit;      // session JSON written when the app closes
  int frames = 0;                // quit after this many frames (0: run until closed)
  bool frame_stats = false;      // --frame-stats [out.json]: measure frame rate and latency, then quit
  std::string frame_stats_out;
  std::string tab;               // editor tab open at start: config, matrices or mask
  std::vector<std::string> open_windows;  // --open: floating windows open at start (flash, linear, lessons, ...)
  int lesson = -1;               // --lesson N: the guided tour open at step N (0-based)
  std::string pin;               // --pin stage:batch:head:row:col, the cell pinned at start
  std::string snapshot;          // --snapshot <preset | session.json>: the diff view's "before"
  std::string export_heatmap;    // --export-heatmap NAME: save that heatmap (widget name) as PNG ...
  std::string heatmap_out;       // ... to --heatmap-out FILE.png when it is drawn
  int slide_width = 0;           // --slide-width W: as a slide picture W pixels wide
  bool quiz_hide_cell = false;   // --quiz-hide cell: the quiz covers one cell instead of the stage
  Index memory_limit = 0;        // --memory-limit BYTES: the traces' limit (0: the machine's default; tests)
  std::optional<StageSet> keep;  // --keep STAGES: keep only these (B, h, Lq, Lk) stages while over the limit
  // screenshot: the pictures to take, in order, in one window. `--stage a,b --tab c,d` asks for
  // each stage with each tab; the first is also `stage`, `tab`, `out` and `widgets_out` above.
  struct Shot {
    std::string stage, tab, out, widgets_out;
  };
  std::vector<Shot> shots;
};

// A cell of a heatmap on screen: which heatmap (its widget name) and where.
struct CellRef {
  std::string heatmap;
  Index row = 0, col = 0;
  bool operator==(const CellRef& o) const {
    return heatmap == o.heatmap && row == o.row && col == o.col;
  }
};

// A size field being typed into, the session it showed when typing began, and the last character
// typed that a whole number cannot hold (ImGui drops it: "1O" with a letter O reads 1).
struct FieldBase {
  std::string field;
  Session session;
  std::string refused;
};

// Typed text a field did not take (not a number, not whole positions): the field says why under
// itself, in the current language, until the session changes in any way (an edit, undo, redo,
// another file), so an old typo is never named beside a document it was not typed into.
struct Refusal {
  std::string widget;  // the message's widget name: "editor.typing_message", "config.mask_fill.bad" ...
  std::string key;     // the message (assets/i18n) and its values
  Params params;
  std::uint64_t revision = 0;  // SessionModel::revision() when the text was refused
};

struct ViewState {
  // A session just brought up to look at (a lesson's, a trained layer): its step `at`, batch item 0,
  // every head, not playing.
  void look_at(Step at) {
    step = at;
    playing = false;
    batch = 0;
    input_head = 0;
    only_head = -1;
  }

  Step step = Step::X;
  Index batch = 0;           // batch item shown in every view
  int only_head = -1;        // -1: all heads side by side + average; else that head alone
  Index input_head = 0;      // head whose inputs are shown beside the outputs
  std::optional<CellRef> pinned;
  std::optional<CellRef> hovered;

  // One heatmap enlarged to fill the view (its widget name; empty: the step's usual rows),
  // shown `zoom` times closer around the matrix point (center_row, center_col).
  std::string enlarged;
  float zoom = 1.0f;
  float center_row = 0.0f, center_col = 0.0f;

  // The weights' heatmaps coloured from 0 to the largest weight shown instead of 0 to 1.
  bool stretch_weights = false;

  bool playing = false;      // the stepper advances on its own
  double next_play_time = 0; // glfwGetTime() of the next automatic step

  // An editor tab to bring to the front on the next frame (config, matrices, mask), e.g. by a lesson.
  std::string select_tab;

  // The control that made the latest edit: the error of that edit shows next to it.
  std::string error_control;

  // Matrix editor
  InputId editor_input = InputId::X;
  Index editor_batch = 0;
  int editor_head = -1;      // -1: the whole weight matrix; else that head's columns
  int editor_first_col = 0;  // first column of the window shown on wide matrices
  // Typing into a cell: the cell being typed into and its text.
  unsigned int typing_cell = 0;
  std::string typed_text;
  int random_seed = 1;
  int drag_generation = 0;   // a new drag gets a new merge key (one undo step per drag)

  // Mask painter: one stroke (press, drag, release) sets cells to one value.
  Index mask_batch = 0;
  bool mask_stroke_active = false;
  bool mask_stroke_value = false;
  std::optional<std::pair<Index, Index>> mask_stroke_cell;  // (row, col) the stroke last crossed
  int mask_stroke_id = 0;
  std::string mask_blocked;  // "causal" / "padding": the last click hit a cell that layer hides
  enum class MaskTool { Paint, Window, Global };
  MaskTool mask_tool = MaskTool::Paint;  // what a click on the mask grid does

  std::optional<Refusal> refusal;  // the latest typed text a field refused (cells, global tokens, fill)
  std::optional<FieldBase> field_base;  // Settings: each keystroke of a size applies to this session
};

// The worker reduces the big stages the heatmaps show for their textures with the trace
// (StageSummary::peaks; the panel says which, SessionModel::set_peak_stages), so the frame that
// shows a new trace uploads them instead of reading (n, n) matrices.
inline ComputeOptions with_heatmap_peaks(ComputeOptions compute) {
  compute.peak_texels = TextureCache::kScreenTexels;
  return compute;
}

struct AppState {
  explicit AppState(Session initial, ComputeOptions compute = {})
      : model(std::move(initial), with_heatmap_peaks(std::move(compute))) {}

  Options options;
  std::string document;      // what was opened, for the title
  DocumentState files;       // its file, dialogs, recovery, settings (documents.hpp)
  SessionModel model;
  ViewState view;
  I18n i18n;

  Fonts fonts;
  FontReport font_report;
  std::vector<std::string> notices;  // start-up problems shown in the status bar
  std::optional<Error> start_problem;  // the session given at start that could not be opened, shown translated

  HeatmapRenderer heatmaps;
  TextureCache textures;
  DerivedCache derived;
  WidgetRegistry widgets;

  TeachingViews teaching;    // View menu windows and File > Export (teaching_views.hpp)
  GradientView gradient;     // dL/d(stage) beside the values, the descent step (gradient_state.hpp)
  LabsState labs;            // why √d_k, mask fill, softmax stability, fused QKV, quiz (labs_state.hpp)

  FlashLabState flash_lab;
  LinearLabState linear_lab;
  TrainingLabState training_lab;  // its worker stops when the app does
  LessonState lessons;
  bool keep_drawing = false;  // set during a frame by an animating window: draw the next frame too
  // --frame-stats' scripted mouse: given to ImGui in place of the pointer's own state each
  // frame, so a scripted zoom and pan takes the path of the real wheel and drag.
  struct ScriptedPointer {
    ImVec2 pos;
    bool down = false;
    float wheel = 0.0f;  // notches this frame
  };
  std::optional<ScriptedPointer> scripted_pointer;

  bool quit = false;
  long frame = 0;

  const char* tr(const std::string& key) const { return i18n.tr(key); }
  // Hands an edited session to the model; `control` names the widget, so the
  // error of an invalid edit is shown beside it.
  void edit(Session next, const std::string& label, const std::string& control,
            std::string merge_key = {});
};

}  // namespace al::gui
