// The stage stepper: previous / play / next buttons and a clickable timeline of
// every step of the pipeline.
#include "panels/panels.hpp"  // first: it brings in epoxy, which must precede any GL header

#include <GLFW/glfw3.h>

#include <algorithm>
#include <vector>


namespace al::gui {

namespace {
constexpr double kPlaySecondsPerStep = 1.6;

// The position of the current step among the session's steps; a step the session
// lost (its option turned off) falls back to the nearest earlier step it has.
int current_index(AppState& app, const std::vector<Step>& steps) {
  int last_present = 0;
  for (Step step : kStepOrder) {
    const auto it = std::find(steps.begin(), steps.end(), step);
    if (it != steps.end()) last_present = static_cast<int>(it - steps.begin());
    if (step == app.view.step) break;
  }
  app.view.step = steps[static_cast<size_t>(last_present)];
  return last_present;
}

void go_to(AppState& app, const std::vector<Step>& steps, int index) {
  const int clamped = std::max(0, std::min(static_cast<int>(steps.size()) - 1, index));
  app.view.step = steps[static_cast<size_t>(clamped)];
}
}  // namespace

void step_by(AppState& app, int delta) {
  const std::vector<Step> steps = steps_of(app.model.session());
  go_to(app, steps, current_index(app, steps) + delta);
}

void advance_play(AppState& app) {
  if (!app.view.playing) return;
  const double now = glfwGetTime();
  if (now < app.view.next_play_time) return;
  const std::vector<Step> steps = steps_of(app.model.session());
  if (current_index(app, steps) + 1 >= static_cast<int>(steps.size())) {
    app.view.playing = false;  // stop at the end instead of looping: the learner reads the output
    return;
  }
  step_by(app, 1);
  app.view.next_play_time = now + kPlaySecondsPerStep;
}

void draw_stepper(AppState& app) {
  const std::vector<Step> steps = steps_of(app.model.session());  // x_pos, rope, alibi only when on
  const int count = static_cast<int>(steps.size());
  const int current = current_index(app, steps);
  ImGui::BeginDisabled(current == 0);
  if (ImGui::Button((std::string("◀ ") + app.tr("stepper.previous") + "###prev").c_str()))
    step_by(app, -1);
  ImGui::EndDisabled();
  app.widgets.add_last_item("stepper.previous");
  ImGui::SameLine();
  const std::string play = app.view.playing ? std::string("■ ") + app.tr("stepper.pause")
                                            : std::string("▶ ") + app.tr("stepper.play");
  if (ImGui::Button((play + "###play").c_str())) {
    app.view.playing = !app.view.playing;
    if (app.view.playing && current + 1 >= count) go_to(app, steps, 0);  // replay from the start
    app.view.next_play_time = glfwGetTime() + kPlaySecondsPerStep;
  }
  app.widgets.add_last_item("stepper.play");
  ImGui::SameLine();
  ImGui::BeginDisabled(current + 1 >= count);
  if (ImGui::Button((std::string(app.tr("stepper.next")) + " ▶###next").c_str())) step_by(app, 1);
  ImGui::EndDisabled();
  app.widgets.add_last_item("stepper.next");
  ImGui::SameLine();
  ImGui::TextDisabled("%s", app.tr("stepper.keys_hint"));
  ImGui::SameLine(0.0f, 2.0f * ImGui::GetFontSize());
  draw_gradient_toggle(app);

  // The timeline strip: every step, the current one highlighted. Where the panel is too narrow
  // for it (12 steps at 1024 pixels) it goes on over another line, the arrow first.
  const float gap = 0.25f * ImGui::GetFontSize();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (int i = 0; i < count; ++i) {
    const Step step = steps[static_cast<size_t>(i)];
    const std::string label = step_timeline(step, app.model.session(), app.i18n.lookup());
    if (i > 0) {
      const float needed = 2.0f * gap + ImGui::CalcTextSize("→").x + ImGui::CalcTextSize(label.c_str()).x +
                           2.0f * ImGui::GetStyle().FramePadding.x;
      if (ImGui::GetItemRectMax().x + needed <= right) ImGui::SameLine(0.0f, gap);
      ImGui::TextDisabled("→");
      ImGui::SameLine(0.0f, gap);
    }
    const std::string timeline = label + "###timeline";
    ImGui::PushID(static_cast<int>(step));
    const bool selected = i == current;
    if (selected) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(timeline.c_str())) {
      go_to(app, steps, i);
      app.view.playing = false;
    }
    if (selected) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", step_title(step, app.model.session(), app.i18n.lookup()).c_str());
    app.widgets.add_last_item(std::string("timeline.") + step_id(step));
    ImGui::PopID();
  }
}

}  // namespace al::gui
