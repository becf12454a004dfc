#include "teaching/text_breaks.hpp"

namespace al {

namespace {

// One code point and where it sits in the text.
struct CodePoint {
  char32_t value = 0;
  size_t begin = 0, end = 0;
};

// Decodes the code point at `at`; a byte that starts no valid sequence counts
// as one character of its own (it is drawn as one glyph, "?").
CodePoint decode(std::string_view text, size_t at) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(at);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 1;
  if (at + length > text.size()) length = 1;
  for (size_t k = 1; k < length; ++k)
    if ((byte(at + k) & 0xC0) != 0x80) length = 1;
  char32_t value = length == 1 ? lead : lead & (0xFF >> (length + 1));
  for (size_t k = 1; k < length; ++k) value = (value << 6) | (byte(at + k) & 0x3F);
  return {value, at, at + length};
}

bool is_space(char32_t c) { return c == ' ' || c == '\t'; }

// Scripts written without spaces between words (and their punctuation and
// full-width forms), where a line may break between any two characters.
bool is_cjk(char32_t c) {
  return (c >= 0x2E80 && c <= 0x9FFF) ||    // radicals, CJK punctuation, kana, ideographs
         (c >= 0xAC00 && c <= 0xD7AF) ||    // Hangul
         (c >= 0xF900 && c <= 0xFAFF) ||    // compatibility ideographs
         (c >= 0xFE30 && c <= 0xFE4F) ||    // vertical forms
         (c >= 0xFF00 && c <= 0xFFEF) ||    // full-width forms ，：；（）
         (c >= 0x20000 && c <= 0x3FFFF);    // ideograph extensions
}

// Punctuation that closes: it stays on the line of what it follows.
bool no_break_before(char32_t c) {
  switch (c) {
    case ',': case '.': case ';': case ':': case '!': case '?': case ')': case ']': case '}': case '%':
    case 0x2019: case 0x201D: case 0x2026:                                  // ’ ” …
    case 0x3001: case 0x3002: case 0x3009: case 0x300B: case 0x300D: case 0x300F: case 0x3011:
    case 0x3015:                                                            // 、。〉》」』】〕
    case 0xFF01: case 0xFF09: case 0xFF0C: case 0xFF0E: case 0xFF1A: case 0xFF1B: case 0xFF1F:
    case 0xFF3D: case 0xFF5D:                                               // ！）,．：；？］｝
      return true;
    default:
      return false;
  }
}

// Punctuation that opens: it stays on the line of what follows it.
bool no_break_after(char32_t c) {
  switch (c) {
    case '(': case '[': case '{':
    case 0x2018: case 0x201C:                                               // ‘ “
    case 0x3008: case 0x300A: case 0x300C: case 0x300E: case 0x3010: case 0x3014:  // 〈《「『【〔
    case 0xFF08: case 0xFF3B: case 0xFF5B:                                  // （［｛
      return true;
    default:
      return false;
  }
}

// May a line end between these two visible characters (no space between)?
bool break_between(char32_t before, char32_t after) {
  if (no_break_before(after) || no_break_after(before)) return false;
  return is_cjk(before) || is_cjk(after);
}

// A piece the lines are made of: nothing inside [begin, content_end) may be
// split; the spaces [content_end, end) may hang at a line's end.
struct Segment {
  size_t begin = 0, content_end = 0, end = 0;
  bool newline_after = false;
};

std::vector<Segment> segments_of(std::string_view text) {
  std::vector<Segment> segments;
  size_t segment_begin = 0, spaces_begin = 0;
  bool in_spaces = false;
  char32_t previous = 0;  // the last visible character of this line, 0 after a space
  for (size_t at = 0; at < text.size();) {
    const CodePoint c = decode(text, at);
    at = c.end;
    if (c.value == '\n') {
      segments.push_back({segment_begin, in_spaces ? spaces_begin : c.begin, c.begin, true});
      segment_begin = c.end;
      in_spaces = false;
      previous = 0;
    } else if (is_space(c.value)) {
      if (!in_spaces) spaces_begin = c.begin;
      in_spaces = true;
      previous = 0;
    } else {
      if (in_spaces) {
        segments.push_back({segment_begin, spaces_begin, c.begin, false});
        segment_begin = c.begin;
        in_spaces = false;
      } else if (previous != 0 && break_between(previous, c.value)) {
        segments.push_back({segment_begin, c.begin, c.begin, false});
        segment_begin = c.begin;
      }
      previous = c.value;
    }
  }
  if (segment_begin < text.size())
    segments.push_back({segment_begin, in_spaces ? spaces_begin : text.size(), text.size(), false});
  return segments;
}

}  // namespace

std::vector<TextLine> break_lines(std::string_view text, float width, const MeasureText& measure) {
  std::vector<TextLine> lines;
  bool line_open = false;
  TextLine line;
  float line_width = 0;  // including the spaces after its last segment
  auto close_line = [&] {
    lines.push_back(line);
    line_open = false;
  };
  auto piece = [&](size_t begin, size_t end) { return text.substr(begin, end - begin); };

  for (const Segment& s : segments_of(text)) {
    const float content = measure(piece(s.begin, s.content_end));
    if (line_open && width > 0 && line_width + content > width) close_line();
    if (!line_open) {
      line = {s.begin, s.begin};
      line_width = 0;
      line_open = true;
    }
    if (line.begin == s.begin && width > 0 && content > width) {
      // Wider than a whole line on its own: cut it between characters.
      for (size_t at = s.begin; at < s.content_end;) {
        const CodePoint c = decode(text, at);
        at = c.end;
        const float advance = measure(piece(c.begin, c.end));
        if (line_width + advance > width && line.end > line.begin) {
          close_line();
          line = {c.begin, c.begin};
          line_width = 0;
          line_open = true;
        }
        line.end = c.end;
        line_width += advance;
      }
    } else {
      line_width += content;
    }
    line.end = s.content_end;
    line_width += measure(piece(s.content_end, s.end));
    if (s.newline_after) close_line();
  }
  if (line_open) close_line();
  return lines;
}

}  // namespace al
