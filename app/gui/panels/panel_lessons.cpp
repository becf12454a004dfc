// The guided tour: a few steps in the seeds' order (projection → scores →
// scaling → softmax → weighted sum → multi-head → masks → cross-attention).
// Each step loads its example (an undoable edit), moves the stepper, opens the
// editor tab that matters, pins the cell its text talks about, and outlines the
// widget to look at, found in the widget registry. Every number the text
// quotes is read from the trace on screen. The last four steps, "how a head
// learns to look back", run on the Training lab's untrained previous_token model:
// its loss, the gradient view's ∂L/∂S″, one descent step, then the lab training
// it; their numbers come from core/teaching/look_back.
#include <algorithm>
#include <cmath>
#include <tuple>

#include <imgui_internal.h>  // FindWindowByName: is the Training lab's window there yet

#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/llama_path.hpp"
#include "panels/panels.hpp"
#include "state/documents.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// What a step sets up besides its example and shows beside its text.
enum class LessonKind { Tour, LookBackLoss, LookBackGradient, LookBackStep, LookBackTrain };

struct Lesson {
  const char* id;       // i18n: lessons.<id>.title, lessons.<id>.text
  const char* preset;   // the example it runs on (the look-back steps: the untrained model)
  Step step;            // the stepper's step
  const char* tab;      // editor tab to bring to the front ("" leaves it)
  const char* target;   // widget to outline
  Stage pin_stage;      // the cell the text quotes: stage (head 0), row, column
  Index pin_row, pin_col;  // the look-back steps: from the last query (row −1 = L − 1, column −2 = L − 2)
  LessonKind kind = LessonKind::Tour;
  int path_step = -1;   // a step of llama_path() (the session it builds) instead of the preset
};

// The look-back steps' example: made by look_back_start(), not a preset file.
constexpr const char* kLookBackModel = "previous_token";

const Lesson kLessons[] = {
    {"projection", "default", Step::Qkv, "matrices", "heatmap.q.h0", Stage::Q, 1, 0},
    {"scores", "default", Step::Scores, "", "heatmap.scores.h0", Stage::Scores, 1, 2},
    {"scaling", "default", Step::Scaled, "", "heatmap.scaled.h0", Stage::Scaled, 1, 2},
    {"softmax", "default", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 1, 2},
    {"weighted_sum", "default", Step::Context, "", "heatmap.context.h0", Stage::Context, 1, 0},
    {"multi_head", "default", Step::Concat, "config", "heatmap.concat", Stage::Concat, 1, 0},
    {"masks", "causal-decoder", Step::Masked, "mask", "heatmap.masked.h0", Stage::Masked, 1, 3},
    {"cross", "cross-attention", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 1, 1},
    {"look_back_loss", kLookBackModel, Step::Output, "", "gradient.loss", Stage::Output, -1, 0,
     LessonKind::LookBackLoss},
    {"look_back_gradient", kLookBackModel, Step::Masked, "", "heatmap.grad.masked.h0", Stage::Masked, -1, -2,
     LessonKind::LookBackGradient},
    {"look_back_step", kLookBackModel, Step::Masked, "", "gradient.step", Stage::Masked, -1, -2,
     LessonKind::LookBackStep},
    {"look_back_train", kLookBackModel, Step::Weights, "", "training.toggle", Stage::Weights, -1, -2,
     LessonKind::LookBackTrain},
    // From the seeds' MHA to a Llama block, one option at a time (core/teaching/llama_path.hpp).
    {"path_mha", "llama-block", Step::Weights, "", "heatmap.weights.h0", Stage::Weights, 2, 5, LessonKind::Tour, 0},
    {"path_causal", "llama-block", Step::Masked, "", "heatmap.masked.h0", Stage::Masked, 2, 5, LessonKind::Tour, 1},
    {"path_gqa", "llama-block", Step::Qkv, "", "heatmap.k.h0", Stage::K, 2, 0, LessonKind::Tour, 2},
    {"path_rope", "llama-block", Step::Rope, "", "heatmap.q_rot.h0", Stage::QRot, 3, 0, LessonKind::Tour, 3},
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
// `not_kept` stands for a value of a stage the trace did not keep (SessionModel::keep).
Params lesson_params(const Lesson& lesson, const Trace& trace, const Session& session, const std::string& not_kept) {
  const Dims& d = trace.dims;
  const Index r = std::min(lesson.pin_row, d.len_q - 1);
  const Index c = std::min(lesson.pin_col, d.len_kv - 1);
  const auto& key_tokens = session.config.attention == AttentionKind::Cross ? session.tokens_kv : session.tokens;
  std::string q_row = "[";
  for (Index j = 0; j < d.d_k; ++j) q_row += (j ? ", " : "") + lab_number(cell(trace, Stage::Q, r, j));
  q_row += "]";
  auto value = [&](Stage stage, Index row, Index col) {
    return trace.has(stage) ? lab_number(cell(trace, stage, row, col)) : not_kept;
  };
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
          {"score", value(Stage::Scores, r, c)},
          {"scaled", value(Stage::Scaled, r, c)},
          {"masked", value(Stage::Masked, r, c)},
          {"weight", value(Stage::Weights, r, c)},
          {"context", value(Stage::Context, r, 0)}};
}

const LookBackStart& look_back(LessonState& state) {
  if (!state.look_back) state.look_back = std::make_shared<const LookBackStart>(look_back_start());
  return *state.look_back;
}

Positions start_positions(LessonState& state) { return look_back(state).config.positions; }

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
// it), the stepper's step, the editor tab and the pinned cell; the look-back steps
// turn the gradient view on (push the last query's first output cell up) or open
// the Training lab on previous_token.
void apply(AppState& app, LessonState& state) {
  const Lesson& lesson = kLessons[state.index];
  const bool look_back_step = lesson.kind != LessonKind::Tour;
  const std::string example = lesson.path_step < 0 ? lesson.preset : std::string(lesson.preset) + "/" + lesson.id;
  if (state.preset != example || state.preset_revision != app.model.revision()) {
    std::optional<Session> session;
    if (look_back_step) {
      session = look_back(state).session;
    } else if (lesson.path_step >= 0) {
      auto path = llama_path();
      if (!path) {
        app.notices.push_back(app.i18n.error_message(path.error()));
        return;
      }
      session = (*path)[static_cast<size_t>(lesson.path_step)].session;
    } else if (auto preset = load_preset(lesson.preset)) {
      session = std::move(*preset);
    } else {
      app.notices.push_back(app.i18n.error_message(preset.error()));
      return;
    }
    // The session only counts as unsaved if the lesson changed it: the same
    // example stays as it is (and unmodified).
    if (session_to_json(*session) != session_to_json(app.model.session()))
      open_example_session(app, std::move(*session), example,
                           app.i18n.format("lessons.edit_label", {{"preset", example}}));
    state.preset = example;
    state.preset_revision = app.model.revision();
  }
  app.view.look_at(lesson.step);
  if (*lesson.tab) app.view.select_tab = lesson.tab;
  const Index length = static_cast<Index>(app.model.session().tokens.size());
  const Index row = lesson.pin_row < 0 ? length + lesson.pin_row : lesson.pin_row;
  const Index col = lesson.pin_col < 0 ? length + lesson.pin_col : lesson.pin_col;
  std::string heatmap = stage_name(lesson.pin_stage);
  if (lesson.pin_stage != Stage::Concat && lesson.pin_stage != Stage::Output) heatmap += ".h0";
  app.view.pinned = CellRef{heatmap, row, col};
  if (look_back_step && lesson.kind != LessonKind::LookBackTrain) {
    GradientView& g = app.gradient;
    g.show = true;
    g.kind = LossKind::PushCellUp;
    g.batch = 0;
    g.row = length - 1;
    g.col = 0;
  }
  if (lesson.kind == LessonKind::LookBackTrain) {
    TrainingLabState& lab = app.training_lab;
    lab.open = true;
    // Another task's or positions' model: start the one of lessons 9-11 (previous_token, learned positions).
    if (lab.task != 0 || lab.positions != start_positions(state)) lab.run.reset();
    lab.task = 0;  // previous_token
    lab.positions = start_positions(state);
    state.place_lab = true;
  }
  state.applied = state.index;
}

// The look-back steps' text: its key (with the variant the numbers call for) and numbers.
std::pair<std::string, Params> look_back_text(AppState& app, LessonState& state, const Lesson& lesson,
                                              const Trace& trace) {
  const std::string base = std::string("lessons.") + lesson.id;
  const LookBackStart& start = look_back(state);
  GradientView& g = app.gradient;
  const Gradients* gradients = current_gradients(app);
  const LossChoice choice{LossKind::PushCellUp, g.batch, g.row, g.col, nullptr};
  switch (lesson.kind) {
    case LessonKind::LookBackLoss:
      if (gradients && g.loss && g.kind == LossKind::PushCellUp)
        return {base + ".text", look_back_loss_params(start, trace, choice, *g.loss)};
      break;
    case LessonKind::LookBackGradient:
      if (gradients && g.kind == LossKind::PushCellUp)  // the text is about that loss's one output row
        if (auto terms = look_back_gradient(trace, *gradients, g.row, app.model.trace_session().tokens))
          return {base + (terms->raise ? ".text_raise" : ".text_lower"), terms->params};
      break;
    case LessonKind::LookBackStep:
      if (g.step_before)  // the learner pressed the button: what it did (after: once recomputed)
        return {base + ".text_done", {{"lr", lab_number(g.learning_rate)},
                                      {"before", lab_number(*g.step_before)},
                                      {"after", g.step_after ? lab_number(*g.step_after) : "…"}}};
      if (gradients && g.kind == LossKind::PushCellUp) {
        // One recomputation per trace and rate, not per frame.
        auto shown = app.model.trace();
        if (shown != state.descent_for || g.learning_rate != state.descent_rate) {
          state.descent_for = shown;
          state.descent_rate = g.learning_rate;
          state.descent = look_back_descent(app.model.trace_session(), trace, *gradients, choice, g.learning_rate);
        }
        if (state.descent) return {base + ".text", *state.descent};
      }
      break;
    case LessonKind::LookBackTrain: {
      const TrainingLabState& lab = app.training_lab;
      auto s = lab.run && lab.task == 0 && lab.positions == start.config.positions ? lab.run->snapshot() : nullptr;
      if (!s || s->steps == 0) {
        LookBackTraining t = look_back_training(start.config, 0, start.config.steps, 0, 0, nullptr, -1, nullptr);
        return {base + ".text_start", t.params};
      }
      LookBackTraining t = look_back_training(start.config, s->steps, s->target_steps, s->losses.back(),
                                              s->accuracies.empty() ? 0.0 : s->accuracies.back(), s->weights.get(),
                                              s->weights_step, s->ideal.get());
      return {base + (t.formed ? ".text_formed" : ".text_forming"), t.params};
    }
    case LessonKind::Tour: break;
  }
  return {"lessons.look_back.again", {}};  // the view is off, or on another loss
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

// The Training lab, once it exists, beside the lesson window (to its right, full height)
// rather than over it, so the lesson's text and the lab's heatmaps are both in view.
void place_lab_beside(LessonState& state, ImVec2 lesson_max) {
  if (!ImGui::FindWindowByName("###lab_training")) return;  // drawn from the next frame on
  const float font = ImGui::GetFontSize();
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const float x = lesson_max.x + 0.5f * font, y = viewport->WorkPos.y + 2.5f * font;
  ImGui::SetWindowPos("###lab_training", ImVec2(x, y));
  ImGui::SetWindowSize("###lab_training", ImVec2(std::max(20.0f * font, viewport->WorkPos.x + viewport->WorkSize.x - x - 0.5f * font),
                                                 viewport->WorkPos.y + viewport->WorkSize.y - y - 0.5f * font));
  state.place_lab = false;
}

// A text longer than the window would hide the Back / Next buttons below a scrollbar:
// the window grows upwards (its bottom stays) to hold it, as far as the screen allows.
void grow_to_fit(ImVec2 window_min, ImVec2 window_max) {
  const float needed = ImGui::GetCursorPosY() + ImGui::GetStyle().WindowPadding.y;  // from the window's top
  const float height = window_max.y - window_min.y;
  const float room = window_max.y - ImGui::GetMainViewport()->WorkPos.y - 2.0f * ImGui::GetFontSize();
  if (needed <= height + 1.0f || height >= room) return;
  const float grown = std::min(needed, room);
  ImGui::SetWindowPos(ImVec2(window_min.x, window_max.y - grown));
  ImGui::SetWindowSize(ImVec2(window_max.x - window_min.x, grown));
}

}  // namespace

int lesson_count() { return kLessonCount; }

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
    std::string text_key = base + ".text" + variant;
    Params params;
    if (shown && lesson.kind != LessonKind::Tour) std::tie(text_key, params) = look_back_text(app, state, lesson, *trace);
    else if (shown) params = lesson_params(lesson, *trace, session, app.tr("keep.value_not_kept"));
    if (shown) add_path_params(lesson, *trace, params);
    wrapped_text_colored(kFormulaColour, app.i18n.format(base + ".title" + variant, params));
    const std::string lines = shown ? wrapped_text(app.i18n.format(text_key, params))
                                    : wrapped_text(app.tr("lessons.no_trace"));
    if (app.widgets.enabled()) {
      app.widgets.set_fact("lesson.text.key", shown ? text_key : "lessons.no_trace");
      for (const auto& [name, value] : params) app.widgets.set_fact("lesson.param." + name, value);
    }
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
    grow_to_fit(window_min, window_max);
  }
  ImGui::End();
  if (state.place_lab) place_lab_beside(state, window_max);
  if (state.open) highlight(app, lesson, window_min, window_max);
}

}  // namespace al::gui
