// File menu items, Ctrl+S / Ctrl+Shift+S / Ctrl+O, dropped files, and the
// questions around files: save your changes?, restore the work of a crash?,
// and the message box for a file that could not be opened or saved.
#include <imgui.h>

#include <ctime>
#include <filesystem>

#include "state/app_state.hpp"
#include "state/documents.hpp"

namespace al::gui {

namespace {

constexpr const char* kConfirmPopup = "###files_confirm";
constexpr const char* kRecoveryPopup = "###files_recovery";
constexpr const char* kMessagePopup = "###files_message";

bool is_matrix_file(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  return extension == ".npy" || extension == ".csv" || extension == ".txt";
}

void show_dialog(AppState& app, FileDialogMode mode) {
  FileDialog& dialog = app.files.dialog;
  dialog.mode = mode;
  dialog.name = mode == FileDialogMode::SaveAs && !app.files.path.empty()
                    ? std::filesystem::path(app.files.path).filename().string()
                    : std::string();
  dialog.request_open = true;
  dialog.request_close = false;
}

std::string label(AppState& app, const char* key, const char* id) { return std::string(app.tr(key)) + id; }

// A modal's buttons, each 7 font units wide.
bool button(AppState& app, const char* key, const char* id, const std::string& widget) {
  const bool pressed = ImGui::Button(label(app, key, id).c_str(), ImVec2(7.0f * ImGui::GetFontSize(), 0.0f));
  app.widgets.add_last_item(widget);
  return pressed;
}

void begin_centred(float width_in_fonts) {
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(width_in_fonts * ImGui::GetFontSize(), 0.0f), ImGuiCond_Appearing);
}

void record_popup(AppState& app, const std::string& name) {
  const ImVec2 min = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  app.widgets.add(name, min, ImVec2(min.x + size.x, min.y + size.y));
}

void draw_confirm(AppState& app) {
  DocumentState& files = app.files;
  if (files.request_confirm_popup) {
    files.request_confirm_popup = false;
    ImGui::OpenPopup(kConfirmPopup);
  }
  begin_centred(30.0f);
  if (!ImGui::BeginPopupModal(label(app, "files.confirm.title", kConfirmPopup).c_str(), nullptr,
                              ImGuiWindowFlags_NoSavedSettings))
    return;
  record_popup(app, "files.confirm");
  ImGui::TextWrapped("%s", app.i18n.format("files.confirm.text", {{"name", app.document}}).c_str());
  ImGui::Spacing();
  if (button(app, "files.confirm.save", "###confirm_save", "files.confirm.save")) {
    ImGui::CloseCurrentPopup();
    save_or_ask_path(app);  // continues the pending action once saved
  }
  ImGui::SameLine();
  if (button(app, "files.confirm.discard", "###confirm_discard", "files.confirm.discard")) {
    ImGui::CloseCurrentPopup();
    continue_pending(app);
  }
  ImGui::SameLine();
  if (button(app, "files.cancel", "###confirm_cancel", "files.confirm.cancel") ||
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    ImGui::CloseCurrentPopup();
    files.pending = PendingAction::None;
  }
  ImGui::EndPopup();
}

void draw_recovery(AppState& app) {
  DocumentState& files = app.files;
  if (files.request_recovery_popup) {
    files.request_recovery_popup = false;
    ImGui::OpenPopup(kRecoveryPopup);
  }
  begin_centred(32.0f);
  if (!ImGui::BeginPopupModal(label(app, "files.recovery.title", kRecoveryPopup).c_str(), nullptr,
                              ImGuiWindowFlags_NoSavedSettings))
    return;
  record_popup(app, "files.recovery");
  if (files.recovery_offer) {
    const Recovery& recovery = *files.recovery_offer;
    const std::time_t when = std::chrono::system_clock::to_time_t(recovery.saved_at);
    char time_text[64] = "";
    std::strftime(time_text, sizeof time_text, "%Y-%m-%d %H:%M:%S", std::localtime(&when));
    const std::string from = recovery.original_path.empty() ? std::string(app.tr("files.recovery.unsaved"))
                                                            : recovery.original_path;
    ImGui::TextWrapped("%s", app.i18n.format("files.recovery.text", {{"file", from}, {"time", time_text}}).c_str());
  }
  ImGui::Spacing();
  if (button(app, "files.recovery.restore", "###recovery_restore", "files.recovery.restore")) {
    Recovery recovery = std::move(*files.recovery_offer);
    files.recovery_offer.reset();
    // The file it came from (if it still opens) is the saved state, so the
    // restored edits count as unsaved changes and undo goes back to it.
    bool opened = false;
    if (!recovery.original_path.empty()) opened = open_document(app, recovery.original_path);
    if (!opened) {
      files.path.clear();
      app.document = app.tr("files.recovery.document");
    }
    app.edit(std::move(recovery.session), app.tr("files.recovery.edit"), "files.recovery");
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (button(app, "files.recovery.discard", "###recovery_discard", "files.recovery.discard")) {
    files.recovery_offer.reset();
    clear_recovery();
    files.recovery_on_disk = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void draw_message(AppState& app) {
  DocumentState& files = app.files;
  if (files.request_message_popup) {
    files.request_message_popup = false;
    ImGui::OpenPopup(kMessagePopup);
  }
  if (!files.message.empty()) app.widgets.set_fact("file_message", files.message);
  begin_centred(32.0f);
  if (!ImGui::BeginPopupModal(label(app, "files.message.title", kMessagePopup).c_str(), nullptr,
                              ImGuiWindowFlags_NoSavedSettings))
    return;
  record_popup(app, "files.message");
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.45f, 1.0f));
  ImGui::TextWrapped("%s", files.message.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  if (button(app, "files.ok", "###message_ok", "files.message.ok") ||
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    files.message.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void use_dialog_result(AppState& app, const std::string& path) {
  FileDialog& dialog = app.files.dialog;
  switch (dialog.mode) {
    case FileDialogMode::Open:
      dialog.request_close = true;
      request_open(app, path);
      break;
    case FileDialogMode::SaveAs:
      // A failed save keeps the dialog open with the reason, to pick another place.
      if (save_document(app, path)) {
        dialog.request_close = true;
        continue_pending(app);
      } else {
        dialog.error = app.files.message;
        app.files.request_message_popup = false;
      }
      break;
    case FileDialogMode::Import:
      import_into_session(app, path);
      if (dialog.error.empty()) dialog.request_close = true;
      break;
  }
  // Kept in the settings: the next run's dialog starts here.
  if (dialog.request_close) app.files.settings.last_folder = std::filesystem::path(path).parent_path().string();
}

}  // namespace

void draw_file_menu_items(AppState& app) {
  if (ImGui::MenuItem(label(app, "files.menu.open", "###open").c_str(), "Ctrl+O"))
    show_dialog(app, FileDialogMode::Open);
  app.widgets.add_last_item("files.menu.open");
  if (ImGui::BeginMenu(label(app, "files.menu.recent", "###recent").c_str(),
                       app.files.user_files && !app.files.settings.recent_files.empty())) {
    // Copied: opening one reorders the list.
    const std::vector<std::string> recent = app.files.settings.recent_files;
    for (size_t i = 0; i < recent.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::MenuItem(recent[i].c_str())) request_open(app, recent[i]);
      app.widgets.add_last_item("files.recent." + std::to_string(i));
      ImGui::PopID();
    }
    ImGui::EndMenu();
  }
  app.widgets.add_last_item("files.menu.recent");
  if (ImGui::MenuItem(label(app, "files.menu.save", "###save").c_str(), "Ctrl+S")) save_or_ask_path(app);
  if (ImGui::MenuItem(label(app, "files.menu.save_as", "###save_as").c_str(), "Ctrl+Shift+S"))
    show_dialog(app, FileDialogMode::SaveAs);
  ImGui::Separator();
  if (ImGui::MenuItem(label(app, "files.menu.import", "###import").c_str()))
    show_dialog(app, FileDialogMode::Import);
  app.widgets.add_last_item("files.menu.import");
  ImGui::Separator();
}

void handle_file_shortcuts(AppState& app) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || !io.KeyCtrl) return;
  // S and O are not among ImGui 1.86's named keys; GLFW's key codes are 'S' and 'O'.
  if (ImGui::IsKeyPressed('S', false)) {
    if (io.KeyShift) show_dialog(app, FileDialogMode::SaveAs);
    else save_or_ask_path(app);
  }
  if (ImGui::IsKeyPressed('O', false)) show_dialog(app, FileDialogMode::Open);
}

void draw_file_windows(AppState& app) {
  // Dropped files: a session opens (asking first), a matrix goes to the import dialog.
  for (const std::string& path : app.files.dropped) {
    if (is_matrix_file(path)) {
      show_dialog(app, FileDialogMode::Import);
      app.files.dialog.folder = std::filesystem::path(path).parent_path().string();
      app.files.dialog.name = std::filesystem::path(path).filename().string();
    } else {
      request_open(app, path);
    }
  }
  app.files.dropped.clear();

  if (auto path = draw_file_dialog(app)) use_dialog_result(app, *path);
  draw_confirm(app);
  draw_recovery(app);
  draw_message(app);
  app.widgets.set_fact("modified", app.model.modified() ? "yes" : "no");
  app.widgets.set_fact("document", app.files.path);
  std::string notices = app.start_problem ? app.i18n.error_message(*app.start_problem) + "\n" : "";
  for (const auto& notice : app.notices) notices += app.i18n.message(notice) + "\n";
  app.widgets.set_fact("notices", notices);
}

}  // namespace al::gui
