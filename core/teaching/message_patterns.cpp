#include "teaching/message_patterns.hpp"

#include <regex>

#include "teaching/stage_text.hpp"

namespace al {

namespace {
// "the custom scale {x} is ..." -> ^the custom scale (.+?) is \.\.\.$, with the placeholder names in order.
std::regex pattern_regex(const std::string& pattern, std::vector<std::string>* names) {
  static const std::regex placeholder("\\{([a-z_]+)\\}");
  static const std::regex special("[.^$|()\\[\\]{}*+?\\\\]");
  std::string expression = "^";
  auto literal = [&](const std::string& text) { expression += std::regex_replace(text, special, "\\$&"); };
  size_t at = 0;
  for (auto it = std::sregex_iterator(pattern.begin(), pattern.end(), placeholder); it != std::sregex_iterator(); ++it) {
    literal(pattern.substr(at, static_cast<size_t>(it->position()) - at));
    expression += "(.+?)";
    names->push_back((*it)[1]);
    at = static_cast<size_t>(it->position() + it->length());
  }
  literal(pattern.substr(at));
  return std::regex(expression + "$");
}
}  // namespace

std::optional<std::string> translate_message(
    const std::string& message, const std::vector<std::pair<std::string, std::string>>& english_patterns,
    const std::function<std::optional<std::string>(const std::string& key)>& translated) {
  for (const auto& [key, pattern] : english_patterns) {
    std::vector<std::string> names;
    std::smatch match;
    if (!std::regex_match(message, match, pattern_regex(pattern, &names))) continue;
    auto text = translated(key);
    if (!text) continue;
    TextParams params;
    for (size_t i = 0; i < names.size(); ++i) params.push_back({names[i], match[i + 1].str()});
    if (substitute(&*text, params)) return text;
  }
  return std::nullopt;
}

}  // namespace al
