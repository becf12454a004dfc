// The guided tour: a few steps in the seeds' order (projection → scores →
// scaling → softmax → weighted sum → multi-head → masks → cross-attention).
// Each step loads its example (an undoable edit), moves the stepper, opens the
// editor tab that matters, pins the cell its text talks about, and outlines the
// widget to look at, found in the widget registry. Every number the text
// quotes is read from the trace on screen.
#include <algorithm>
#include <cmath>

#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/llama_path.hpp"
#include "panels/panels.hpp"
#include "state/documents.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

struct Lesson {
  const char* id;       // i18n: lessons.<id>.title, lessons.<id>.text
  const char* preset;   // the example it runs on
  Step step;            // the stepper's step
  const char* tab;      // editor tab to bring to the front ("" leaves it)
  const char* target;   // widget to outline
  Stage pin_stage;      // the cell the text quotes: stage (head 0), row, column
  Index pin_row, pin_col;
  int path_step = -1;   // a step of llama_path() (the session it builds) instead of the preset
};

const Lesson kLessons[] = {
    {"projection", "default", Step::Qkv, "matrices", "heatmap.q.h0", Stage::Q, 1, 0},
    {"scores", "default", Step::Scores, "", "heatmap.scores.h0", Stage::Scores, 1, 2},
    {"scaling", "default", Step::Scaled, "", "heatmap.scaled.h0", Stage::Scaled, 1, 2},
    {"softmax", "default", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 1, 2},
    {"weighted_sum", "default", Step::Context, "", "heatmap.context.h0", Stage::Context, 1, 0},
    {"multi_head", "default", Step::Concat, "config", "heatmap.concat", Stage::Concat, 1, 0},
    {"masks", "causal-decoder", Step::Masked, "mask", "heatmap.masked.h0", Stage::Masked, 1, 3},
    {"cross", "cross-attention", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 1, 1},
    // From the seeds' MHA to a Llama block, one option at a time (core/teaching/llama_path.hpp).
    {"path_mha", "llama-block", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 2, 5, 0},
    {"path_causal", "llama-block", Step::Masked, "", "heatmap.masked.h0", Stage::Masked, 2, 5, 1},
    {"path_gqa", "llama-block", Step::Qkv, "", "heatmap.k.h0", Stage::K, 2, 0, 2},
    {"path_rope", "llama-block", Step::Rope, "", "heatmap.q_rot.h0", Stage::QRot, 3, 0, 3},
};
constexpr int kLessonCount = static_cast<int>(sizeof kLessons / sizeof kLessons[0]);

const ImU32 kHighlight = IM_COL32(64, 224, 255, 255);

std::string token(const std::vector<std::string>& tokens, Index i) {
  return i < static_cast<Index>(tokens.size()) ? tokens[i] : std::to_string(i);
}

// One value of head 0 (batch item 0) of a stage; NaN if the trace has no such cell.
float cell(const Trace& trace, Stage stage, Index row, Index col) {
  const TensorPtr& tensor = trace.stage_ptr(stage);
  if (!tensor || row >= tensor->rows() || col >= tensor->cols()) return std::nanf("");
  return tensor->data[row * tensor->cols() + col];  // matrix 0: batch item 0, head 0
}

// The numbers a lesson's text may quote, read from the trace at the lesson's cell.
Params lesson_params(const Lesson& lesson, const Trace& trace, const Session& session) {
  const Dims& d = trace.dims;
  const Index r = std::min(lesson.pin_row, d.len_q - 1);
  const Index c = std::min(lesson.pin_col, d.len_kv - 1);
  const auto& key_tokens = session.config.attention == AttentionKind::Cross ? session.tokens_kv : session.tokens;
  std::string q_row = "[";
  for (Index j = 0; j < d.d_k; ++j) q_row += (j ? ", " : "") + lab_number(cell(trace, Stage::Q, r, j));
  q_row += "]";
  return {{"d_model", std::to_string(d.d_model)},
          {"d_k", std::to_string(d.d_k)},
          {"h", std::to_string(d.heads)},
          {"lq", std::to_string(d.len_q)},
          {"lk", std::to_string(d.len_kv)},
          {"sqrt_d_k", lab_number(std::sqrt(static_cast<double>(d.d_k)))},
          {"inv_sqrt_d_k", lab_number(1.0 / std::sqrt(static_cast<double>(d.d_k)))},
          {"factor", lab_number(trace.scale)},
          {"fill", lab_number(trace.mask_fill)},
          {"q_tok", token(session.tokens, r)},
          {"k_tok", token(key_tokens, c)},
          {"q_row", q_row},
          {"score", lab_number(cell(trace, Stage::Scores, r, c))},
          {"scaled", lab_number(cell(trace, Stage::Scaled, r, c))},
          {"masked", lab_number(cell(trace, Stage::Masked, r, c))},
          {"weight", lab_number(cell(trace, Stage::Weights, r, c))},
          {"context", lab_number(cell(trace, Stage::Context, r, 0))}};
}

// What the lesson's step of the path changed: the previous step's session traced
// here (8 tokens: cheap, and cached while the lesson and the trace stay) against the trace on screen.
void add_path_params(const Lesson& lesson, const Trace& trace, Params& params) {
  if (lesson.path_step < 0) return;
  const Dims& d = trace.dims;
  const Index kv_heads = d.kv_heads > 0 ? d.kv_heads : d.heads;
  params.push_back({"h_kv", std::to_string(kv_heads)});
  params.push_back({"group", std::to_string(d.heads / kv_heads)});
  if (lesson.path_step == 0) return;
  static int cached_step = -1;
  static std::shared_ptr<const Trace> before;
  if (cached_step != lesson.path_step) {
    before.reset();
    if (auto path = llama_path())
      if (auto t = compute((*path)[static_cast<size_t>(lesson.path_step - 1)].session)) before = *t;
    cached_step = lesson.path_step;
  }
  if (!before || before->dims.len_q != d.len_q || before->dims.len_kv != d.len_kv || before->dims.heads != d.heads ||
      before->dims.batch != d.batch)
    return;  // the learner changed the sizes: no step to compare with (the text shows its placeholders' names)
  const PathChange change = path_change(*before, trace);
  params.insert(params.end(), {{"newly_masked", std::to_string(change.newly_masked)},
                               {"max_weight_change", lab_number(change.max_weight_change)},
                               {"max_output_change", lab_number(change.max_output_change)},
                               {"kv_before", std::to_string(change.kv_floats_before)},
                               {"kv_after", std::to_string(change.kv_floats_after)},
                               {"kv_bytes_before", std::to_string(4 * change.kv_floats_before)},
                               {"kv_bytes_after", std::to_string(4 * change.kv_floats_after)}});
}

// Sets the example of a lesson up: its preset (only if the tour did not just load
// it), the stepper's step, the editor tab and the pinned cell.
void apply(AppState& app, LessonState& state) {
  const Lesson& lesson = kLessons[state.index];
  const std::string example = lesson.path_step < 0 ? lesson.preset : std::string(lesson.preset) + "/" + lesson.id;
  if (state.preset != example || state.preset_revision != app.model.revision()) {
    Result<Session> session = lesson.path_step < 0 ? load_preset(lesson.preset) : Result<Session>(Session{});
    if (lesson.path_step >= 0) {
      auto path = llama_path();
      session = path ? Result<Session>((*path)[static_cast<size_t>(lesson.path_step)].session)
                     : Result<Session>(path.error());
    }
    if (!session) {
      app.notices.push_back(app.i18n.error_message(session.error()));
      return;
    }
    // The session only counts as unsaved if the lesson changed it: the same
    // example stays as it is (and unmodified).
    const std::string label = app.i18n.format("lessons.edit_label", {{"preset", example}});
    if (session_to_json(*session) != session_to_json(app.model.session())) {
      if (lesson.path_step < 0) {
        if (!open_example(app, lesson.preset, label)) return;
      } else if (app.model.modified()) {
        app.edit(std::move(*session), label, "examples");  // undo brings the learner's work back
      } else {
        app.model.reset(std::move(*session));
        app.files.path.clear();  // Save asks where: it never overwrites the file opened before
      }
      app.document = example;
    }
    state.preset = example;
    state.preset_revision = app.model.revision();
  }
  app.view.step = lesson.step;
  app.view.playing = false;
  app.view.batch = 0;
  app.view.input_head = 0;
  app.view.only_head = -1;
  if (*lesson.tab) app.view.select_tab = lesson.tab;
  std::string heatmap = stage_name(lesson.pin_stage);
  if (lesson.pin_stage != Stage::Concat && lesson.pin_stage != Stage::Output) heatmap += ".h0";
  app.view.pinned = CellRef{heatmap, lesson.pin_row, lesson.pin_col};
  state.applied = state.index;
}

// Outlines the target widget and draws an arrow to it from the lesson window.
void highlight(AppState& app, const Lesson& lesson, ImVec2 window_min, ImVec2 window_max) {
  ImVec2 min, max;
  if (!app.widgets.find(lesson.target, &min, &max)) return;
  const float font = ImGui::GetFontSize();
  const float margin = 0.35f * font, thickness = 0.2f * font;
  min = ImVec2(min.x - margin, min.y - margin);
  max = ImVec2(max.x + margin, max.y + margin);
  ImDrawList* draw = ImGui::GetForegroundDrawList();
  draw->AddRect(min, max, kHighlight, 0.3f * font, 0, thickness);
  app.widgets.add("lesson.highlight", min, max);
  app.widgets.set_fact("lesson.target", lesson.target);

  // Arrow from the window's top-right corner region to the nearest point of the outline.
  const ImVec2 from(window_max.x, std::max(window_min.y + 2.0f * font, std::min(window_max.y, min.y)));
  const ImVec2 to(std::clamp(from.x, min.x, max.x), std::clamp(from.y, min.y, max.y));
  const float dx = to.x - from.x, dy = to.y - from.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length < 2.0f * font) return;  // the window is beside the target already
  const ImVec2 unit(dx / length, dy / length), normal(-unit.y, unit.x);
  const float head = 0.8f * font;
  const ImVec2 base(to.x - unit.x * head, to.y - unit.y * head);
  draw->AddLine(from, base, kHighlight, thickness);
  draw->AddTriangleFilled(to, ImVec2(base.x + normal.x * 0.45f * head, base.y + normal.y * 0.45f * head),
                          ImVec2(base.x - normal.x * 0.45f * head, base.y - normal.y * 0.45f * head), kHighlight);
}

}  // namespace

void draw_lessons(AppState& app) {
  LessonState& state = app.lessons;
  if (app.frame == 0) {
    const auto& open = app.options.open_windows;
    if (app.options.lesson >= 0 || std::count(open.begin(), open.end(), "lessons")) state.open = true;
    if (app.options.lesson >= 0) state.index = std::min(app.options.lesson, kLessonCount - 1);
  }
  if (!state.open) {
    state.applied = -1;  // reopening sets the example up again
    return;
  }
  state.index = std::clamp(state.index, 0, kLessonCount - 1);
  if (state.applied != state.index) apply(app, state);
  const Lesson& lesson = kLessons[state.index];

  const float font = ImGui::GetFontSize();
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  // Bottom left, over the editors, away from the heatmaps it points at.
  ImGui::SetNextWindowSize(ImVec2(25.0f * font, 14.0f * font), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos(ImVec2(viewport->WorkPos.x + 0.5f * font,
                                 viewport->WorkPos.y + viewport->WorkSize.y - 16.5f * font),
                          ImGuiCond_FirstUseEver);
  ImVec2 window_min, window_max;
  if (ImGui::Begin((std::string(app.tr("lessons.title")) + "###lessons").c_str(), &state.open)) {
    window_min = ImGui::GetWindowPos();
    window_max = ImVec2(window_min.x + ImGui::GetWindowSize().x, window_min.y + ImGui::GetWindowSize().y);
    app.widgets.add("lesson.window", window_min, window_max);
    app.widgets.set_fact("lesson.index", std::to_string(state.index));
    const std::string base = std::string("lessons.") + lesson.id;
    ImGui::TextDisabled("%s", app.i18n.format("lessons.progress", {{"n", std::to_string(state.index + 1)},
                                                                  {"count", std::to_string(kLessonCount)}})
                                  .c_str());
    auto trace = app.model.trace();
    const bool shown = trace && !app.model.error();
    const Session& session = app.model.trace_session();
    // The scaling lesson names the scale in use once the learner changes it.
    const std::string variant = shown && lesson.step == Step::Scaled ? scale_key_suffix(session) : "";
    Params params = shown ? lesson_params(lesson, *trace, session) : Params{};
    if (shown) add_path_params(lesson, *trace, params);
    wrapped_text_colored(kFormulaColour, app.i18n.format(base + ".title" + variant, params));
    const std::string lines = shown ? wrapped_text(app.i18n.format(base + ".text" + variant, params))
                                    : wrapped_text(app.tr("lessons.no_trace"));
    app.widgets.add_last_item("lesson.text");
    if (app.widgets.enabled()) app.widgets.set_fact("lesson.text.lines", lines);
    wrapped_text_disabled(app.tr("lessons.look"));

    ImGui::Spacing();
    ImGui::BeginDisabled(state.index == 0);
    if (ImGui::Button((std::string("◀ ") + app.tr("lessons.back") + "###lesson_back").c_str())) --state.index;
    ImGui::EndDisabled();
    app.widgets.add_last_item("lesson.back");
    ImGui::SameLine();
    if (state.index + 1 < kLessonCount) {
      if (ImGui::Button((std::string(app.tr("lessons.next")) + " ▶###lesson_next").c_str())) ++state.index;
    } else if (ImGui::Button((std::string(app.tr("lessons.finish")) + "###lesson_next").c_str())) {
      state.open = false;
    }
    app.widgets.add_last_item("lesson.next");
    ImGui::SameLine();
    if (ImGui::Button((std::string(app.tr("lessons.again")) + "###lesson_again").c_str())) state.applied = -1;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", app.tr("lessons.again_tip"));
    app.widgets.add_last_item("lesson.again");
  }
  ImGui::End();
  if (state.open) highlight(app, lesson, window_min, window_max);
}

}  // namespace al::gui
