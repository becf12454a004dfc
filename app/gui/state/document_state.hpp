#pragma once
// The document side of the app: which file the session belongs to, Save / Save
// as / Open / Import through the ImGui file dialog, recent files, drag and
// drop, the unsaved-changes question, autosave to the recovery file and the
// settings that persist between runs (core/editing/recovery.hpp, core/io/settings.hpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "editing/edits.hpp"
#include "editing/recovery.hpp"
#include "io/settings.hpp"

namespace al::gui {

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

}  // namespace al::gui
