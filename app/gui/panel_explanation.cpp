// What the current step does: its formula with this example's numbers, and a
// few sentences on why (the √d_k reason, what a mask does, dropout in training
// vs evaluation).
#include <cmath>

#include "panels.hpp"
#include "text_wrap.hpp"

namespace al::gui {

void draw_explanation(AppState& app) {
  const StepInfo& info = step_info(app.view.step);
  const std::string base = std::string("step.") + info.id;
  const Session& session = app.model.session();
  auto trace = app.model.trace();

  // Values the texts quote, from the trace actually on screen.
  Params params;
  if (trace) {
    const Dims& d = trace->dims;
    params = {{"d_k", std::to_string(d.d_k)},
              {"d_model", std::to_string(d.d_model)},
              {"h", std::to_string(d.heads)},
              {"sqrt_d_k", lab_number(std::sqrt(static_cast<double>(d.d_k)))},
              {"scale", lab_number(trace->scale)},
              {"fill", lab_number(trace->mask_fill)},
              {"p", lab_number(session.config.dropout.p)},
              {"keep_scale", lab_number(session.config.dropout.p < 1 ? 1.0 / (1.0 - session.config.dropout.p) : 0.0)},
              {"lq", std::to_string(d.len_q)},
              {"lk", std::to_string(d.len_kv)}};
  }

  ImGui::Text("%d/%d  %s", static_cast<int>(app.view.step) + 1, kStepCount, app.tr(base + ".title"));
  wrapped_text_colored(kFormulaColour, info.formula);
  app.widgets.add_last_item("explanation.formula");
  if (trace && app.view.step == Step::Scaled) wrapped_text(app.i18n.format("step.scaled.numbers", params));

  std::string text = app.i18n.format(base + ".explain", params);
  // The state of this example adds a sentence where it matters (Chinese sentences
  // follow each other without a space).
  const std::string gap = app.i18n.language() == Language::Zh ? "" : " ";
  const Config& c = session.config;
  if (app.view.step == Step::Masked) {
    const bool any_mask = c.mask.causal || c.mask.key_padding || c.mask.custom;
    text += gap + app.i18n.format(any_mask ? "step.masked.active" : "step.masked.none", params);
    if (trace && trace->any_fully_masked())
      text += gap + app.i18n.format("step.masked.fully_masked", params);
  }
  if (app.view.step == Step::Dropped)
    text += gap + app.i18n.format(c.dropout.training && c.dropout.p > 0 ? "step.dropped.training"
                                                                        : "step.dropped.eval",
                                  params);
  if (app.view.step == Step::WO && !session.weights.w_o)
    text += gap + app.i18n.format("step.w_o.absent", params);
  const std::string lines = wrapped_text(text);
  app.widgets.add_last_item("explanation.text");
  if (app.widgets.enabled()) app.widgets.set_fact("explanation.text.lines", lines);
}

}  // namespace al::gui
