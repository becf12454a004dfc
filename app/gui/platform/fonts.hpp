#pragma once
// The UI font: Noto Sans CJK SC (Debian's fonts-noto-cjk, found through
// fontconfig) for Latin, Greek, math and Chinese, with DejaVu Sans merged in
// for the few formula glyphs Noto CJK lacks (ᵀ, subscripts). Without them the
// app falls back to ImGui's built-in font and says so.
#include <imgui.h>

#include <memory>
#include <string>
#include <vector>

namespace al::gui {

struct FontReport {
  bool cjk = false;                       // the Chinese font was found and loaded
  std::vector<std::string> messages;      // what was missing, for the status line
  std::vector<unsigned> missing_glyphs;   // code points of UI text the atlas cannot draw
  std::vector<unsigned> missing_session_glyphs;  // of the session's token labels (emoji: no font here)
};

class Fonts {
 public:
  Fonts();
  ~Fonts();

  // Puts the fonts in the atlas at `pixel_size`, in place of what it held, and builds it.
  // `texts` are every string the UI will show: their characters get glyphs. Needs no ImGui
  // context, so the window's start-up runs it on another thread while the GL context opens.
  FontReport load(float pixel_size, const std::vector<std::string>& texts);

  // Characters the session's own text (token labels) uses that no load asked for yet, kept for
  // the next load: true when there are some, and the atlas should be built again with them.
  bool take_session_text(const std::string& text);

  // The atlas ImGui's context shares (ImGui::CreateContext(atlas())): it must outlive the context.
  ImFontAtlas* atlas() { return atlas_.get(); }

 private:
  std::unique_ptr<ImFontAtlas> atlas_;
  // The atlas keeps pointers to the glyph ranges until it is destroyed.
  ImVector<ImWchar> ranges_, merge_ranges_;
  std::string session_text_;  // every character a session's tokens asked for, once each
};

// The formula symbols the stage explanations use (checked by the glyph test).
const char* formula_symbols();

}  // namespace al::gui
