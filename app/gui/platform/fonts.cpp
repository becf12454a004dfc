#include "platform/fonts.hpp"

#include <fontconfig/fontconfig.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <optional>
#include <set>

namespace al::gui {

const char* formula_symbols() {
  return "√ᵀΣαβ∞≤≥⊙×÷→←·−±∈′◀▶■₀₁₂₃₄₅₆₇₈₉ᵢⱼₖₗₘₙₚₛₜ⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿ…";
}

namespace {

constexpr ImWchar kQuotesFirst = 0x2018, kQuotesLast = 0x201F;  // ‘ ’ ‚ ‛ “ ” „ ‟

struct FontFile {
  std::string path;
  int index = 0;  // face inside a .ttc collection
};

// The best match for `family`, only if fontconfig really found that family
// (it otherwise substitutes something else, which would lack our glyphs).
std::optional<FontFile> find_font(const char* family) {
  if (!FcInit()) return std::nullopt;
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(family));
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);
  FcResult result = FcResultNoMatch;
  FcPattern* match = FcFontMatch(nullptr, pattern, &result);
  std::optional<FontFile> found;
  FcChar8 *file = nullptr, *matched_family = nullptr;
  int index = 0;
  if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch &&
      FcPatternGetString(match, FC_FAMILY, 0, &matched_family) == FcResultMatch &&
      std::string(reinterpret_cast<char*>(matched_family)) == family) {
    FcPatternGetInteger(match, FC_INDEX, 0, &index);
    found = FontFile{reinterpret_cast<char*>(file), index};
  }
  if (match) FcPatternDestroy(match);
  FcPatternDestroy(pattern);
  return found;
}

std::set<unsigned> code_points(const std::vector<std::string>& texts) {
  std::set<unsigned> points;
  for (const auto& text : texts) {
    const char* p = text.c_str();
    const char* end = p + text.size();
    while (p < end) {
      unsigned int c = 0;
      p += ImTextCharFromUtf8(&c, p, end);
      if (c == 0) break;
      points.insert(c);
    }
  }
  return points;
}

}  // namespace

Fonts::Fonts() : atlas_(std::make_unique<ImFontAtlas>()) {}

Fonts::~Fonts() = default;

FontReport Fonts::load(float pixel_size, const std::vector<std::string>& texts) {
  FontReport report;
  ImFontAtlas& atlas = *atlas_;
  atlas.Clear();
  std::vector<std::string> all_texts = texts;
  all_texts.push_back(formula_symbols());

  auto cjk = find_font("Noto Sans CJK SC");
  if (cjk) {
    // Latin-1, Greek, the math and arrow blocks, the common Chinese set, and
    // every character our own strings use (rare hanzi in explanations).
    static const ImWchar kBaseRanges[] = {
        0x0020, 0x00FF, 0x0370, 0x03FF, 0x2000, 0x206F, 0x2070, 0x209F, 0x2100, 0x214F,
        0x2190, 0x21FF, 0x2200, 0x22FF, 0x2500, 0x25FF, 0x3000, 0x303F, 0xFF00, 0xFFEF, 0};
    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(kBaseRanges);
    builder.AddRanges(atlas.GetGlyphRangesChineseSimplifiedCommon());
    for (const auto& text : all_texts) builder.AddText(text.c_str());
    builder.AddText(session_text_.c_str());
    // Noto CJK SC draws quotation marks full width, a wide gap around every quoted word of an
    // English sentence: they come from DejaVu Sans below, proportional in both languages.
    for (ImWchar c = kQuotesFirst; c <= kQuotesLast; ++c) builder.UsedChars[c >> 5] &= ~(1u << (c & 31));
    ranges_.clear();
    builder.BuildRanges(&ranges_);

    ImFontConfig config;
    config.FontNo = cjk->index;
    config.OversampleH = 1;  // CJK atlases are large; horizontal oversampling doubles them
    atlas.AddFontFromFileTTF(cjk->path.c_str(), pixel_size, &config, ranges_.Data);
    report.cjk = true;

    // Noto CJK has no ᵀ nor subscript letters: take them (and nothing it has)
    // from DejaVu Sans, with what a token label uses that it lacks (accented Greek: έ).
    // Merged glyphs never replace ones already present.
    if (auto dejavu = find_font("DejaVu Sans")) {
      static const ImWchar kSymbolRanges[] = {0x1D00, 0x1DBF, kQuotesFirst, kQuotesLast, 0x2070, 0x209F, 0x2C7C, 0x2C7C, 0};
      ImFontGlyphRangesBuilder merged;
      merged.AddRanges(kSymbolRanges);
      merged.AddText(session_text_.c_str());
      merge_ranges_.clear();
      merged.BuildRanges(&merge_ranges_);
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.FontNo = dejavu->index;
      atlas.AddFontFromFileTTF(dejavu->path.c_str(), pixel_size, &merge, merge_ranges_.Data);
    } else {
      report.messages.push_back("DejaVu Sans not found: some formula symbols may show as '?'");
    }
  } else {
    report.messages.push_back(
        "Noto Sans CJK SC not found (Debian package fonts-noto-cjk): Chinese and formula "
        "symbols cannot be shown; using ImGui's built-in font");
    ImFontConfig config;
    config.SizePixels = pixel_size;
    atlas.AddFontDefault(&config);
  }
  atlas.Build();

  ImFont* font = atlas.Fonts[0];
  auto drawable = [&](unsigned c) { return c < 0x20 || c == 0x3000 || font->FindGlyphNoFallback(static_cast<ImWchar>(c)); };
  for (unsigned c : code_points(all_texts))
    if (!drawable(c)) report.missing_glyphs.push_back(c);
  for (unsigned c : code_points({session_text_}))
    if (!drawable(c)) report.missing_session_glyphs.push_back(c);
  return report;
}

bool Fonts::take_session_text(const std::string& text) {
  // Before the first build every character is asked for; after it, only those the atlas lacks.
  const ImFont* font = atlas_->Fonts.empty() ? nullptr : atlas_->Fonts[0];
  const std::set<unsigned> asked = code_points({session_text_});
  bool added = false;
  const char* p = text.c_str();
  const char* end = p + text.size();
  while (p < end) {
    unsigned int c = 0;
    const char* next = p + ImTextCharFromUtf8(&c, p, end);
    if (c == 0) break;
    // Past 16 bits (emoji) Debian's ImGui has no glyph code: asking would only rebuild in vain.
    if (c >= 0x20 && c <= 0xFFFF && c != IM_UNICODE_CODEPOINT_INVALID && !asked.count(c) &&
        !(font && font->FindGlyphNoFallback(static_cast<ImWchar>(c)))) {
      session_text_.append(p, next);
      added = true;
    }
    p = next;
  }
  return added;
}

}  // namespace al::gui
