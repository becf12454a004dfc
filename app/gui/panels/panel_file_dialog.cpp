// The file dialog, drawn with ImGui (no extra toolkit): the folder as an
// editable path, its sub-folders and the files of the kind asked for, a name
// field (a name, or a whole path typed in), and any problem shown inline.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "state/app_state.hpp"
#include "state/documents.hpp"
#include "editing/import.hpp"

namespace al::gui {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDialogPopup = "###file_dialog";
constexpr const char* kOverwritePopup = "###files_overwrite";

bool has_extension(const std::string& name, std::initializer_list<const char*> extensions) {
  std::string extension = fs::path(name).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), ::tolower);
  for (const char* wanted : extensions)
    if (extension == wanted) return true;
  return false;
}

bool shows_file(FileDialogMode mode, const std::string& name) {
  if (mode == FileDialogMode::Import) return has_extension(name, {".npy", ".csv", ".txt"});
  return has_extension(name, {".json"});
}

// Reads the folder once when it changes; an unreadable folder keeps the old
// listing away and says why.
void list_folder(AppState& app, FileDialog& dialog) {
  if (dialog.listed_folder == dialog.folder) return;
  dialog.listed_folder = dialog.folder;
  dialog.entries.clear();
  std::error_code ec;
  fs::directory_iterator it(dialog.folder, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // hidden files, and our own temporary files
    std::error_code type_ec;
    const bool is_folder = it->is_directory(type_ec);
    if (is_folder || shows_file(dialog.mode, name)) dialog.entries.push_back({name, is_folder});
  }
  if (ec) {
    dialog.error = app.i18n.format("files.dialog.unreadable", {{"folder", dialog.folder}, {"why", ec.message()}});
    dialog.entries.clear();
    return;
  }
  dialog.error.clear();
  std::sort(dialog.entries.begin(), dialog.entries.end(), [](const auto& a, const auto& b) {
    return a.is_folder != b.is_folder ? a.is_folder : a.name < b.name;
  });
}

void go_to_folder(FileDialog& dialog, const fs::path& folder) {
  dialog.folder = folder.lexically_normal().string();
  if (dialog.folder.size() > 1 && dialog.folder.back() == '/') dialog.folder.pop_back();
  dialog.listed_folder.clear();  // list again
}

// ImGui::InputText with a std::string (ImGui 1.86 has no std::string overload).
bool input_string(const char* label, std::string* text, ImGuiInputTextFlags flags = 0) {
  auto resize = [](ImGuiInputTextCallbackData* data) {
    if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
      auto* string = static_cast<std::string*>(data->UserData);
      string->resize(static_cast<size_t>(data->BufTextLen));
      data->Buf = string->data();
    }
    return 0;
  };
  return ImGui::InputText(label, text->data(), text->capacity() + 1, flags | ImGuiInputTextFlags_CallbackResize,
                          resize, text);
}

const char* title_key(FileDialogMode mode) {
  switch (mode) {
    case FileDialogMode::Open: return "files.dialog.open_title";
    case FileDialogMode::SaveAs: return "files.dialog.save_title";
    case FileDialogMode::Import: return "files.dialog.import_title";
  }
  return "";
}

const char* accept_key(FileDialogMode mode) {
  switch (mode) {
    case FileDialogMode::Open: return "files.dialog.open";
    case FileDialogMode::SaveAs: return "files.dialog.save";
    case FileDialogMode::Import: return "files.dialog.import";
  }
  return "";
}

// The inputs a matrix can be imported into, in the order a learner meets them.
constexpr InputId kImportTargets[] = {InputId::X,  InputId::XKv, InputId::WQ, InputId::WK, InputId::WV,
                                      InputId::WO, InputId::WQkv, InputId::BQ, InputId::BK, InputId::BV,
                                      InputId::BO, InputId::Q,   InputId::K,  InputId::V,  InputId::MaskCustom,
                                      InputId::KeyPadding};

bool is_weight(InputId id) {
  return id == InputId::WQ || id == InputId::WK || id == InputId::WV || id == InputId::WO || id == InputId::WQkv;
}

void draw_import_options(AppState& app, FileDialog& dialog) {
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("files.dialog.import_target")) + "###import_target").c_str(),
                        input_name(dialog.import_target))) {
    for (InputId id : kImportTargets) {
      ImGui::PushID(static_cast<int>(id));
      if (ImGui::Selectable(input_name(id), id == dialog.import_target)) dialog.import_target = id;
      app.widgets.add_last_item("files.dialog.import_target." + std::string(input_name(id)));
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("files.dialog.import_target");
  if (is_weight(dialog.import_target)) {
    ImGui::SameLine();
    ImGui::Checkbox((std::string(app.tr("files.dialog.torch_layout")) + "###torch_layout").c_str(),
                    &dialog.torch_layout);
    app.widgets.add_last_item("files.dialog.torch_layout");
  }
  const auto shape = expected_import_shape(app.model.session(), dialog.import_target);
  std::string shape_text;
  for (Index d : shape) shape_text += (shape_text.empty() ? "" : " × ") + std::to_string(d);
  ImGui::TextDisabled("%s", app.i18n.format("files.dialog.import_shape", {{"shape", shape_text}}).c_str());
}

// Save as onto an existing file asks first; nested in the dialog, so Cancel goes
// back to it to pick another name. Returns the path once the learner replaces it.
std::optional<std::string> draw_overwrite_question(AppState& app, FileDialog& dialog) {
  const float font = ImGui::GetFontSize();
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(30.0f * font, 0.0f), ImGuiCond_Appearing);
  const std::string title = std::string(app.tr("files.overwrite.title")) + kOverwritePopup;
  if (!ImGui::BeginPopupModal(title.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings)) return std::nullopt;
  app.widgets.add("files.overwrite", ImGui::GetWindowPos(),
                  ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                         ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  const fs::path path(dialog.overwrite_path);
  ImGui::TextWrapped("%s", app.i18n.format("files.overwrite.text", {{"name", path.filename().string()},
                                                                    {"folder", path.parent_path().string()}}).c_str());
  ImGui::Spacing();
  std::optional<std::string> replace;
  if (ImGui::Button((std::string(app.tr("files.overwrite.replace")) + "###overwrite_replace").c_str(),
                    ImVec2(7.0f * font, 0.0f)))
    replace = dialog.overwrite_path;
  app.widgets.add_last_item("files.overwrite.replace");
  ImGui::SameLine();
  const bool cancel =
      ImGui::Button((std::string(app.tr("files.cancel")) + "###overwrite_cancel").c_str(), ImVec2(7.0f * font, 0.0f));
  app.widgets.add_last_item("files.overwrite.cancel");
  if (replace || cancel || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    dialog.overwrite_path.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
  return replace;
}

}  // namespace

std::optional<std::string> draw_file_dialog(AppState& app) {
  FileDialog& dialog = app.files.dialog;
  const bool opening = dialog.request_open;
  if (opening) {
    dialog.request_open = false;
    dialog.error.clear();
    dialog.listed_folder.clear();
    ImGui::OpenPopup(kDialogPopup);
  }
  const float font = ImGui::GetFontSize();
  const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
  ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  const std::string title = std::string(app.tr(title_key(dialog.mode))) + kDialogPopup;
  // Grows and shrinks with its content (an error line, the import options);
  // the listing's width sets the dialog's.
  if (!ImGui::BeginPopupModal(title.c_str(), nullptr,
                              ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize))
    return std::nullopt;
  const float width = 40.0f * font;
  if (dialog.request_close) {
    dialog.request_close = false;
    ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    return std::nullopt;
  }
  app.widgets.add("files.dialog", ImGui::GetWindowPos(),
                  ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                         ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  list_folder(app, dialog);
  std::optional<std::string> accepted;
  bool accept = false;

  // Folder: "up", and the path itself, editable (Enter goes there).
  if (ImGui::Button((std::string(app.tr("files.dialog.up")) + "###up").c_str()))
    go_to_folder(dialog, fs::path(dialog.folder).parent_path());
  ImGui::SameLine();
  std::string folder = dialog.folder;
  ImGui::SetNextItemWidth(width - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
  if (input_string("###folder", &folder, ImGuiInputTextFlags_EnterReturnsTrue)) go_to_folder(dialog, folder);
  app.widgets.add_last_item("files.dialog.folder");
  app.widgets.set_fact("file_dialog_folder", dialog.folder);

  // The listing: folders first (click to enter), then the files of this kind.
  ImGui::BeginChild("listing", ImVec2(width, 14.0f * ImGui::GetTextLineHeightWithSpacing()), true);
  std::optional<fs::path> enter;
  for (size_t i = 0; i < dialog.entries.size(); ++i) {
    const auto& entry = dialog.entries[i];
    ImGui::PushID(static_cast<int>(i));
    const std::string label = entry.is_folder ? "[" + entry.name + "]" : entry.name;
    if (ImGui::Selectable(label.c_str(), !entry.is_folder && entry.name == dialog.name,
                          ImGuiSelectableFlags_AllowDoubleClick)) {
      if (entry.is_folder) enter = fs::path(dialog.folder) / entry.name;
      else {
        dialog.name = entry.name;
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) accept = true;
      }
    }
    ImGui::PopID();
  }
  if (dialog.entries.empty() && dialog.error.empty()) ImGui::TextDisabled("%s", app.tr("files.dialog.empty"));
  ImGui::EndChild();
  if (enter) go_to_folder(dialog, *enter);

  if (!dialog.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.35f, 1.0f));
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextUnformatted(dialog.error.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    app.widgets.add_last_item("files.dialog.error");
    app.widgets.set_fact("file_dialog_error", dialog.error);
  }

  if (dialog.mode == FileDialogMode::Import) draw_import_options(app, dialog);

  // Name (or a whole path): typing starts here when the dialog opens.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(app.tr("files.dialog.name"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(width - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
  if (opening) ImGui::SetKeyboardFocusHere();
  if (input_string("###name", &dialog.name, ImGuiInputTextFlags_EnterReturnsTrue)) accept = true;
  app.widgets.add_last_item("files.dialog.name");

  if (ImGui::Button((std::string(app.tr(accept_key(dialog.mode))) + "###accept").c_str(),
                    ImVec2(7.0f * font, 0.0f)))
    accept = true;
  app.widgets.add_last_item("files.dialog.accept");
  ImGui::SameLine();
  bool cancel = ImGui::Button((std::string(app.tr("files.cancel")) + "###cancel").c_str(), ImVec2(7.0f * font, 0.0f));
  app.widgets.add_last_item("files.dialog.cancel");
  // Escape answers the overwrite question when it is open, not the dialog.
  const bool asking = ImGui::IsPopupOpen(kOverwritePopup);
  if (!asking && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) cancel = true;

  if (accept && !dialog.name.empty()) {
    fs::path path = fs::path(dialog.name);
    if (path.is_relative()) path = fs::path(dialog.folder) / path;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      go_to_folder(dialog, path);  // a folder typed in: go there
      dialog.name.clear();
    } else {
      if (dialog.mode == FileDialogMode::SaveAs && path.extension().empty()) path += ".attention.json";
      if (dialog.mode == FileDialogMode::SaveAs && fs::exists(path, ec)) {
        dialog.overwrite_path = path.lexically_normal().string();
        ImGui::OpenPopup(kOverwritePopup);
      } else {
        accepted = path.lexically_normal().string();
      }
    }
  }
  if (auto replace = draw_overwrite_question(app, dialog)) accepted = replace;
  if (cancel) {
    app.files.pending = PendingAction::None;  // "Save" in the question was cancelled too
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
  return accepted;
}

}  // namespace al::gui
