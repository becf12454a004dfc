// Quiz: one cell of the current trace is asked about (the learner types its
// value) or a query's favourite key (the learner picks it). While a question
// is open, the main view shows the step of the asked stage (its inputs, for the
// asked head) with every heatmap of that stage covered, so the answer is not on
// screen but what it is made from is; or, in one-cell mode, only the asked cell
// is covered. Answering reveals it. The score stays for the session.
#include <algorithm>
#include <cstdlib>

#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// The stage's symbol as the step's formula writes it for this session.
std::string stage_symbol(Stage stage, const Session& session, const AppState& app) {
  const bool dropout = session.config.dropout.active();
  switch (stage) {
    case Stage::Scores: return "S = QKᵀ";
    case Stage::Scaled: return "S′ = " + scaled_scores_symbol(session, "S");
    case Stage::Weights: return "α = softmax(S″)";
    case Stage::Dropped: return "α′";
    case Stage::Context: return dropout ? "α′·V" : "α·V";
    case Stage::Concat:
    case Stage::Output: return app.tr(std::string("heatmap.title.") + stage_name(stage));
    default: return stage_name(stage);
  }
}

Step step_of(Stage stage) { return step_from_name(stage_name(stage)).value_or(Step::X); }

// The asked stage's step on screen, its batch item and head shown (with that
// head's inputs). One-cell mode covers the asked cell in every heatmap of that
// matrix (the head's own and the heads' average, which would give it away);
// whole-stage mode covers every heatmap of the stage, whole.
void cover_asked(AppState& app, QuizState& quiz, const QuizQuestion& q, Index heads) {
  app.view.step = step_of(q.stage);
  app.view.batch = q.batch;
  const std::string stage = stage_name(q.stage);
  const bool per_head = q.stage != Stage::Concat && q.stage != Stage::Output;
  if (per_head) {
    app.view.input_head = q.head;  // the inputs row shows the stage before, of the asked head
    if (app.view.only_head >= 0) app.view.only_head = static_cast<int>(q.head);
  }
  if (!per_head) quiz.covered_heatmaps = {stage};
  else if (quiz.hide_cell) quiz.covered_heatmaps = {stage + ".h" + std::to_string(q.head), stage + ".avg"};
  else {
    quiz.covered_heatmaps = {stage + ".avg"};
    for (Index h = 0; h < heads; ++h) quiz.covered_heatmaps.push_back(stage + ".h" + std::to_string(h));
  }
  quiz.covered_batch = q.batch;
  quiz.covered_row = quiz.hide_cell ? q.row : -1;  // -1: the whole matrix
  quiz.covered_col = quiz.hide_cell ? q.col : -1;
  if (app.view.pinned && quiz_covers(app, app.view.pinned->heatmap, app.view.pinned->row, app.view.pinned->col))
    app.view.pinned.reset();  // the Explain window would show the answer
}

void new_question(AppState& app, QuizState& quiz, const Trace& trace) {
  quiz.question = make_quiz_question(trace, app.model.trace_session(), quiz.next_seed++,
                                     quiz.hide_cell ? QuizHide::Cell : QuizHide::Stage);
  quiz.revision = app.model.revision();
  quiz.answered = false;
  quiz.correct = false;
  quiz.attempts = 0;
  quiz.typed[0] = '\0';
  quiz.covered_heatmaps.clear();
  if (!quiz.question) return;
  cover_asked(app, quiz, *quiz.question, trace.dims.heads);
}

constexpr int kQuizAttempts = 3;  // wrong answers before the answer is shown

void reveal(AppState& app, QuizState& quiz, bool correct) {
  quiz.covered_heatmaps.clear();
  quiz.answered = true;
  quiz.correct = correct;
  app.view.step = step_of(quiz.question->stage);
}

// The score counts a question once, by its first answer; a wrong answer may be
// retried (the answer stays hidden) until the attempts run out or the learner asks.
void record_answer(AppState& app, QuizState& quiz, bool correct) {
  if (quiz.attempts++ == 0) {
    ++quiz.asked_count;
    if (correct) ++quiz.correct_count;
  }
  if (correct || quiz.attempts >= kQuizAttempts) reveal(app, quiz, correct);
  else quiz.typed[0] = '\0';
}

std::string question_text(AppState& app, const QuizQuestion& q, const Session& session) {
  const bool cross = session.config.attention == AttentionKind::Cross;
  const std::vector<std::string>& keys = cross ? session.tokens_kv : session.tokens;
  auto token = [](const std::vector<std::string>& tokens, Index i) {
    return i < static_cast<Index>(tokens.size()) ? "'" + tokens[size_t(i)] + "'" : "#" + std::to_string(i);
  };
  const bool key_by_key = q.stage == Stage::Scores || q.stage == Stage::Scaled || q.stage == Stage::Weights;
  Params params = {{"stage", stage_symbol(q.stage, session, app)},  {"row", std::to_string(q.row)},
                   {"col", std::to_string(q.col)},    {"head", std::to_string(q.head)},
                   {"batch", std::to_string(q.batch)}, {"query", token(session.tokens, q.row)},
                   {"key", key_by_key ? token(keys, q.col) : std::to_string(q.col)}};
  if (q.kind == QuizKind::Argmax) return app.i18n.format("labs.quiz.ask_argmax", params);
  const bool per_head = q.stage != Stage::Concat && q.stage != Stage::Output;
  return app.i18n.format(per_head ? (key_by_key ? "labs.quiz.ask_weight_like" : "labs.quiz.ask_context")
                                  : "labs.quiz.ask_output",
                         params);
}

void answer_controls(AppState& app, QuizState& quiz, const Session& session) {
  const QuizQuestion& q = *quiz.question;
  const float font = ImGui::GetFontSize();
  if (q.kind == QuizKind::Value) {
    ImGui::SetNextItemWidth(10.0f * font);
    const bool entered = ImGui::InputText((std::string(app.tr("labs.quiz.your_answer")) + "###quiz_answer").c_str(),
                                          quiz.typed, sizeof quiz.typed,
                                          ImGuiInputTextFlags_CharsScientific | ImGuiInputTextFlags_EnterReturnsTrue);
    app.widgets.add_last_item("labs.quiz.answer");
    ImGui::SameLine();
    const bool pressed = ImGui::Button((std::string(app.tr("labs.quiz.check")) + "###quiz_check").c_str());
    app.widgets.add_last_item("labs.quiz.check");
    if ((entered || pressed) && quiz.typed[0] != '\0') {
      char* end = nullptr;
      const double typed = std::strtod(quiz.typed, &end);
      if (end != quiz.typed) record_answer(app, quiz, check_quiz_value(q, typed));
    }
    return;
  }
  const bool cross = session.config.attention == AttentionKind::Cross;
  const std::vector<std::string>& keys = cross ? session.tokens_kv : session.tokens;
  const Index count = session.len_kv();
  for (Index j = 0; j < count; ++j) {
    if (j > 0) ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < 3.0f * font) ImGui::NewLine();
    ImGui::PushID(static_cast<int>(j));
    const std::string label = j < static_cast<Index>(keys.size()) ? keys[size_t(j)] : std::to_string(j);
    if (ImGui::Button(label.c_str())) record_answer(app, quiz, check_quiz_key(q, j));
    app.widgets.add_last_item("labs.quiz.key" + std::to_string(j));
    ImGui::PopID();
  }
}

void draw_body(AppState& app, QuizState& quiz) {
  wrapped_text(app.tr(quiz.hide_cell ? "quiz_cell.intro" : "labs.quiz.intro"));
  auto trace = app.model.trace();
  if (!trace || app.model.error()) {
    quiz.covered_heatmaps.clear();
    ImGui::TextDisabled("%s", no_trace_text(app));
    return;
  }
  ImGui::TextUnformatted(app.tr("quiz_cell.hide"));
  for (const bool cell : {false, true}) {
    ImGui::SameLine();
    const char* label = app.tr(cell ? "quiz_cell.hide_cell" : "quiz_cell.hide_stage");
    if (ImGui::RadioButton((std::string(label) + (cell ? "###quiz_hide_cell" : "###quiz_hide_stage")).c_str(),
                           quiz.hide_cell == cell) && quiz.hide_cell != cell) {
      quiz.hide_cell = cell;
      new_question(app, quiz, *trace);
    }
    app.widgets.add_last_item(cell ? "quiz.hide_cell" : "quiz.hide_stage");
  }
  // A question is about one trace: an edit asks a new one.
  if (!quiz.question || quiz.revision != app.model.revision()) new_question(app, quiz, *trace);
  ImGui::Text("%s", app.i18n.format("labs.quiz.score", {{"correct", std::to_string(quiz.correct_count)},
                                                        {"asked", std::to_string(quiz.asked_count)}}).c_str());
  app.widgets.add_last_item("labs.quiz.score");
  app.widgets.set_fact("quiz.score", std::to_string(quiz.correct_count) + "/" + std::to_string(quiz.asked_count));
  if (!quiz.question) {
    wrapped_text(app.tr("labs.quiz.no_question"));
    return;
  }
  const QuizQuestion& q = *quiz.question;
  const Session& session = app.model.session();
  // Where the question points, for tests that answer it from `attention-lab trace`.
  app.widgets.set_fact("quiz.question", std::string(q.kind == QuizKind::Argmax ? "argmax" : "value") + ":" +
                                            stage_name(q.stage) + ":" + std::to_string(q.batch) + ":" +
                                            std::to_string(q.head) + ":" + std::to_string(q.row) + ":" +
                                            std::to_string(q.col));
  if (q.kind == QuizKind::Value && app.widgets.enabled()) {  // and what the cells on screen give
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.9g", q.shown_answer);
    app.widgets.set_fact("quiz.shown_answer", shown);
  }
  ImGui::Separator();
  wrapped_text(question_text(app, q, session));
  // At a small window size the inputs' cells may show colours only: say where their numbers are.
  if (quiz.numbers_hidden && !quiz.answered) {
    wrapped_text_disabled(app.tr("labs.quiz.numbers_hidden"));
    app.widgets.add_last_item("labs.quiz.numbers_hidden");
  }
  if (!quiz.answered) {
    if (quiz.attempts > 0) {
      wrapped_text_colored(kBadText, app.i18n.format("labs.quiz.try_again",
                                                     {{"left", std::to_string(kQuizAttempts - quiz.attempts)}}));
      app.widgets.add_last_item("labs.quiz.try_again");
    }
    answer_controls(app, quiz, session);
    if (quiz.attempts > 0 && !quiz.answered) {
      if (ImGui::Button((std::string(app.tr("labs.quiz.show_answer")) + "###quiz_show").c_str()))
        reveal(app, quiz, false);
      app.widgets.add_last_item("labs.quiz.show_answer");
    }
  } else {
    const bool cross = session.config.attention == AttentionKind::Cross;
    const std::vector<std::string>& keys = cross ? session.tokens_kv : session.tokens;
    const std::string right = q.kind == QuizKind::Argmax
        ? (q.answer_key < static_cast<Index>(keys.size()) ? keys[size_t(q.answer_key)] : std::to_string(q.answer_key)) +
              "  (α = " + lab_number(q.answer) + ")"
        : lab_number(q.answer);
    // Worked out from the printed inputs the value can differ from the exact one by more than the
    // tolerance: a learner who got it wrong sees both.
    const bool shown_differs = q.kind == QuizKind::Value && !quiz_value_matches(q.answer, q.shown_answer);
    const char* verdict = quiz.correct ? "labs.quiz.right" : shown_differs ? "labs.quiz.wrong_shown" : "labs.quiz.wrong";
    wrapped_text_colored(quiz.correct ? kGoodText : kBadText,
                         app.i18n.format(verdict, {{"answer", right}, {"shown", lab_number(q.shown_answer)}}));
  }
  ImGui::Spacing();
  if (ImGui::Button((std::string(app.tr("labs.quiz.next")) + "###quiz_next").c_str())) new_question(app, quiz, *trace);
  app.widgets.add_last_item("labs.quiz.next");
  wrapped_text_disabled(app.tr("labs.quiz.tolerance"));
}

// The window starts in the bottom-right corner; when the covered cell is under
// it, it moves to the bottom-left one (a cell is narrower than the gap between them).
void keep_off_the_covered_cell(const QuizState& quiz) {
  // A whole covered stage shows nothing under the window: only a covered cell must stay in view
  // (and a window jumping away from a whole stage would move its fields under the pointer).
  if (quiz.covered_heatmaps.empty() || quiz.covered_row < 0) return;
  const ImVec2 min = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  const bool overlaps = quiz.cover_min.x < min.x + size.x && quiz.cover_max.x > min.x &&
                        quiz.cover_min.y < min.y + size.y && quiz.cover_max.y > min.y;
  if (!overlaps) return;
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const float font = ImGui::GetFontSize();
  const float cover_centre = 0.5f * (quiz.cover_min.x + quiz.cover_max.x);
  const float x = cover_centre > viewport->WorkPos.x + 0.5f * viewport->WorkSize.x
                      ? viewport->WorkPos.x + 1.0f * font
                      : viewport->WorkPos.x + viewport->WorkSize.x - 1.0f * font - size.x;
  ImGui::SetWindowPos(ImVec2(x, min.y));
}

}  // namespace

bool quiz_covers(const AppState& app, const std::string& name, Index row, Index col) {
  const QuizState& quiz = app.labs.quiz;
  const bool whole = quiz.covered_row < 0;
  return !quiz.covered_heatmaps.empty() && (whole || (row == quiz.covered_row && col == quiz.covered_col)) &&
         app.view.batch == quiz.covered_batch &&
         std::find(quiz.covered_heatmaps.begin(), quiz.covered_heatmaps.end(), name) != quiz.covered_heatmaps.end();
}

void draw_quiz_cover(AppState& app, const std::string& name, ImVec2 grid_min, ImVec2 grid_max, ImVec2 cell) {
  const QuizState& quiz = app.labs.quiz;
  if (!quiz_covers(app, name, quiz.covered_row, quiz.covered_col)) return;
  ImDrawList* draw_list = ImGui::GetWindowDrawList();
  const bool whole = quiz.covered_row < 0;
  const ImVec2 min = whole ? grid_min
                           : ImVec2(grid_min.x + static_cast<float>(quiz.covered_col) * cell.x,
                                    grid_min.y + static_cast<float>(quiz.covered_row) * cell.y);
  const ImVec2 max = whole ? grid_max : ImVec2(min.x + cell.x, min.y + cell.y);
  draw_list->AddRectFilled(min, max, kQuizCoverColour);
  draw_list->AddRect(min, max, kRawColour, 0.0f, 0, std::max(1.0f, 0.1f * ImGui::GetFontSize()));
  const ImVec2 mark = ImGui::CalcTextSize("?");
  if (max.y - min.y >= mark.y)
    draw_list->AddText(ImVec2(0.5f * (min.x + max.x - mark.x), 0.5f * (min.y + max.y - mark.y)),
                       IM_COL32(255, 255, 255, 255), "?");
  app.widgets.add("quiz.cover." + name, min, max);
  app.labs.quiz.cover_min = min;
  app.labs.quiz.cover_max = max;
}

void draw_quiz(AppState& app) {
  QuizState& quiz = app.labs.quiz;
  if (!quiz.open) quiz.covered_heatmaps.clear();  // closing the quiz uncovers the cell
  bool visible = false;
  if (begin_lab_window(app, "quiz", "labs.quiz.title", &quiz.open, ImVec2(34.0f, 17.0f), &visible, true)) {
    if (visible) draw_body(app, quiz);
    keep_off_the_covered_cell(quiz);
    ImGui::End();
  }
  quiz.numbers_hidden = false;  // the next frame's heatmaps say it again
}

}  // namespace al::gui
