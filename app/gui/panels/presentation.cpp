#include "panels/presentation.hpp"

#include <epoxy/gl.h>  // before GLFW: GLFW must not pull in GL/gl.h
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>

#include "state/app_state.hpp"

namespace al::gui {

namespace {
// GLFW key codes (ImGui 1.86's GLFW backend indexes KeysDown by them; it names none of these).
constexpr int kKeyMinus = 45, kKeyZero = 48, kKeyEqual = 61, kKeyF11 = 300, kKeyPadMinus = 333, kKeyPadPlus = 334;
constexpr int kFontStep = 10;  // percent per key press

bool pressed(int key) { return ImGui::IsKeyPressed(key, false); }

// What was last applied, to compare the settings with.
struct Applied {
  int font_percent = 100;
  bool full_screen = false;
  int windowed[4] = {0, 0, 0, 0};  // x, y, width, height before full screen
  std::uint64_t session_revision = 0;  // the session whose token labels the fonts were checked for
};
Applied g_applied;
}  // namespace

void apply_style(float scale) {
  ImGuiStyle style;
  ImGui::StyleColorsDark(&style);
  // Opaque floating windows: the dark style's 6% see-through let the matrices
  // behind a lab or the Explain window show through its text.
  style.Colors[ImGuiCol_WindowBg].w = 1.0f;
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

void draw_presentation_menu(AppState& app) {
  const bool open = ImGui::BeginMenu((std::string(app.tr("presentation.menu")) + "###presentation").c_str());
  app.widgets.add_last_item("menu.presentation");
  if (!open) return;
  Settings& settings = app.files.settings;
  if (ImGui::MenuItem((std::string(app.tr("presentation.larger")) + "###larger").c_str(), "Ctrl+="))
    settings.font_percent = std::min(settings.font_percent + kFontStep, kMaxFontPercent);
  if (ImGui::MenuItem((std::string(app.tr("presentation.smaller")) + "###smaller").c_str(), "Ctrl+-"))
    settings.font_percent = std::max(settings.font_percent - kFontStep, kMinFontPercent);
  if (ImGui::MenuItem((std::string(app.tr("presentation.reset")) + "###reset_size").c_str(), "Ctrl+0"))
    settings.font_percent = 100;
  ImGui::TextDisabled("%s", app.i18n.format("presentation.size", {{"percent", std::to_string(settings.font_percent)}}).c_str());
  ImGui::MenuItem((std::string(app.tr("presentation.full_screen")) + "###full_screen").c_str(), "F11",
                  &settings.full_screen);
  ImGui::EndMenu();
}

void handle_presentation_keys(AppState& app) {
  Settings& settings = app.files.settings;
  const ImGuiIO& io = ImGui::GetIO();
  if (pressed(kKeyF11)) settings.full_screen = !settings.full_screen;
  if (!io.KeyCtrl) return;
  int percent = settings.font_percent;
  if (pressed(kKeyEqual) || pressed(kKeyPadPlus)) percent += kFontStep;
  if (pressed(kKeyMinus) || pressed(kKeyPadMinus)) percent -= kFontStep;
  if (pressed(kKeyZero)) percent = 100;
  settings.font_percent = std::clamp(percent, kMinFontPercent, kMaxFontPercent);
}

std::string token_labels(const Session& session) {
  std::string text;
  for (const auto* labels : {&session.tokens, &session.tokens_kv})
    for (const std::string& label : *labels) text += label;
  return text;
}

bool apply_presentation(AppState& app, GLFWwindow* window, float ui_scale, const std::vector<std::string>& texts) {
  const Settings& settings = app.files.settings;
  bool changed = false;
  // Token labels in characters no UI text has (rare hanzi, kana, Hangul, έ): the atlas again, with them.
  bool new_glyphs = false;
  if (app.model.revision() != g_applied.session_revision) {
    g_applied.session_revision = app.model.revision();
    new_glyphs = app.fonts.take_session_text(token_labels(app.model.session()));
  }
  if (settings.font_percent != g_applied.font_percent || new_glyphs) {
    const float scale = ui_scale * static_cast<float>(settings.font_percent) / 100.0f;
    const bool uploaded = ImGui::GetIO().Fonts->TexID != nullptr;  // else the first NewFrame uploads it
    app.font_report = app.fonts.load(17.0f * scale, texts);
    if (uploaded) {
      ImGui_ImplOpenGL3_DestroyFontsTexture();
      ImGui_ImplOpenGL3_CreateFontsTexture();
    }
    apply_style(scale);
    g_applied.font_percent = settings.font_percent;
    changed = true;
  }
  if (settings.full_screen != g_applied.full_screen && !app.options.screenshot) {
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
    int* w = g_applied.windowed;
    if (settings.full_screen && mode) {
      glfwGetWindowPos(window, &w[0], &w[1]);
      glfwGetWindowSize(window, &w[2], &w[3]);
      glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    } else if (!settings.full_screen && w[2] > 0) {
      glfwSetWindowMonitor(window, nullptr, w[0], w[1], w[2], w[3], 0);
    }
    g_applied.full_screen = settings.full_screen;
    changed = true;
  }
  return changed;
}

}  // namespace al::gui
