#include "platform/i18n.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "platform/assets.hpp"
#include "teaching/message_patterns.hpp"

namespace al::gui {

const char* language_code(Language language) { return language == Language::Zh ? "zh" : "en"; }

bool parse_language(const std::string& code, Language* out) {
  if (code == "en") *out = Language::En;
  else if (code == "zh") *out = Language::Zh;
  else return false;
  return true;
}

Language language_from_environment() {
  for (const char* variable : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* value = std::getenv(variable);
    if (value && *value) return std::string(value).rfind("zh", 0) == 0 ? Language::Zh : Language::En;
  }
  return Language::En;
}

void I18n::load(std::vector<std::string>* warnings) {
  translated_messages_.clear();
  // Each area of the app keeps its strings in its own pair of files
  // (assets/i18n/en.json, assets/i18n/labs.en.json, ...), merged here.
  for (Language language : {Language::En, Language::Zh}) {
    const std::string suffix = std::string(language_code(language)) + ".json";
    for (const auto& [name, embedded_text] : embedded_assets()) {
      const bool translation = name.rfind("assets/i18n/", 0) == 0 && name.size() >= suffix.size() &&
                               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (!translation) continue;
      auto text = read_asset(name);
      auto json = nlohmann::json::parse(text ? *text : embedded_text, nullptr, /*allow_exceptions=*/false);
      if (!json.is_object()) {
        warnings->push_back("malformed translation file " + name);
        continue;
      }
      auto& table = tables_[static_cast<int>(language)];
      for (auto& [key, value] : json.items())
        if (value.is_string()) table[key] = value.get<std::string>();
    }
  }
}

const char* I18n::tr(const std::string& key) const {
  for (Language language : {language_, Language::En}) {
    const auto& table = tables_[static_cast<int>(language)];
    auto it = table.find(key);
    if (it != table.end()) return it->second.c_str();
  }
  // An untranslated key shows itself, which is easy to spot and never crashes.
  static thread_local std::string missing;
  missing = key;
  return missing.c_str();
}

std::string I18n::format(const std::string& key, const Params& params) const {
  std::string text = tr(key);
  substitute(&text, params);
  return text;
}

std::string I18n::error_message(const Error& error) const {
  const std::string code = error_code_name(error.code);
  std::string title = tr("error." + code);
  if (language_ == Language::En) return title + ": " + error.message;
  const auto& table = tables_[static_cast<int>(language_)];
  auto detail = table.find("error." + code + ".detail");
  if (detail != table.end()) {
    std::string text = detail->second;
    if (substitute(&text, error.params)) return title + "：" + text;
  }
  // No detail for this code: a message pattern (assets/i18n/errors.*.json) with the message's values.
  const std::optional<std::string>& text = translated(error.message);
  return title + "：" + (text ? *text : error.message);
}

std::string I18n::message(const std::string& text) const {
  if (language_ == Language::En) return text;
  const std::optional<std::string>& found = translated(text);
  return found ? *found : text;
}

const std::optional<std::string>& I18n::translated(const std::string& message) const {
  const auto& table = tables_[static_cast<int>(language_)];
  auto cached = translated_messages_.find(message);
  if (cached == translated_messages_.end()) {
    std::vector<std::pair<std::string, std::string>> patterns;
    const auto& english = tables_[static_cast<int>(Language::En)];
    for (auto it = english.lower_bound("error.pattern."); it != english.end() && it->first.rfind("error.pattern.", 0) == 0;
         ++it)
      patterns.push_back(*it);
    if (translated_messages_.size() > 256) translated_messages_.clear();  // bounded: edits make new messages
    cached = translated_messages_
                 .emplace(message,
                          translate_message(message, patterns, [&](const std::string& key) -> std::optional<std::string> {
                            auto found = table.find(key);
                            return found == table.end() ? std::nullopt : std::optional<std::string>(found->second);
                          }))
                 .first;
  }
  return cached->second;
}

std::vector<std::string> I18n::all_strings() const {
  std::vector<std::string> strings;
  for (const auto& table : tables_)
    for (const auto& [key, value] : table) strings.push_back(value);
  return strings;
}

}  // namespace al::gui
