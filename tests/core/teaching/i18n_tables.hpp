#pragma once
// What the text tests share: the translation tables as the app merges them, and a
// finder of English words and of patterns in a text. Defined in i18n_tables.cpp: std::regex and
// the JSON parser compiled once, not in each of the four tests that include this (under the
// sanitizers each copy cost those files 20-50 s of compiling).
#include <map>
#include <string>
#include <vector>

#include "teaching/stage_text.hpp"

namespace al::testing {

using Table = std::map<std::string, std::string>;

// Every assets/i18n/*<lang>.json merged, as the app does.
Table load_table(const std::string& lang);
const Table& table(bool chinese);
// A lookup that fails the test on a key missing in that language.
TextLookup lookup_in(bool chinese);

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// English words in a Chinese text: identifiers a learner reads as code or math are allowed.
std::vector<std::string> english_words(const std::string& text);

// Regular expressions (ECMAScript), each compiled once: every match of `pattern` in `text` (or of
// its capture group `group`), whether there is one, and `text` without them.
std::vector<std::string> find_all(const std::string& text, const std::string& pattern, int group = 0);
bool found(const std::string& text, const std::string& pattern);
std::string erase_all(const std::string& text, const std::string& pattern);

}  // namespace al::testing
