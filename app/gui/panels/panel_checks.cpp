// The trace's checks where a learner meets them: on the mask and softmax steps,
// a warning when masked keys still receive weight (a fill such as -1e-20 is not
// very negative), with the largest leaked weight and the fill.
#include "panels/panels.hpp"
#include "widgets/heatmap_cells.hpp"  // kLeakVisible
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {
const ImVec4 kWarningColour = ImVec4(1.0f, 0.62f, 0.25f, 1.0f);
}  // namespace

void draw_trace_checks(AppState& app) {
  const Step step = app.view.step;
  if (step != Step::Masked && step != Step::Weights) return;
  auto trace = app.model.trace();
  if (!trace || !(trace->checks.masked_weight_max > kLeakVisible)) return;
  const std::string text = app.i18n.format(
      "checks.masked_leak", {{"weight", lab_number(trace->checks.masked_weight_max)},
                             {"share", lab_number(trace->checks.masked_share_max)},
                             {"fill", lab_number(trace->mask_fill)}});
  wrapped_text_colored(kWarningColour, text);
  app.widgets.add_last_item("checks.masked_leak");
}

}  // namespace al::gui
