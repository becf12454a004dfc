#pragma once
// State of three floating windows opened from the Labs menu: the FlashAttention
// lab (panel_lab_flash.cpp), the linear-attention lab (panel_lab_linear.cpp)
// and the guided lessons (panel_lessons.cpp). AppState holds one of each.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "numerics/flash_attention.hpp"
#include "numerics/linear_attention.hpp"
#include "model/trace.hpp"
#include "teaching/look_back.hpp"

namespace al::gui {

struct AppState;

struct FlashLabState {
  bool open = false;
  int tile_queries = 2, tile_keys = 2;  // chosen tile sizes (rows of Q, rows of K)
  int head = 0;
  int step = 0;                         // index into the recorded steps
  bool playing = false;
  double next_play_time = 0;

  // The recording, redone when the session, head or tiles change.
  std::uint64_t revision = ~std::uint64_t{0};
  int recorded_head = -1, recorded_queries = 0, recorded_keys = 0;
  Index recorded_batch = -1;
  std::shared_ptr<const FlashSteps> steps;
  std::shared_ptr<const Trace> plain;  // the full computation it is compared with
  bool example = false;                // the session was too large: a small example is shown
  std::string example_tokens_note;     // why (sizes), in the session's terms
  std::vector<std::string> tokens;     // query labels of what is shown
  std::vector<std::string> key_tokens;
  std::string softmax_input;  // what the stepped session's softmax reads: "QKᵀ/√d_k", "mask(QKᵀ/√d_k − m·|i − j|)"
  bool dropout = false;       // its weights pass dropout before ·V
  std::string error;
};

struct LinearLabState {
  bool open = false;
  int head = 0;
  std::uint64_t revision = ~std::uint64_t{0};
  std::shared_ptr<const LinearAttentionResult> result;
  std::shared_ptr<const Tensor> output_difference;  // (B, Lq, d_model) linear − softmax
  std::string error;
};

struct LessonState {
  bool open = false;
  int index = 0;        // current step of the tour
  int applied = -1;     // the step whose example is set up (-1: none yet)
  std::string preset;   // the preset the tour loaded last
  std::uint64_t preset_revision = 0;  // model revision right after loading it
  // "How a head learns to look back": the Training lab's untrained previous_token
  // model (made when first needed), and the loss one descent step would reach
  // from the trace on screen at the learning rate it was worked out for.
  std::shared_ptr<const LookBackStart> look_back;
  std::shared_ptr<const Trace> descent_for;
  float descent_rate = 0;
  std::optional<TextParams> descent;
  bool place_lab = false;  // move the Training lab beside the lesson once its window exists
};

void draw_flash_lab(AppState& app);   // panel_lab_flash.cpp
void draw_linear_lab(AppState& app);  // panel_lab_linear.cpp
void draw_lessons(AppState& app);     // panel_lessons.cpp: the tour and its highlight
int lesson_count();                   // panel_lessons.cpp: the tour's steps (--lesson 1 … this)

}  // namespace al::gui
