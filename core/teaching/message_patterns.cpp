#include "teaching/message_patterns.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include "teaching/stage_text.hpp"

namespace al {

namespace {
struct CompiledPattern {
  std::regex expression;
  std::vector<std::string> names;  // the placeholders, in order
  size_t literal_length = 0;       // characters outside the placeholders: more = more specific
};

// "the custom scale {x} is ..." -> ^the custom scale (.+?) is \.\.\.$, with the placeholder names in order.
CompiledPattern compile(const std::string& pattern) {
  static const std::regex placeholder("\\{([a-z_]+)\\}");
  static const std::regex special("[.^$|()\\[\\]{}*+?\\\\]");
  CompiledPattern compiled;
  std::string expression = "^";
  auto literal = [&](const std::string& text) {
    expression += std::regex_replace(text, special, "\\$&");
    compiled.literal_length += text.size();
  };
  size_t at = 0;
  for (auto it = std::sregex_iterator(pattern.begin(), pattern.end(), placeholder); it != std::sregex_iterator(); ++it) {
    literal(pattern.substr(at, static_cast<size_t>(it->position()) - at));
    // A {path} or {name} never holds ": ", so "{file}: {message}" splits the file off first.
    const std::string name = (*it)[1];
    expression += name == "path" || name == "name" ? "((?:(?!: ).)+?)" : "(.+?)";
    compiled.names.push_back(name);
    at = static_cast<size_t>(it->position() + it->length());
  }
  literal(pattern.substr(at));
  compiled.expression = std::regex(expression + "$");
  return compiled;
}

// Compiling is far slower than matching, and the app asks for the same patterns every frame.
const CompiledPattern& compiled(const std::string& pattern) {
  thread_local std::map<std::string, CompiledPattern> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, compile(pattern)).first;
  return it->second;
}

// A message nests at most this deep: "{file}: {message}" (a session file, its input, a CSV
// file it names) → a message → a phrase in it.
constexpr int kMaxDepth = 5;

std::optional<std::string> translate(
    const std::string& message, const std::vector<std::pair<std::string, std::string>>& english_patterns,
    const std::function<std::optional<std::string>(const std::string& key)>& translated, int depth) {
  struct Candidate {
    const std::string* key;
    const CompiledPattern* pattern;
    std::smatch match;
  };
  std::vector<Candidate> candidates;
  for (const auto& [key, pattern] : english_patterns) {
    const CompiledPattern& c = compiled(pattern);
    std::smatch match;
    if (std::regex_match(message, match, c.expression)) candidates.push_back({&key, &c, match});
  }
  // The most specific pattern first: "… unexpected end of input …" before "… {why}".
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.pattern->literal_length > b.pattern->literal_length;
  });
  for (const Candidate& candidate : candidates) {
    auto text = translated(*candidate.key);
    if (!text) continue;
    TextParams params;
    bool complete = true;
    for (size_t i = 0; i < candidate.pattern->names.size() && complete; ++i) {
      const std::string& name = candidate.pattern->names[i];
      std::string value = candidate.match[i + 1].str();
      // A value may itself be a phrase with a translation ("a positive whole number"); one
      // named message… must have one, so a "{file}: {message}" never passes English on.
      auto inner = depth + 1 < kMaxDepth ? translate(value, english_patterns, translated, depth + 1) : std::nullopt;
      if (inner) value = *inner;
      else if (name.rfind("message", 0) == 0) complete = false;
      params.push_back({name, value});
    }
    if (complete && substitute(&*text, params)) return text;
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> translate_message(
    const std::string& message, const std::vector<std::pair<std::string, std::string>>& english_patterns,
    const std::function<std::optional<std::string>(const std::string& key)>& translated) {
  return translate(message, english_patterns, translated, 0);
}

}  // namespace al
