#pragma once
// State of the windows of the Labs menu that answer the seeds' "why": why √d_k
// (panel_lab_sqrt_dk.cpp), mask fill values (panel_lab_mask_fill.cpp), softmax
// stability (panel_lab_stability.cpp), fused QKV (panel_lab_fused.cpp) and the
// quiz (panel_quiz.cpp). Their numbers come from core/teaching/labs.hpp and core/teaching/quiz.hpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "teaching/lab_numbers.hpp"
#include "teaching/labs.hpp"
#include "gl/matrix_view.hpp"
#include "model/trace.hpp"
#include "numerics/decode.hpp"
#include "teaching/quiz.hpp"

namespace al::gui {

struct AppState;

struct SqrtDkLabState {
  bool open = false;
  int keys = 16;  // n: scores per softmax row
  int computed_keys = 0;
  std::vector<SqrtDkPoint> points;
};

struct MaskFillLabState {
  bool open = false;
  bool use_example = true;  // the left-padded causal example; else the current session
  std::uint64_t revision = ~std::uint64_t{0};
  bool computed_example = false;
  std::shared_ptr<const Session> session;  // what the results were computed from
  std::vector<MaskFillResult> results;
  std::string error;
};

struct StabilityLabState {
  bool open = false;
  std::vector<float> base = {2.0f, 1.0f, 0.5f, -1.0f};  // the scores before scaling
  float scale = 1.0f;
};

struct FusedLabState {
  bool open = false;
  std::uint64_t revision = ~std::uint64_t{0};
  Index batch = -1;  // the batch item of X shown
  std::shared_ptr<const FusedQkvComparison> comparison;
  std::string error;
};

struct QuizState {
  bool open = false;
  std::uint64_t next_seed = 1;
  std::uint64_t revision = ~std::uint64_t{0};  // model revision the question is about
  std::optional<QuizQuestion> question;
  bool answered = false, correct = false;  // answered: the answer is revealed
  int attempts = 0;  // answers given to this question; the score counts the first one
  char typed[64] = "";
  int correct_count = 0, asked_count = 0;  // the score
  bool hide_cell = false;  // one-cell mode: only the asked cell is covered, the stage stays on screen
  // While a question is open: the heatmaps (widget names) showing the asked
  // stage, covered at (covered_row, covered_col), or whole when they are -1,
  // when batch `covered_batch` is shown.
  std::vector<std::string> covered_heatmaps;
  Index covered_batch = 0, covered_row = 0, covered_col = 0;
  ImVec2 cover_min, cover_max;  // where the cover was last drawn: the window keeps off it
  // Set by a heatmap drawn this frame whose cells are too small (or too many) for their numbers and
  // not covered by the quiz; read and cleared by the quiz, drawn after the heatmaps.
  bool numbers_hidden = false;
};

// KV-cache decoding, token by token (panel_lab_decode.cpp).
struct DecodeLabState {
  bool open = false;
  std::uint64_t revision = ~std::uint64_t{0};
  std::shared_ptr<const DecodeRun> run;  // null when decode() refused the session
  std::string error;                     // why, translated
  int step = 0;                          // t shown
  int head = 0;                          // query head shown
  bool fitted = false;                   // the window was as tall as a refusal: its size comes back with a run
  // The step's largest differences (weights, output) from the full trace, computed once per
  // trace, run and step rather than every frame; compared_step −1 when nothing was compared yet.
  std::weak_ptr<const Trace> compared_trace;
  int compared_step = -1;
  std::optional<std::pair<double, double>> differences;
};

// RoPE: each pair of dimensions turning with position, and the score as a function of i − j (panel_lab_rope.cpp).
struct RopeLabState {
  bool open = false;
  int position = 3;     // the position whose arrows are drawn
  bool use_session = true;  // q/k of the current trace (else a fixed pair of vectors)
  int head = 0;         // query head of the session whose q and k are used
};

struct LabsState {
  DecodeLabState decode;
  RopeLabState rope;
  SqrtDkLabState sqrt_dk;
  MaskFillLabState mask_fill;
  StabilityLabState stability;
  FusedLabState fused;
  QuizState quiz;
};

void draw_sqrt_dk_lab(AppState& app);     // panel_lab_sqrt_dk.cpp
void draw_mask_fill_lab(AppState& app);   // panel_lab_mask_fill.cpp
void draw_stability_lab(AppState& app);   // panel_lab_stability.cpp
void draw_fused_lab(AppState& app);       // panel_lab_fused.cpp
void draw_quiz(AppState& app);            // panel_quiz.cpp
void draw_decode_lab(AppState& app);      // panel_lab_decode.cpp
void draw_rope_lab(AppState& app);        // panel_lab_rope.cpp
// The quiz's cover, for heatmap_widget: whether cell (row, col) of heatmap `name`
// is covered, and the cover itself (an opaque "?" box over the cell, or over the
// whole grid from `grid_min` to `grid_max`, square cells of side `cell`).
bool quiz_covers(const AppState& app, const std::string& name, Index row, Index col);
void draw_quiz_cover(AppState& app, const std::string& name, ImVec2 grid_min, ImVec2 grid_max, ImVec2 cell);

// Shared by these labs (labs_common.cpp); numbers are written by core's lab_number().
// Opens the window `id` (its --open name) at the first frame if asked to; begin_lab_window calls it,
// and a lab whose size depends on its state calls it first, so that its first frame is sized right.
void open_if_asked(const AppState& app, const char* id, bool* open);
// Returns whether ImGui::Begin was called (the caller then calls ImGui::End());
// `*visible` says whether the window is expanded. `over_editors` opens it over the
// editors' column (a small window that must not hide the matrices it asks about).
// `fit_height`: as tall as the window's content (a lab that only says why it cannot run), with
// text wrapped at lab_text_width(size_in_fonts); `restore_size` puts the window back to its
// size when it was fitted the frame before.
bool begin_lab_window(AppState& app, const char* id, const char* title_key, bool* open,
                      ImVec2 size_in_fonts, bool* visible, bool over_editors = false, bool fit_height = false,
                      bool restore_size = false);
// The width a lab window of `size_in_fonts` wraps its text at when fit_height.
float lab_text_width(ImVec2 size_in_fonts);
// A view of a tensor owned by `owner`; `key` must change when the values do.
MatrixView lab_view(std::shared_ptr<const void> owner, const Tensor& tensor, std::string key);
// A line plot in the draw list: y against evenly spaced x, one or more series;
// `log2_y` plots log₂ y (labelled in y). NaN points are skipped.
struct PlotSeries {
  const std::vector<double>* values;
  ImU32 colour;
};
void lab_plot(const char* id, const char* title, const std::vector<std::string>& x_labels,
              const std::vector<PlotSeries>& series, bool log2_y, ImVec2 size);
// Colours shared by the labs' plots and tables.
constexpr ImU32 kRawColour = IM_COL32(240, 140, 60, 255);     // without scaling / naive
constexpr ImU32 kScaledColour = IM_COL32(90, 170, 250, 255);  // scaled / stable
const ImVec4 kBadText = ImVec4(1.0f, 0.45f, 0.4f, 1.0f);
const ImVec4 kGoodText = ImVec4(0.45f, 0.85f, 0.45f, 1.0f);
// The one-cell quiz's cover: darker than any colormap colour, so it never reads as a value.
constexpr ImU32 kQuizCoverColour = IM_COL32(24, 24, 30, 255);

}  // namespace al::gui
