#pragma once
// Wrapped text for translated prose and formulas. ImGui 1.86's TextWrapped
// breaks only at spaces and, for a run without spaces (all of Chinese), cuts
// anywhere, even inside "0.2384". These break lines with core/teaching/text_breaks.hpp
// (between CJK characters and at spaces, never inside a number or formula),
// measured with the current font, and draw them as one text item.
#include <imgui.h>

#include <string>
#include <string_view>

namespace al::gui {

// Formulas in the explanations and lessons, apart from the prose around them.
const ImVec4 kFormulaColour = ImVec4(1.0f, 0.85f, 0.45f, 1.0f);

// Draws `text` wrapped at `width` pixels (≤ 0: the content region's width from
// the cursor) and returns the lines as drawn, joined by "\n".
std::string wrapped_text(std::string_view text, float width = 0.0f);
// The same in a colour (the formula lines' accent, a warning's red).
std::string wrapped_text_colored(const ImVec4& colour, std::string_view text, float width = 0.0f);
// The same in the dimmed colour of hints (ImGui::TextDisabled's).
std::string wrapped_text_disabled(std::string_view text, float width = 0.0f);

}  // namespace al::gui
