// Menu bar (File, Edit with undo/redo, Language) and the shortcuts that work
// everywhere: Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y, ←/→ between steps, Ctrl+Q.
#include "panels/panels.hpp"
#include "panels/presentation.hpp"
#include "state/documents.hpp"

namespace al::gui {

namespace {
bool key_pressed(ImGuiKey key) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), false); }
}  // namespace

void handle_shortcuts(AppState& app) {
  const ImGuiIO& io = ImGui::GetIO();
  // A text field has its own undo and cursor keys.
  if (io.WantTextInput) return;
  handle_presentation_keys(app);
  if (io.KeyCtrl) {
    if (key_pressed(ImGuiKey_Z)) {
      if (io.KeyShift) app.model.redo();
      else app.model.undo();
    }
    if (key_pressed(ImGuiKey_Y)) app.model.redo();
    // Q is not among ImGui 1.86's named keys; GLFW's key code for it is 'Q'.
    if (ImGui::IsKeyPressed('Q', false)) request_quit(app);
    return;
  }
  if (ImGui::IsAnyItemActive()) return;
  if (key_pressed(ImGuiKey_LeftArrow)) step_by(app, -1);
  if (key_pressed(ImGuiKey_RightArrow)) step_by(app, 1);
}

void draw_menu_bar(AppState& app) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu((std::string(app.tr("menu.file")) + "###file").c_str())) {
    draw_file_menu_items(app);
    draw_export_menu_items(app);
    if (ImGui::MenuItem((std::string(app.tr("menu.quit")) + "###quit").c_str(), "Ctrl+Q")) request_quit(app);
    ImGui::EndMenu();
  }
  app.widgets.add_last_item("menu.file");
  draw_examples_menu(app);
  if (ImGui::BeginMenu((std::string(app.tr("menu.edit")) + "###edit").c_str())) {
    // Undo labels are i18n keys ("edit.scale") or text translated already, which tr() passes through.
    const std::string undo = app.model.can_undo()
        ? app.i18n.format("menu.undo_label", {{"what", app.tr(app.model.undo_label())}})
        : std::string(app.tr("menu.undo"));
    if (ImGui::MenuItem((undo + "###undo").c_str(), "Ctrl+Z", false, app.model.can_undo())) app.model.undo();
    const std::string redo = app.model.can_redo()
        ? app.i18n.format("menu.redo_label", {{"what", app.tr(app.model.redo_label())}})
        : std::string(app.tr("menu.redo"));
    if (ImGui::MenuItem((redo + "###redo").c_str(), "Ctrl+Shift+Z", false, app.model.can_redo())) app.model.redo();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu((std::string(app.tr("menu.labs")) + "###labs").c_str())) {
    ImGui::MenuItem((std::string(app.tr("flash_lab.title")) + "###labs_flash").c_str(), nullptr, &app.flash_lab.open);
    ImGui::MenuItem((std::string(app.tr("linear_lab.title")) + "###labs_linear").c_str(), nullptr, &app.linear_lab.open);
    ImGui::MenuItem((std::string(app.tr("lessons.title")) + "###labs_lessons").c_str(), nullptr, &app.lessons.open);
    ImGui::MenuItem((std::string(app.tr("labs.sqrt_dk.title")) + "###labs_sqrt_dk").c_str(), nullptr, &app.labs.sqrt_dk.open);
    ImGui::MenuItem((std::string(app.tr("labs.mask_fill.title")) + "###labs_mask_fill").c_str(), nullptr, &app.labs.mask_fill.open);
    ImGui::MenuItem((std::string(app.tr("labs.stability.title")) + "###labs_stability").c_str(), nullptr, &app.labs.stability.open);
    ImGui::MenuItem((std::string(app.tr("labs.fused.title")) + "###labs_fused").c_str(), nullptr, &app.labs.fused.open);
    ImGui::MenuItem((std::string(app.tr("labs.quiz.title")) + "###labs_quiz").c_str(), nullptr, &app.labs.quiz.open);
    ImGui::MenuItem((std::string(app.tr("labs.decode.title")) + "###labs_decode").c_str(), nullptr, &app.labs.decode.open);
    ImGui::MenuItem((std::string(app.tr("labs.rope.title")) + "###labs_rope").c_str(), nullptr, &app.labs.rope.open);
    ImGui::MenuItem((std::string(app.tr("training.title")) + "###labs_training").c_str(), nullptr,
                    &app.training_lab.open);
    ImGui::EndMenu();
  }
  app.widgets.add_last_item("menu.labs");
  draw_view_menu(app);
  draw_presentation_menu(app);
  if (ImGui::BeginMenu((std::string(app.tr("menu.language")) + "###language").c_str())) {
    // Each language names itself, so a learner who cannot read the current one finds theirs.
    if (ImGui::MenuItem("English", nullptr, app.i18n.language() == Language::En))
      app.i18n.set_language(Language::En);
    if (ImGui::MenuItem("简体中文", nullptr, app.i18n.language() == Language::Zh))
      app.i18n.set_language(Language::Zh);
    ImGui::EndMenu();
  }
  app.widgets.add_last_item("menu.language");
  // Quick switch, always visible.
  ImGui::SameLine(ImGui::GetWindowWidth() - 7.0f * ImGui::GetFontSize());
  if (ImGui::SmallButton(app.i18n.language() == Language::En ? "中文###lang_toggle" : "English###lang_toggle"))
    app.i18n.set_language(app.i18n.language() == Language::En ? Language::Zh : Language::En);
  app.widgets.add_last_item("language.toggle");
  ImGui::EndMenuBar();
}

}  // namespace al::gui
