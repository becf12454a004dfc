// Parsing a session's text into JSON, with messages a learner can act on: where
// a key is repeated, that JSON has no NaN, that the file is empty or UTF-16.
#include <cctype>
#include <map>

#include "io/session_json.hpp"

namespace al::detail {

namespace {

struct TextPosition {
  size_t line = 1, column = 1;
};

// Line and column (from 1) of the byte at `offset`.
TextPosition position_of(const std::string& text, size_t offset) {
  TextPosition p;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string at(const TextPosition& p) {
  return "line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
}

// The message is the file's name followed by `rest`.
[[noreturn]] void refuse(const std::string& name, const std::string& rest,
                         std::vector<std::pair<std::string, std::string>> params = {}) {
  params.insert(params.begin(), {"file", name});
  throw LoadFailure{make_error(ErrorCode::ParseError, name + rest, std::move(params))};
}

// "s.json: line 3, column 7: <message>".
[[noreturn]] void refuse_at(const std::string& name, const TextPosition& p, const std::string& message) {
  refuse(name, ": " + at(p) + ": " + message, {{"line", std::to_string(p.line)}, {"column", std::to_string(p.column)}});
}

// Text no JSON parser reads, said plainly: nlohmann would quote an invisible byte.
void check_is_text(const std::string& text, const std::string& name) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const bool bom16 = text.size() >= 2 && ((byte(0) == 0xFF && byte(1) == 0xFE) || (byte(0) == 0xFE && byte(1) == 0xFF));
  // Without a byte-order mark, UTF-16 ASCII shows as every other byte NUL ("{\0" or "\0{").
  const auto ascii = [&](size_t i) { return byte(i) > 0 && byte(i) < 0x80; };
  const bool bare16 = text.size() >= 2 && ((byte(0) == 0 && ascii(1)) || (ascii(0) && byte(1) == 0));
  if (bom16 || bare16)
    refuse(name, " is UTF-16 text; save it as UTF-8 (in Notepad: Save As, Encoding UTF-8).");
  const size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // the parser skips a UTF-8 BOM
  if (text.find_first_not_of(" \t\r\n", start) == std::string::npos)
    refuse(name, " is empty: it holds no JSON text.");
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    refuse_at(name, position_of(text, nul),
              "a NUL byte (code 0); a session file is text, so this looks like binary data or a damaged file.");
}

// A bare NaN, Infinity or -Infinity (Python's json.dump writes them) where parsing
// stopped at `stop`: its start and the string that the session format reads instead.
std::optional<std::pair<size_t, std::string>> bare_non_finite(const std::string& text, size_t stop) {
  const auto letter = [&](size_t i) { return i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])); };
  size_t begin = std::min(stop, text.size()), end = begin;
  while (begin > 0 && letter(begin - 1)) --begin;
  while (letter(end)) ++end;
  std::string word = text.substr(begin, end - begin);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool minus = begin > 0 && text[begin - 1] == '-';
  if (begin > 0 && (text[begin - 1] == '-' || text[begin - 1] == '+')) --begin;
  if (word == "nan") return std::pair{begin, std::string("NaN")};
  if (word == "infinity" || word == "inf") return std::pair{begin, std::string(minus ? "-Infinity" : "Infinity")};
  return std::nullopt;
}

// Keeps the position of the parse error that nlohmann reports without one (a number overflow).
struct ErrorPosition : nlohmann::json_sax<json> {
  size_t end = 0;
  std::string token;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception&) override {
    end = position;
    token = last_token;
    return false;
  }
};

// Where the `index`-th key (from 0) of the text starts: in JSON that parsed this
// far, a key is a string followed by ':'.
size_t key_offset(const std::string& text, size_t index) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    const size_t open = i;
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\') ++i;
    const size_t after = text.find_first_not_of(" \t\r\n", i + 1);
    if (after != std::string::npos && text[after] == ':' && seen++ == index) return open;
  }
  return text.size();
}

// The JSON path of the value being parsed, kept up to date from the parser's events.
struct PathTracker {
  struct Level {
    bool object;
    std::string key;        // objects: the current key
    size_t done = 0;        // arrays: the elements parsed so far
    std::map<std::string, size_t> keys;  // objects: each key and its number among all keys
  };
  std::vector<Level> levels;
  size_t keys_seen = 0;

  std::string path_to(const std::string& key) const {
    std::string p;
    for (const Level& l : levels) {
      if (&l == &levels.back()) break;
      p += l.object ? (p.empty() ? "" : ".") + l.key : "[" + std::to_string(l.done) + "]";
    }
    return p.empty() ? key : p + "." + key;
  }
};

}  // namespace

json parse_json_checked(const std::string& text, const std::string& name) {
  check_is_text(text, name);
  // Duplicate keys are a mistake the JSON parser would hide (the last one wins).
  PathTracker tracker;
  auto element_done = [&] {
    if (!tracker.levels.empty() && !tracker.levels.back().object) ++tracker.levels.back().done;
  };
  json::parser_callback_t on_event = [&](int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      tracker.levels.push_back({event == E::object_start, {}, 0, {}});
    } else if (event == E::object_end || event == E::array_end) {
      tracker.levels.pop_back();
      element_done();
    } else if (event == E::value) {
      element_done();
    } else if (event == E::key && !tracker.levels.empty()) {
      const std::string key = parsed.get<std::string>();
      auto& level = tracker.levels.back();
      const size_t number = tracker.keys_seen++;
      level.key = key;
      if (auto [it, fresh] = level.keys.emplace(key, number); !fresh) {
        const std::string path = tracker.path_to(key);
        const TextPosition first = position_of(text, key_offset(text, it->second));
        const TextPosition again = position_of(text, key_offset(text, number));
        refuse(name, ": the key \"" + path + "\" appears twice, at " + at(first) + " and at " + at(again) +
                                "; give each key once.",
                      {{"path", path}, {"line", std::to_string(again.line)}});
      }
    }
    return true;
  };
  try {
    return json::parse(text, on_event);
  } catch (const json::parse_error& e) {
    const size_t stop = e.byte > 0 ? e.byte - 1 : 0;  // the byte where parsing stopped
    if (auto bare = bare_non_finite(text, stop))
      refuse_at(name, position_of(text, bare->first),
                "JSON has no NaN or Infinity; write it as the string \"" + bare->second +
                    "\" (with the quotes), which the session format reads as that number.");
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    for (char& ch : what)  // the text it quotes may hold raw control bytes
      if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    const TextPosition p = position_of(text, stop);
    throw LoadFailure{make_error(ErrorCode::ParseError, name + " is not valid JSON: " + what,
                                 {{"file", name}, {"line", std::to_string(p.line)}, {"column", std::to_string(p.column)}})};
  } catch (const json::exception&) {  // a number beyond the double range: the only other parse failure
    ErrorPosition where;
    json::sax_parse(text, &where);
    const size_t begin = where.end >= where.token.size() ? where.end - where.token.size() : 0;
    refuse_at(name, position_of(text, begin),
              "the number " + where.token + " is too large for a float32 (at most about 3.4e38).");
  }
}

}  // namespace al::detail
