#pragma once
// Presentation mode for a projector: a text-size factor (Ctrl+= larger, Ctrl+-
// smaller, Ctrl+0 back to 100 %) and full screen (F11), both kept between runs
// in the settings (font_percent, full_screen).
#include <string>
#include <vector>

struct GLFWwindow;

namespace al {
struct Session;
}

namespace al::gui {

struct AppState;

constexpr int kMinFontPercent = 60, kMaxFontPercent = 300;

// The dark style with opaque windows, its sizes scaled by `scale`.
void apply_style(float scale);

// The Presentation menu: the same as the keys, for those who do not know them.
void draw_presentation_menu(AppState& app);

// Reads the keys above into the settings (called with the other shortcuts).
void handle_presentation_keys(AppState& app);

// Every token label of the session, one string: the font atlas gets their characters too.
std::string token_labels(const Session& session);

// Before a frame: rebuilds the fonts and the style when the text size changed or the session's
// token labels use a character the atlas lacks, enters or leaves full screen when that changed.
// `texts` are the UI's strings (the font atlas holds their glyphs). True when something changed.
bool apply_presentation(AppState& app, GLFWwindow* window, float ui_scale, const std::vector<std::string>& texts);

}  // namespace al::gui
