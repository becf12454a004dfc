// What the current step does: its formula for this session, its numbers, and a
// few sentences on why (the √d_k reason, what a mask does, dropout in training
// vs evaluation), composed by core/teaching/stage_text.hpp from the trace on screen.
#include "panels/panels.hpp"
#include "teaching/batch_note.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {
// The texts of the last (trace, step, language) shown: composing them scans the
// trace (the scores' variance, the largest masked weight), once per new trace.
struct ShownStepText {
  std::shared_ptr<const Trace> trace;
  Step step = Step::X;
  Language language = Language::En;
  Index batch = 0;
  StepText text;
  std::string batch_note;  // batch_item_note for `batch`
};
}  // namespace

void draw_explanation(AppState& app) {
  static ShownStepText shown;
  auto trace = app.model.trace();
  // The session the trace was computed from, so every sentence matches the numbers on screen.
  const Session& session = trace ? app.model.trace_session() : app.model.session();
  const Language language = app.i18n.language();
  const Index batch = app.view.batch;
  if (!trace || shown.trace != trace || shown.step != app.view.step || shown.language != language ||
      shown.batch != batch) {
    shown = {trace, app.view.step, language, batch,
             step_text(app.view.step, session, trace.get(), app.i18n.lookup(), language == Language::Zh),
             trace ? batch_item_note(app.view.step, *trace, batch, app.i18n.lookup()) : ""};
  }
  const StepText& text = shown.text;

  const std::vector<Step> steps = steps_of(app.model.session());
  const auto at = std::find(steps.begin(), steps.end(), app.view.step);
  ImGui::Text("%d/%d  %s", static_cast<int>(at - steps.begin()) + 1, static_cast<int>(steps.size()), text.title.c_str());
  wrapped_text_colored(kFormulaColour, text.formula);
  app.widgets.add_last_item("explanation.formula");
  draw_trace_checks(app);
  if (!text.numbers.empty()) wrapped_text(text.numbers);
  const std::string gap = language == Language::Zh || shown.batch_note.empty() ? "" : " ";
  const std::string lines = wrapped_text(text.explain + gap + shown.batch_note);
  app.widgets.add_last_item("explanation.text");
  if (app.widgets.enabled()) app.widgets.set_fact("explanation.text.lines", lines);
}

}  // namespace al::gui
