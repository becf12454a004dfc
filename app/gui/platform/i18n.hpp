#pragma once
// Every string the learner reads, in English and Simplified Chinese, from
// assets/i18n/<lang>.json (key -> string). Strings may hold {name} placeholders.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "teaching/stage_text.hpp"

namespace al::gui {

enum class Language { En, Zh };

const char* language_code(Language language);  // "en", "zh"
bool parse_language(const std::string& code, Language* out);
// From LC_ALL / LC_MESSAGES / LANG: Chinese when the first set one starts with "zh".
Language language_from_environment();

using Params = TextParams;

class I18n {
 public:
  // Loads both tables; problems (a missing or malformed file) go to `warnings`.
  void load(std::vector<std::string>* warnings);

  Language language() const { return language_; }
  void set_language(Language language) { language_ = language; }

  // The string of `key` in the current language, else English, else the key.
  const char* tr(const std::string& key) const;
  // tr() with each {name} replaced by its value.
  std::string format(const std::string& key, const Params& params) const;
  // tr() as a core TextLookup (for the step texts of core/stage_text.hpp).
  TextLookup lookup() const {
    return [this](const std::string& key) { return std::string(tr(key)); };
  }
  // A core error in the current language: a translated title, then the
  // translated detail when every placeholder it needs is among the error's
  // params, else the message translated by the error.pattern.* entries
  // (teaching/message_patterns.hpp), else the core's English message.
  std::string error_message(const Error& error) const;
  // A core sentence without an Error (a settings warning, a start-up notice) in
  // the current language: translated by the error.pattern.* entries when one
  // matches, else as it is.
  std::string message(const std::string& text) const;

  // Every string of every language (the font must hold all their glyphs).
  std::vector<std::string> all_strings() const;

 private:
  std::map<std::string, std::string> tables_[2];
  Language language_ = Language::En;
  // Translated messages by message: panels show the same error every frame.
  mutable std::map<std::string, std::optional<std::string>> translated_messages_;
  const std::optional<std::string>& translated(const std::string& message) const;
};

using al::substitute;  // {name} -> value (core/stage_text.hpp)

}  // namespace al::gui
