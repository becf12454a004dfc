// Open, save, import, the recovery file and the settings (see documents.hpp).
#include "state/documents.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "state/app_state.hpp"
#include "editing/import.hpp"
#include "io/session_io.hpp"

namespace al::gui {

namespace fs = std::filesystem;

namespace {

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) return path;
  std::string normal = absolute.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();  // "." ends in "/"
  return normal;
}

std::string display_name(const std::string& path) { return fs::path(path).filename().string(); }

void show_message(AppState& app, const std::string& message) {
  app.files.message = message;
  app.files.request_message_popup = true;
  std::fprintf(stderr, "attention-lab: %s\n", message.c_str());
}

void remember_recent(AppState& app, const std::string& path) {
  if (!app.files.user_files) return;
  add_recent_file(app.files.settings, path);
  if (auto error = save_settings(app.files.settings))
    std::fprintf(stderr, "attention-lab: %s\n", error->message.c_str());
}

// The session now matches what is on disk: nothing to recover. The clear goes
// to the writer's queue, after any write still under way.
void forget_recovery(AppState& app) {
  DocumentState& files = app.files;
  if (files.autosave) files.autosave->reset(app.model.revision());
  if (!files.user_files || files.recovery_offer || !files.autosave_writer) return;
  if (files.recovery_on_disk || !files.autosave_writer->idle()) {
    files.autosave_writer->submit_clear(app.model.revision());
    files.recovery_on_disk = false;
  }
}

// The writer's finished jobs: the timer learns what is on disk, a failure is
// shown in the status bar (once, until a write succeeds) and retried by the timer.
bool take_autosave_results(AppState& app) {
  DocumentState& files = app.files;
  bool notices_changed = false;
  for (AutosaveWriter::Finished& done : files.autosave_writer->take_finished()) {
    auto& notices = app.notices;
    if (done.error) {
      std::fprintf(stderr, "attention-lab: autosave: %s\n", done.error->message.c_str());
      const std::string notice =
          app.i18n.format("files.autosave_failed", {{"error", app.i18n.error_message(*done.error)}});
      if (notice != files.autosave_notice) {
        notices.erase(std::remove(notices.begin(), notices.end(), files.autosave_notice), notices.end());
        notices.push_back(notice);
        files.autosave_notice = notice;
        notices_changed = true;
      }
      continue;
    }
    if (!files.autosave_notice.empty()) {
      notices.erase(std::remove(notices.begin(), notices.end(), files.autosave_notice), notices.end());
      files.autosave_notice.clear();
      notices_changed = true;
    }
    if (done.cleared) continue;
    files.autosave->mark_saved(done.revision);
    files.recovery_on_disk = true;
  }
  return notices_changed;
}

}  // namespace

StartDocument load_start_document(const std::string& source) {
  StartDocument start;
  std::error_code ec;
  const bool is_file = fs::exists(source, ec) && !fs::is_directory(source, ec);
  if (is_file) {
    auto loaded = load_session_file_for_editing(source);
    if (loaded) {
      start.session = std::move(loaded->session);
      start.path = absolute_path(source);
      start.title = display_name(source);
      // Opened as it is: the editor shows the error and the learner fixes it.
      start.problem = loaded->unfit;
      return start;
    }
    start.problem = loaded.error();
  } else {
    auto session = load_session_or_preset(source);
    if (session) {
      start.session = std::move(*session);
      start.title = source;
      return start;
    }
    start.problem = session.error();
  }
  // Not a session at all: the default example, with the reason on screen.
  start.session = std::move(*load_preset(default_preset_name()));
  start.title = default_preset_name();
  return start;
}

void init_documents(AppState& app, const StartDocument& start) {
  DocumentState& files = app.files;
  files.path = start.path;
  app.document = start.title;
  app.start_problem = start.problem;
  files.dialog.folder = absolute_path(start.path.empty() ? "." : fs::path(start.path).parent_path().string());
  files.user_files = !app.options.screenshot;
  if (!files.user_files) return;

  LoadedSettings loaded = load_settings();
  files.settings = std::move(loaded.settings);
  for (const auto& warning : loaded.warnings) {
    app.notices.push_back(warning);
    std::fprintf(stderr, "attention-lab: %s\n", warning.c_str());
  }
  // Without a file to start from, the file dialog opens where it was last used.
  if (start.path.empty() && !files.settings.last_folder.empty()) files.dialog.folder = files.settings.last_folder;
  // A file opened from the command line or the desktop (attention-lab %f) is recent work too.
  if (!start.path.empty()) remember_recent(app, start.path);
  Language language;
  if (!app.options.language && parse_language(files.settings.language, &language))
    app.i18n.set_language(language);

  files.autosave.emplace(app.model.revision());
  files.autosave_writer = std::make_unique<AutosaveWriter>();
  auto recovery = read_recovery();
  if (!recovery) {
    // A recovery file that cannot be read back is kept (it may still be opened
    // by hand) until the next autosave replaces it.
    app.notices.push_back(app.i18n.error_message(recovery.error()));
  } else if (*recovery) {
    files.recovery_on_disk = true;
    files.recovery_offer = std::move(**recovery);
    files.request_recovery_popup = true;
  }
}

void place_window(AppState& app, GLFWwindow* window) {
  const WindowGeometry& geometry = app.files.settings.window;
  if (!app.files.user_files || app.options.width > 0) return;
  if (geometry.width >= 200 && geometry.height >= 150) glfwSetWindowSize(window, geometry.width, geometry.height);
  if (geometry.x && geometry.y) glfwSetWindowPos(window, *geometry.x, *geometry.y);
  if (geometry.maximized) glfwMaximizeWindow(window);
}

bool tick_autosave(AppState& app) {
  DocumentState& files = app.files;
  if (!files.user_files || !files.autosave_writer) return false;
  const bool status_changed = take_autosave_results(app);
  // Until the learner answers the recovery question, its file is not touched.
  if (files.recovery_offer) return status_changed;
  const std::uint64_t revision = app.model.revision();
  if (!app.model.modified()) {
    forget_recovery(app);
    return status_changed;
  }
  const bool due = files.autosave->should_save(revision, AutosaveTimer::Clock::now());
  // Not twice the same revision while it is on its way.
  if (due && !(revision == files.autosave_submitted && !files.autosave_writer->idle())) {
    files.autosave_writer->submit_write(app.model.session(), files.path, revision);
    files.autosave_submitted = revision;
  }
  return status_changed;
}

void request_quit(AppState& app) {
  // --save-on-exit keeps the session (tests), so nothing would be lost.
  if (app.model.modified() && app.options.save_on_exit.empty() && !app.options.screenshot) {
    app.files.pending = PendingAction::Quit;
    app.files.request_confirm_popup = true;
    return;
  }
  app.quit = true;
}

void finish_documents(AppState& app, GLFWwindow* window, bool by_signal) {
  DocumentState& files = app.files;
  if (!files.user_files) return;
  files.autosave_writer.reset();  // finishes its writes first, so none lands after what follows
  if (by_signal && app.model.modified() && app.options.save_on_exit.empty()) {
    // Stopped from outside (logout, kill): the edits stay in the recovery file.
    write_recovery(app.model.session(), files.path);
  } else if (!files.recovery_offer) {
    // A clean exit: the learner saved or chose not to.
    clear_recovery();
  }
  Settings& settings = files.settings;
  settings.language = language_code(app.i18n.language());
  if (app.options.width == 0) {
    WindowGeometry& geometry = settings.window;
    geometry.maximized = glfwGetWindowAttrib(window, GLFW_MAXIMIZED) != 0;
    if (!geometry.maximized) {
      int x = 0, y = 0;
      glfwGetWindowSize(window, &geometry.width, &geometry.height);
      glfwGetWindowPos(window, &x, &y);
      geometry.x = x;
      geometry.y = y;
    }
  }
  if (auto error = save_settings(settings)) std::fprintf(stderr, "attention-lab: %s\n", error->message.c_str());
}

void request_open(AppState& app, const std::string& path) {
  if (app.model.modified()) {
    app.files.pending = PendingAction::Open;
    app.files.pending_path = path;
    app.files.request_confirm_popup = true;
    return;
  }
  open_document(app, path);
}

namespace {

// After a successful open or save: `path` is now the document's file.
void become_document(AppState& app, const std::string& path) {
  app.files.path = absolute_path(path);
  app.document = display_name(path);
  app.files.dialog.folder = fs::path(app.files.path).parent_path().string();
  remember_recent(app, app.files.path);
  forget_recovery(app);
}

}  // namespace

bool open_document(AppState& app, const std::string& path) {
  auto loaded = load_session_file_for_editing(path);
  if (!loaded) {
    show_message(app, app.i18n.format("files.open_failed", {{"error", app.i18n.error_message(loaded.error())}}));
    return false;
  }
  app.model.reset(std::move(loaded->session));
  app.view.error_control.clear();
  become_document(app, path);
  return true;
}

bool open_example(AppState& app, const std::string& preset, const std::string& edit_label) {
  auto session = load_preset(preset);
  if (!session) {
    show_message(app, app.i18n.error_message(session.error()));
    return false;
  }
  open_example_session(app, std::move(*session), preset, edit_label);
  return true;
}

void open_example_session(AppState& app, Session session, const std::string& name, const std::string& edit_label) {
  if (app.model.modified()) {
    // Unsaved work is not dropped: the example is an edit, undo brings the work back.
    app.edit(std::move(session), edit_label, "examples");
  } else {
    app.model.reset(std::move(session));
  }
  // Either way Save asks where: the example must never overwrite the file opened before,
  // even when it came in as an edit of that file's session.
  app.files.path.clear();
  app.view.error_control.clear();
  app.document = name;
}

bool save_document(AppState& app, const std::string& path) {
  app.model.wait_idle();
  if (auto error = save_session_file(path, app.model.session())) {
    // The session stays open and marked modified: nothing is lost.
    show_message(app, app.i18n.format("files.save_failed", {{"error", app.i18n.error_message(*error)}}));
    return false;
  }
  app.model.mark_saved();
  become_document(app, path);
  return true;
}

void save_or_ask_path(AppState& app) {
  if (!app.files.path.empty()) {
    if (save_document(app, app.files.path)) continue_pending(app);
    return;
  }
  app.files.dialog.mode = FileDialogMode::SaveAs;
  app.files.dialog.name = app.document + ".attention.json";  // the desktop opens this type with us
  app.files.dialog.request_open = true;
}

void import_into_session(AppState& app, const std::string& path) {
  FileDialog& dialog = app.files.dialog;
  ImportOptions options;
  options.torch_layout = dialog.torch_layout;
  auto imported = import_matrix_file(app.model.session(), dialog.import_target, path, options);
  if (!imported) {
    dialog.error = app.i18n.error_message(imported.error());
    return;
  }
  app.edit(std::move(*imported),
           app.i18n.format("files.import_edit", {{"what", input_name(dialog.import_target)}}), "files.import");
  dialog.error.clear();
}

void continue_pending(AppState& app) {
  const PendingAction pending = app.files.pending;
  app.files.pending = PendingAction::None;
  if (pending == PendingAction::Quit) app.quit = true;
  if (pending == PendingAction::Open) open_document(app, app.files.pending_path);
}

}  // namespace al::gui
