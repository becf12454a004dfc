// A session too large to keep whole: beside its TooLarge error the button that keeps
// only what this view needs, where a view meets a stage that was not kept the note
// and the button that keeps it too, and the status line's list of what is not kept.
// Which stages a view needs is decided in state/view_stages.cpp.
// A step to a stage not kept offers to keep it, rather than recomputing on its own: at the
// sizes where this happens a recompute takes seconds and memory near the limit, and a
// learner stepping (or playing) through the steps expects the step to move at once and
// to decide what the memory goes to; the note says what it would cost.
#include <algorithm>

#include "panels/panels.hpp"
#include "state/view_stages.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {
const ImVec4 kNoteColour = ImVec4(1.0f, 0.75f, 0.3f, 1.0f);

// "1.0 GiB (1124073472 bytes)": a size beside the limit, where rounding alone could make them look equal.
std::string exact_bytes(Index bytes) { return bytes_text(bytes) + " (" + std::to_string(bytes) + " B)"; }
}  // namespace

std::string kept_stage_name(const AppState& app, Stage stage) {
  return app.tr(std::string("keep.stage.") + stage_name(stage));
}

void draw_keep_offer(AppState& app, const std::string& place) {
  const auto& error = app.model.error();
  if (!error || error->code != ErrorCode::TooLarge) return;
  StageSet needs = stages_view_needs(app);
  Index bytes = keep_bytes(app, needs);
  const Index limit = app.model.memory_limit();
  // The view's input stage and result together may not fit where its result alone does: then
  // at least the attention weights (the softmax step's input, S″, at 4096 tokens is 512 MiB more).
  const char* offer = "keep.only_view";
  if (bytes > limit && needs != stage_set({Stage::Weights})) {
    const Index weights_bytes = keep_bytes(app, stage_set({Stage::Weights}));
    if (weights_bytes > 0 && weights_bytes <= limit) {
      needs = stage_set({Stage::Weights});
      bytes = weights_bytes;
      offer = "keep.only_weights";
    }
  }
  if (bytes <= 0) return;  // the sizes overflow: nothing to offer
  ImGui::PushID(place.c_str());
  if (bytes > limit) {
    wrapped_text_colored(kNoteColour, app.i18n.format("keep.view_too_large",
                                                      {{"size", exact_bytes(bytes)}, {"limit", exact_bytes(limit)}}));
    app.widgets.add_last_item("keep.view_too_large." + place);
  } else {
    const std::string label = app.i18n.format(offer, {{"size", bytes_text(bytes)}});
    if (ImGui::Button(label.c_str())) app.model.set_keep(needs);
    app.widgets.add_last_item(std::string(offer) + "." + place);
    app.widgets.set_fact("keep.offer_bytes", std::to_string(bytes));
  }
  ImGui::PopID();
}

bool draw_not_kept(AppState& app, const StageSet& stages, const std::string& place) {
  auto trace = app.model.trace();
  if (!trace) return false;
  StageSet missing;
  std::string names, ids;  // for the learner, and for the widget names ("scores+scaled")
  for (Stage stage : kSquareStages)
    if (stages.test(static_cast<size_t>(stage)) && stage_not_kept(*trace, stage)) {
      missing.set(static_cast<size_t>(stage));
      names += (names.empty() ? "" : app.tr("keep.and")) + kept_stage_name(app, stage);
      ids += (ids.empty() ? "" : "+") + std::string(stage_name(stage));
    }
  if (missing.none()) return false;
  ImGui::PushID(place.c_str());
  wrapped_text_colored(kNoteColour, app.i18n.format("keep.not_kept", {{"stage", names}}));
  app.widgets.add_last_item("keep.not_kept." + place + "." + ids);
  if (!app.model.keep()) {  // every stage asked for already: the whole trace is being computed
    ImGui::PopID();
    return true;
  }
  const StageSet kept = *app.model.keep();
  const StageSet with = kept | missing;
  const Index total = keep_bytes(app, with), limit = app.model.memory_limit();
  if (total > 0 && total <= limit) {
    const std::string label = app.i18n.format(missing.count() == 1 ? "keep.keep_too" : "keep.keep_them_too",
                                              {{"size", bytes_text(total - keep_bytes(app, kept))}});
    if (ImGui::Button(label.c_str())) app.model.set_keep(with);
    app.widgets.add_last_item("keep.keep_too." + place + "." + ids);
  } else {
    // Too much on top of what is kept: what this view needs alone may still fit.
    const StageSet needs = stages_view_needs(app) | missing;
    const Index view_bytes = keep_bytes(app, needs);
    wrapped_text_colored(kNoteColour, app.i18n.format(missing.count() == 1 ? "keep.does_not_fit" : "keep.do_not_fit",
                                                      {{"size", exact_bytes(total)}, {"limit", exact_bytes(limit)}}));
    if (view_bytes > 0 && view_bytes <= limit) {
      const std::string label = app.i18n.format("keep.only_view", {{"size", bytes_text(view_bytes)}});
      if (ImGui::Button(label.c_str())) app.model.set_keep(needs);
      app.widgets.add_last_item("keep.only_view." + place + "." + ids);
    }
  }
  ImGui::PopID();
  return true;
}

void draw_kept_note(AppState& app) {
  auto trace = app.model.trace();
  if (!trace) return;
  std::string stages;
  for (Stage stage : kSquareStages)
    if (stage_not_kept(*trace, stage))
      stages += (stages.empty() ? "" : app.tr("keep.list_separator")) + kept_stage_name(app, stage);
  if (stages.empty()) return;
  ImGui::SameLine();
  ImGui::TextColored(kNoteColour, "| %s",
                     app.i18n.format("keep.status", {{"stages", stages}, {"limit", bytes_text(app.model.memory_limit())}})
                         .c_str());
  app.widgets.add_last_item("keep.status");
}

}  // namespace al::gui
