#pragma once
// Which (B, h, Lq, Lk) stages the learner's view shows, and what keeping them costs:
// what a session too large to keep whole keeps when the learner asks
// (SessionModel::set_keep). The one place that knows this; panels ask here.
#include "state/app_state.hpp"

namespace al::gui {

// The square stages step `step` of `session` shows in the heatmaps panel (its input
// and its result; the output step shows the weights averaged over heads).
StageSet stages_step_shows(const Session& session, Step step);
// What the current view needs: the stepper's step's stages plus the attention weights,
// which the token lines, the heads view and the labs read. Every keep the app asks for
// holds them, so a trace on screen always has the weights.
StageSet stages_view_needs(const AppState& app);

// True when the trace's session has `stage` but the trace did not keep it (ComputeOptions::keep):
// a panel shows a "not kept" note instead of its values. Read from the trace itself, not from
// the model's keep setting, which may already ask for the next trace while this one is shown.
bool stage_not_kept(const Trace& trace, Stage stage);

// Bytes of the current session's trace keeping only `stages` (0 when it is invalid).
Index keep_bytes(const AppState& app, const StageSet& stages);

}  // namespace al::gui
