#include "widgets/text_wrap.hpp"

#include <cfloat>

#include "teaching/text_breaks.hpp"

namespace al::gui {

std::string wrapped_text(std::string_view text, float width) {
  if (width <= 0.0f) width = ImGui::GetContentRegionAvail().x;
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  // Unrounded advances (ImGui::CalcTextSize rounds every piece up).
  auto measure = [&](std::string_view piece) {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, piece.data(), piece.data() + piece.size()).x;
  };
  std::string drawn;
  for (const TextLine& line : break_lines(text, width, measure)) {
    if (!drawn.empty()) drawn += '\n';
    drawn.append(text.substr(line.begin, line.end - line.begin));
  }
  // The lines already fit: no second wrapping by an outer PushTextWrapPos.
  ImGui::PushTextWrapPos(-1.0f);
  ImGui::TextUnformatted(drawn.data(), drawn.data() + drawn.size());
  ImGui::PopTextWrapPos();
  return drawn;
}

std::string wrapped_text_colored(const ImVec4& colour, std::string_view text, float width) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  std::string drawn = wrapped_text(text, width);
  ImGui::PopStyleColor();
  return drawn;
}

std::string wrapped_text_disabled(std::string_view text, float width) {
  return wrapped_text_colored(ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled), text, width);
}

}  // namespace al::gui
