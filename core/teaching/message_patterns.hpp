#pragma once
// Core errors carry an English message; most have no per-code translated detail.
// A translation table may hold "error.pattern.<name>" entries: in English the
// message with {name} where a value stands, in the other language the same
// sentence translated with the same {name}s. translate_message() finds the
// English pattern that matches the whole message and fills the translation with
// the values it matched, so a learner reads a Chinese message with its numbers.
// When several patterns match, the most specific (most text outside placeholders)
// wins. A matched value that is itself a pattern's whole text is translated too
// ("{file}: {message}", "{path} must be {expected}, but it is {got}."); a value
// whose placeholder name starts with "message" must translate, or the pattern fails.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace al {

// (key, English pattern) pairs, and the translated template of a key.
std::optional<std::string> translate_message(
    const std::string& message, const std::vector<std::pair<std::string, std::string>>& english_patterns,
    const std::function<std::optional<std::string>(const std::string& key)>& translated);

}  // namespace al
