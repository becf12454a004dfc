#include "widgets/floating_window.hpp"

#include <algorithm>

namespace al::gui {

float editors_column_width(float available_width) {
  return std::min(26.0f * ImGui::GetFontSize(), 0.34f * available_width);
}

void place_over_editors(float height_in_fonts, float top_in_fonts, bool from_bottom) {
  const float font = ImGui::GetFontSize();
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const ImVec2 work = viewport->WorkPos, screen = viewport->WorkSize;
  const float width = std::min(editors_column_width(screen.x) + 0.5f * font, screen.x - font);
  const float height = std::min(height_in_fonts * font, screen.y - 3.0f * font);
  float top = from_bottom ? screen.y - 2.0f * font - top_in_fonts * font - height : top_in_fonts * font;
  top = std::clamp(top, 1.5f * font, std::max(1.5f * font, screen.y - height - 1.5f * font));
  ImGui::SetNextWindowPos(ImVec2(work.x + 0.3f * font, work.y + top), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(width, height), ImGuiCond_FirstUseEver);
}

}  // namespace al::gui
