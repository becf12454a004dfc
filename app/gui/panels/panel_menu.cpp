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
    // Each item's widget is named menu.labs.<id> for the tests that open a window as a learner does.
    const struct {
      const char* title_key;
      const char* id;
      bool* open;
    } labs[] = {{"flash_lab.title", "flash", &app.flash_lab.open},
                {"linear_lab.title", "linear", &app.linear_lab.open},
                {"lessons.title", "lessons", &app.lessons.open},
                {"labs.sqrt_dk.title", "sqrt_dk", &app.labs.sqrt_dk.open},
                {"labs.mask_fill.title", "mask_fill", &app.labs.mask_fill.open},
                {"labs.stability.title", "stability", &app.labs.stability.open},
                {"labs.fused.title", "fused", &app.labs.fused.open},
                {"labs.quiz.title", "quiz", &app.labs.quiz.open},
                {"labs.decode.title", "decode", &app.labs.decode.open},
                {"labs.rope.title", "rope", &app.labs.rope.open},
                {"training.title", "training", &app.training_lab.open}};
    for (const auto& lab : labs) {
      ImGui::MenuItem((std::string(app.tr(lab.title_key)) + "###labs_" + lab.id).c_str(), nullptr, lab.open);
      app.widgets.add_last_item(std::string("menu.labs.") + lab.id);
    }
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
