// Line breaking for display (core/teaching/text_breaks.hpp): Chinese breaks between
// characters, English at spaces, and a number, name or formula is never split
// across lines unless it is wider than a line on its own. Widths here are
// counted per character by a test font: one unit per code point, or two for a
// CJK character as most fonts draw them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "teaching/text_breaks.hpp"

namespace {

// Code points of UTF-8 text (the test's own decoder: lead bytes only).
std::vector<std::string> characters(std::string_view text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[at]);
    const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    out.emplace_back(text.substr(at, n));
    at += n;
  }
  return out;
}

float one_per_character(std::string_view text) { return static_cast<float>(characters(text).size()); }

// A wide character is any of 3 or 4 UTF-8 bytes here (CJK, full-width punctuation).
float cjk_double_width(std::string_view text) {
  float width = 0;
  for (const std::string& c : characters(text)) width += c.size() >= 3 ? 2.0f : 1.0f;
  return width;
}

std::vector<std::string> lines_of(std::string_view text, float width, const al::MeasureText& measure) {
  std::vector<std::string> out;
  for (const al::TextLine& line : al::break_lines(text, width, measure))
    out.emplace_back(text.substr(line.begin, line.end - line.begin));
  return out;
}

using Lines = std::vector<std::string>;

bool number_character(char c) { return (c >= '0' && c <= '9') || c == '.'; }

}  // namespace

TEST_CASE("break_lines: English breaks at spaces, which do not count at a line's end") {
  CHECK(lines_of("the quick brown fox", 10, one_per_character) == Lines{"the quick", "brown fox"});
  // "ab" + " " + "cd" is 5 wide, "ab" alone 2: the space hangs.
  CHECK(lines_of("ab cd", 2, one_per_character) == Lines{"ab", "cd"});
  CHECK(lines_of("ab cd", 5, one_per_character) == Lines{"ab cd"});
  CHECK(lines_of("", 10, one_per_character).empty());
}

TEST_CASE("break_lines: Chinese breaks between characters but keeps a number and its comma whole") {
  // 注意力权重为 | 0.2384， | 很 | 大。  (a break before "，" or "。" is not allowed)
  const std::string text = "注意力权重为0.2384，很大。";
  CHECK(lines_of(text, 8, one_per_character) == Lines{"注意力权重为", "0.2384，很", "大。"});
  // 注意力权重为 (6) + 0.2384， (7) > 10, and 0.2384， + 很 + 大。 is exactly 10.
  CHECK(lines_of(text, 10, one_per_character) == Lines{"注意力权重为", "0.2384，很大。"});
  CHECK(lines_of(text, 40, one_per_character) == Lines{text});
}

TEST_CASE("break_lines: opening punctuation stays with what follows, closing with what precedes") {
  // 例（α_ij）是 : no break after "（", none before "）".
  const std::string text = "例（α_ij）是";
  CHECK(lines_of(text, 6, one_per_character) == Lines{"例", "（α_ij）", "是"});
  // ASCII brackets after a CJK character: "重(x_1)" breaks only before "(".
  CHECK(lines_of("权重(x_1)", 5, one_per_character) == Lines{"权重", "(x_1)"});
}

TEST_CASE("break_lines: formulas between Chinese characters are not split") {
  const std::string text = "除以√d_k=1.414后";
  // Segments: 除 | 以 | √d_k=1.414 | 后 ; at width 6 the formula (10) is cut,
  // but at width 10 it stays on a line of its own.
  CHECK(lines_of(text, 10, one_per_character) == Lines{"除以", "√d_k=1.414", "后"});
  CHECK(lines_of(text, 12, one_per_character) == Lines{"除以√d_k=1.414", "后"});
}

TEST_CASE("break_lines: a run wider than a line is cut between characters rather than running off") {
  CHECK(lines_of("abcdefghij", 4, one_per_character) == Lines{"abcd", "efgh", "ij"});
  CHECK(lines_of("x abcdefghij y", 4, one_per_character) == Lines{"x", "abcd", "efgh", "ij y"});
}

TEST_CASE("break_lines: newlines end lines; an empty line stays") {
  CHECK(lines_of("a\n\nb", 10, one_per_character) == Lines{"a", "", "b"});
  CHECK(lines_of("a  \nb\n", 10, one_per_character) == Lines{"a", "b"});
  CHECK(lines_of("第一行\n第二行", 2, one_per_character) == Lines{"第一", "行", "第二", "行"});
}

TEST_CASE("break_lines: no line is wider than the width and no number is split (mixed text, CJK double width)") {
  const std::string text =
      "权重α_ij = 0.2384，其中缩放后的分数为-1.5e-05，掩码填充值为-1e9（不是-1e-20）。"
      "The row sum Σ_j exp(s_j − m) = 3.1416 is what every weight is divided by; 每一行的和都是1.0。";
  for (float width : {6.0f, 9.0f, 13.0f, 20.0f, 31.0f, 57.0f}) {
    CAPTURE(width);
    const auto lines = al::break_lines(text, width, cjk_double_width);
    REQUIRE(!lines.empty());
    std::string rejoined;
    for (size_t k = 0; k < lines.size(); ++k) {
      const std::string_view line = std::string_view(text).substr(lines[k].begin, lines[k].end - lines[k].begin);
      CAPTURE(line);
      // The longest unbreakable run here ("-1.5e-05，") is 10 wide: from width 13 on
      // nothing is cut, below it only runs wider than the line may be.
      if (width >= 13) CHECK(cjk_double_width(line) <= width);
      if (k + 1 < lines.size() && width >= 13) {
        const char last = text[lines[k].end - 1], next = text[lines[k + 1].begin];
        CHECK_FALSE((number_character(last) && number_character(next)));
      }
      rejoined += std::string(line);
    }
    // Every character is drawn, in order; only spaces at line ends are dropped.
    std::string without_spaces;
    for (char c : text)
      if (c != ' ') without_spaces += c;
    std::string rejoined_without_spaces;
    for (char c : rejoined)
      if (c != ' ') rejoined_without_spaces += c;
    CHECK(rejoined_without_spaces == without_spaces);
  }
}

TEST_CASE("break_lines: a width of zero or less wraps nothing (a collapsed window)") {
  CHECK(lines_of("注意力 attention", 0, one_per_character) == Lines{"注意力 attention"});
}
