#pragma once
// Line breaking for translated text shown at a given width. Chinese has no
// spaces, so a break must be allowed between CJK characters, but never inside
// a number like "0.2384", a name like "W_qkv" or a formula like "√d_k":
// - a line may end after a run of spaces (the spaces are not drawn at its end),
//   between two CJK characters, and between a CJK character and other text;
// - never before closing punctuation ("，。：；）、" ... and ASCII ",.;:!?)]}%"),
//   never after opening punctuation ("（《「" ... and ASCII "([{");
// - never inside a run of Latin letters, digits, decimal points, Greek or math
//   symbols, unless that run alone is wider than the line (then it is cut
//   between characters rather than running off);
// - "\n" always ends a line.
// The width is measured by a callback, so the GUI can use its font and tests a
// fixed advance per character.
#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

namespace al {

// One display line: bytes [begin, end) of the text (trailing spaces and the
// "\n" excluded).
struct TextLine {
  size_t begin = 0, end = 0;
};

// The width a piece of UTF-8 text takes when drawn.
using MeasureText = std::function<float(std::string_view)>;

// The lines of `text` (UTF-8) at most `width` wide. Empty text gives no lines;
// an empty line between two "\n" gives an empty TextLine.
std::vector<TextLine> break_lines(std::string_view text, float width, const MeasureText& measure);

}  // namespace al
