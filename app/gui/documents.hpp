#pragma once
// The document side of the app: which file the session belongs to, Save / Save
// as / Open / Import through the ImGui file dialog, recent files, drag and
// drop, the unsaved-changes question, autosave to the recovery file and the
// settings that persist between runs (core/recovery.hpp, core/settings.hpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edits.hpp"
#include "recovery.hpp"
#include "settings.hpp"

struct GLFWwindow;

namespace al::gui {

struct AppState;
struct Options;

enum class FileDialogMode { Open, SaveAs, Import };

// The file dialog's state (drawn by panel_file_dialog.cpp).
struct FileDialog {
  bool request_open = false;  // OpenPopup on the next frame
  bool request_close = false; // the accepted file was used: close on the next frame
  FileDialogMode mode = FileDialogMode::Open;
  std::string folder;         // absolute
  std::string name;           // the name field: a file name, or a path typed whole
  std::string error;          // shown inline: unreadable folder, failed save or import
  std::string overwrite_path; // Save as: an existing file, waiting for "Replace it?"
  // The folder's listing, read when the folder changes (not every frame).
  struct Entry {
    std::string name;
    bool is_folder = false;
  };
  std::vector<Entry> entries;
  std::string listed_folder;
  // Import
  InputId import_target = InputId::X;
  bool torch_layout = false;
};

// What to do once the learner has answered "save your changes?".
enum class PendingAction { None, Quit, Open };

struct DocumentState {
  std::string path;          // the file the session is saved to; empty: a preset or a new session
  bool user_files = false;   // settings and recovery in use (not for screenshots)
  Settings settings;
  FileDialog dialog;
  std::optional<AutosaveTimer> autosave;
  std::unique_ptr<AutosaveWriter> autosave_writer;  // off the UI thread
  std::uint64_t autosave_submitted = 0;   // the revision last handed to the writer
  std::string autosave_notice;            // a failed autosave, shown in the status bar until one succeeds
  bool recovery_on_disk = false;          // a recovery file of ours may exist
  std::optional<Recovery> recovery_offer; // found at start, waiting for Restore / Discard
  bool request_recovery_popup = false;

  PendingAction pending = PendingAction::None;
  std::string pending_path;               // for PendingAction::Open
  bool request_confirm_popup = false;

  std::string message;                    // a file problem shown in a message box
  bool request_message_popup = false;
  std::vector<std::string> dropped;       // paths dropped onto the window, handled next frame
};

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
