#pragma once
// The panels of the main window, one file each (panel_<name>.cpp). Each reads
// AppState and sends edits through AppState::edit().
#include "state/app_state.hpp"

namespace al::gui {

void draw_menu_bar(AppState& app);        // panel_menu.cpp: file, edit (undo/redo), language
void draw_stepper(AppState& app);         // panel_stepper.cpp: buttons, timeline, play
void draw_explanation(AppState& app);     // panel_explanation.cpp: formula + why
void draw_heatmaps(AppState& app);        // panel_heatmaps.cpp: inputs and every head
void draw_config_panel(AppState& app);    // panel_config.cpp: sizes, heads, scale, mask fill, dropout
void draw_matrix_editor(AppState& app);   // panel_matrix_editor.cpp: cell editing
void draw_mask_painter(AppState& app);    // panel_mask.cpp: Lq x Lk grid, causal, padding
void draw_status_bar(AppState& app);      // panel_status.cpp: error, timings, notices
void draw_examples_menu(AppState& app);   // panel_examples.cpp: built-in examples, recent files
void draw_trace_checks(AppState& app);    // panel_checks.cpp: warns of weight on masked keys

// Stepper actions shared with the keyboard shortcuts and play mode.
void step_by(AppState& app, int delta);
void advance_play(AppState& app);  // moves on when the play timer is due

// Keyboard shortcuts that work everywhere (undo/redo, stepping, quit).
void handle_shortcuts(AppState& app);
// The error of the latest edit, in red, if it was made by `control`.
void show_error_if_from(AppState& app, const std::string& control);
// A field refused its typed text (ViewState::refusal): `widget` names the message, `key` its text.
void refuse_typing(AppState& app, const std::string& widget, const std::string& key, Params params);
// That message, in red, while it is `widget`'s and the session has not changed since.
void show_refusal(AppState& app, const std::string& widget);
// panel_status.cpp: whether a trace is on its way (computing, no error), and what a view without a
// trace says: that it is being computed, or that the session has an error.
bool awaits_trace(const AppState& app);
const char* no_trace_text(const AppState& app);

// panel_keep.cpp, a session too large to keep whole (SessionModel::keep, state/view_stages.hpp):
// beside a TooLarge error the button keeping only what this view needs (`place` names its
// widget); where the trace did not keep some of `stages`, one note naming them and a button
// keeping them too (true when drawn); the status line's list of stages not kept; a stage's
// name for these notes.
void draw_keep_offer(AppState& app, const std::string& place);
bool draw_not_kept(AppState& app, const StageSet& stages, const std::string& place);
void draw_kept_note(AppState& app);
std::string kept_stage_name(const AppState& app, Stage stage);

// The main window: lays the panels out; called once per frame.
void draw_main_window(AppState& app);

}  // namespace al::gui
