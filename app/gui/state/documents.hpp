#pragma once
// What the app does with documents (documents.cpp, panel_files.cpp,
// panel_file_dialog.cpp); the state they work on is in document_state.hpp.
#include <optional>
#include <string>

#include "state/document_state.hpp"

struct GLFWwindow;

namespace al::gui {

struct AppState;

// The session to start with: `source` (preset or file) if it loads; a file whose
// sizes do not fit together opens as it is with its error shown; a file that is
// not a session at all opens the default preset with the reason in `problem`.
struct StartDocument {
  Session session;
  std::string path;        // the file, when `source` was one
  std::string title;
  std::optional<Error> problem;
};
StartDocument load_start_document(const std::string& source);

// After the AppState exists: settings (language unless --lang), the recovery
// offer, the autosave timer. Screenshots use none of them.
void init_documents(AppState& app, const StartDocument& start);
// Window size and position from the settings (unless --size), after creation.
void place_window(AppState& app, GLFWwindow* window);
// Once per loop iteration, drawn or not: hands the recovery file to the
// autosave writer when due. True when the status bar changed (a failed write
// reported, or the report cleared), so an idle window draws it.
bool tick_autosave(AppState& app);
// Asks first when there are unsaved changes; sets app.quit otherwise.
void request_quit(AppState& app);
// At exit: settings (window geometry, language) and the recovery file (kept
// when the app is stopped by a signal with unsaved changes, else removed).
void finish_documents(AppState& app, GLFWwindow* window, bool by_signal);

// Actions (documents.cpp). Errors go to the message box; the session stays as it was.
void request_open(AppState& app, const std::string& path);  // asks first when modified
bool open_document(AppState& app, const std::string& path);
// A built-in example: opened like a file over unchanged work, an undoable edit over unsaved work;
// either way it has no file yet (Save asks where).
bool open_example(AppState& app, const std::string& preset, const std::string& edit_label);
// The same for a session made in the app (a lesson's), titled `name`.
void open_example_session(AppState& app, Session session, const std::string& name, const std::string& edit_label);
bool save_document(AppState& app, const std::string& path);
void save_or_ask_path(AppState& app);  // Ctrl+S: the known file, else Save as
void import_into_session(AppState& app, const std::string& path);
// The pending action after a save or "Don't save".
void continue_pending(AppState& app);

// panel_files.cpp
void draw_file_menu_items(AppState& app);   // inside the File menu
void handle_file_shortcuts(AppState& app);  // Ctrl+S, Ctrl+Shift+S, Ctrl+O
void draw_file_windows(AppState& app);      // dialog, questions, messages; after the main window
// panel_file_dialog.cpp: returns the accepted path (absolute) when the learner confirms.
std::optional<std::string> draw_file_dialog(AppState& app);

}  // namespace al::gui
