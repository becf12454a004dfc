// The Examples menu, always in the menu bar: every built-in example with its
// one-line description (a click opens it), then the recent files, so nothing
// needs the command line.
#include <algorithm>
#include <cfloat>

#include "panels/panels.hpp"
#include "state/documents.hpp"
#include "io/session_io.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

void draw_examples_menu(AppState& app) {
  // The examples with their descriptions (and recent files) outgrow a laptop's window: the menu
  // stays below the menu bar and scrolls. Taller, ImGui pushed it up over its own button, and
  // releasing the click that opened it picked whichever example lay there.
  const float bar = ImGui::GetFrameHeight();
  ImGui::SetNextWindowSizeConstraints(ImVec2(0.0f, 0.0f),
                                      ImVec2(FLT_MAX, std::max(4.0f * bar, ImGui::GetMainViewport()->Size.y - 1.5f * bar)));
  const bool open = ImGui::BeginMenu((std::string(app.tr("examples.menu")) + "###examples").c_str());
  app.widgets.add_last_item("menu.examples");
  if (!open) return;
  static const std::vector<PresetInfo> presets = list_presets();  // compiled in: never changes
  const float font = ImGui::GetFontSize();
  for (const PresetInfo& preset : presets) {
    ImGui::PushID(preset.name.c_str());
    if (ImGui::MenuItem(preset.name.c_str(), nullptr, app.document == preset.name))
      open_example(app, preset.name, app.i18n.format("examples.edit_label", {{"name", preset.name}}));
    app.widgets.add_last_item("examples." + preset.name);
    ImGui::Indent(1.0f * font);
    const bool chinese = app.i18n.language() == Language::Zh && !preset.description_zh.empty();
    // Broken where Chinese may break (no line opens with "）" or "，"), not only at spaces.
    const std::string lines = wrapped_text_disabled(chinese ? preset.description_zh : preset.description, 35.0f * font);
    if (app.widgets.enabled()) app.widgets.set_fact("examples." + preset.name + ".description", lines);
    ImGui::Unindent(1.0f * font);
    ImGui::PopID();
  }
  const std::vector<std::string> recent = app.files.settings.recent_files;  // copied: opening reorders it
  if (app.files.user_files && !recent.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", app.tr("examples.recent"));
    for (size_t i = 0; i < recent.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::MenuItem(recent[i].c_str())) request_open(app, recent[i]);
      app.widgets.add_last_item("examples.recent." + std::to_string(i));
      ImGui::PopID();
    }
  }
  ImGui::EndMenu();
}

}  // namespace al::gui
