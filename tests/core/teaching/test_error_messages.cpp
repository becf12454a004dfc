// Every message a learner can meet from a bad file (a session that does not parse
// or validate, a CSV or .npy it names, a matrix import, a failed save, a recovery
// file that cannot be restored) reads in Chinese in the 中文 UI, with its numbers:
// real bad files are opened and each Chinese text is checked for English and for
// the values written here by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <tuple>

#include "editing/import.hpp"
#include "editing/recovery.hpp"
#include "i18n_tables.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "io/settings.hpp"
#include "numerics/attention.hpp"
#include "numerics/decode.hpp"
#include "teaching/message_patterns.hpp"
#include "../user_dirs_fixture.hpp"

using namespace al;
using namespace al::testing;

TEST_CASE("a config error a learner can make reads in Chinese, with its numbers") {
  std::vector<std::pair<std::string, std::string>> patterns;
  for (const auto& [key, text] : table(false))
    if (key.rfind("error.pattern.", 0) == 0) patterns.push_back({key, text});
  auto chinese = [](const std::string& key) -> std::optional<std::string> {
    auto it = table(true).find(key);
    return it == table(true).end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const std::vector<std::pair<std::function<void(Session&)>, std::string>> edits = {
      {[](Session& s) { s.config.num_heads = 0; }, "0"},
      {[](Session& s) { s.config.dropout.p = 1.5; }, "1.5"},
      {[](Session& s) { s.config.scale = {ScaleMode::Custom, INFINITY}; }, ""},
      {[](Session& s) { s.config.mask_fill = NAN; }, "NaN"},
      {[](Session& s) { s.config.d_model = 0; }, "0"},
  };
  for (const auto& [edit, number] : edits) {
    Session s = *load_preset("default");
    edit(s);
    auto traced = compute(s);
    REQUIRE_FALSE(traced.ok());
    CAPTURE(traced.error().message);
    const auto text = translate_message(traced.error().message, patterns, chinese);
    REQUIRE(text.has_value());
    CHECK(english_words(*text).empty());
    CHECK(contains(*text, number));
  }
  CHECK_FALSE(translate_message("something no pattern knows", patterns, chinese).has_value());
}

namespace {
namespace fs = std::filesystem;

// The Chinese text the app shows for an error (app/gui/platform/i18n.cpp): the code's
// translated detail when the error carries all its values, else a message pattern.
std::optional<std::string> chinese_error(const Error& error) {
  const Table& zh = table(true);
  if (auto detail = zh.find(std::string("error.") + error_code_name(error.code) + ".detail"); detail != zh.end()) {
    std::string text = detail->second;
    if (substitute(&text, error.params)) return text;
  }
  std::vector<std::pair<std::string, std::string>> patterns;
  for (const auto& [key, text] : table(false))
    if (key.rfind("error.pattern.", 0) == 0) patterns.push_back({key, text});
  return translate_message(error.message, patterns, [&](const std::string& key) -> std::optional<std::string> {
    auto it = zh.find(key);
    return it == zh.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

// English words the learner wrote themselves (keys, values, the file's name) may be quoted back.
std::vector<std::string> foreign_words(const std::string& text, const std::string& own) {
  // The session format's keys (docs/session-format.md), listed when one is misspelt.
  std::set<std::string> allowed = {"format", "version", "description", "config", "tokens",
                                   "weights", "mode", "attention", "bias", "scale", "mask", "dropout", "causal",
                                   "custom", "training", "seed", "shape", "layout", "positional", "window"};
  for (const std::string& w : find_all(own, "[A-Za-z_][A-Za-z_0-9]*")) allowed.insert(w);
  std::vector<std::string> foreign;
  for (const std::string& w : english_words(erase_all(text, "“[^”]*”|[0-9]+(x[0-9]+)+")))  // and shapes (1x2x2)
    if (!allowed.count(w)) foreign.push_back(w);
  return foreign;
}
}  // namespace

TEST_CASE("every message from opening a bad session file reads in Chinese, with its numbers") {
  const std::string head = R"({"format": "attention-lab/session", "version": 1, )";
  const std::string qkv = R"("q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]])";
  const std::string direct = head + R"("config": {"mode": "direct"}, )" + qkv;
  // (file text, what the Chinese message must contain: the numbers, the place, the learner's own words)
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      // truncated: the second line is ` "x": [[1, 2], [3` (17 characters), so the input ends at column 18
      {"{\"format\": \"attention-lab/session\", \"version\": 1,\n \"x\": [[1, 2], [3", {"第 2 行", "第 18 列", "截断"}},
      {R"({"format": attention})", {"第 1 行", "第 12 列"}},
      {R"({"format": "attention-lab/session", "format": 1})", {"\"format\"", "两次"}},
      {"[1, 2]", {"数组"}},
      {R"({"version": 1})", {"\"format\""}},
      {R"({"format": "attention-lab/session", "version": 2})", {"2", "1"}},
      {R"({"format": "attention-lab/session"})", {"\"version\"", "1"}},
      {head + R"("confg": 1, "x": [[1]])" + "}", {"confg", "顶层"}},
      {head + R"("config": {"headz": 2}, "x": [[1]])" + "}", {"headz", "config 中"}},
      {direct + R"(, "config": 1})", {"两次"}},
      {head + R"("config": {"mode": "proj"}, "x": [[1]])" + "}", {"proj", "投影"}},
      {head + R"("config": {"attention": "both"}, "x": [[1]])" + "}", {"both", "交叉注意力"}},
      {head + R"("config": {"num_heads": 0}, "x": [[1]])" + "}", {"config.num_heads", "0"}},
      {head + R"("config": {"num_heads": "two"}, "x": [[1]])" + "}", {"config.num_heads", "正整数", "字符串", "two"}},
      {head + R"("config": {"num_heads": 2.5}, "x": [[1]])" + "}", {"正整数", "2.5"}},
      {head + R"("config": {"bias": 1}, "x": [[1]])" + "}", {"config.bias", "true", "数 1"}},
      {head + R"("config": {"scale": "sqrt"}, "x": [[1]])" + "}", {"sqrt", "sqrt_dk"}},
      {head + R"("config": {"scale": [1]}, "x": [[1]])" + "}", {"config.scale", "数组"}},
      {head + R"("config": {"mask_fill": "minus"}, "x": [[1]])" + "}", {"minus", "填充值"}},
      {head + R"("config": {"dropout": {"p": 1.5}}, "x": [[1]])" + "}", {"1.5"}},
      {head + R"("config": {"dropout": {"seed": -3}}, "x": [[1]])" + "}", {"config.dropout.seed", "-3"}},
      {head + R"("x": [[1, 2], [3]])" + "}", {"x[1]", "x[0]", "1 个", "2 个"}},
      {head + R"("x": [[1, 2], 3])" + "}", {"x[1]", "数 3", "2 个元素"}},
      {head + R"("x": [[1, 2], [3, "a"]])" + "}", {"x[1][1]", "字符串"}},
      {head + R"("x": [[1, 2], [3, 1e39]])" + "}", {"x[1][1]", "1e+39", "float32"}},
      {head + R"("x": [])" + "}", {"x", "0"}},
      {head + R"("x": [1, 2])" + "}", {"形状是 2"}},
      {head + R"("x": {"random": {"seed": 1}})" + "}", {"x.random", "\"shape\""}},
      {head + R"("x": {"random": {"shape": [2, 2], "std": -1}})" + "}", {"x.random.std", "负数"}},
      {head + R"("x": {"numbers": [1]})" + "}", {"numbers", "\"random\""}},
      {head + R"("x": 7)" + "}", {"数 7", "矩阵"}},
      {head + R"("x": {"npy": "../x.npy"})" + "}", {"../x.npy", "\"..\""}},
      {head + R"("x": [[1, 2]], "x_q": [[1, 2]])" + "}", {"\"x_q\""}},
      {head + R"("x": [[1, 2]], "weights": {"layout": "rows"})" + "}", {"rows", "\"torch\""}},
      {head + R"("x": [[1, 2]], "weights": {"w_q": [1, 2]})" + "}", {"weights.w_q", "二维"}},
      {head + R"("x": [[1, 2]], "tokens": ["a", "b", "c"])" + "}", {"3", "1", "标签的个数"}},
      {head + R"("x": [[1, 2]])" + "}", {"w_q", "投影"}},
      {head + R"("config": {"mode": "direct"}, "q": [[1, 0]])" + "}", {"k", "直接模式"}},
      {head + R"("config": {"mode": "direct"})" + "}", {"\"q\"", "q、k 和 v"}},
      {head + R"("config": {"attention": "cross"}, "x_q": [[1, 0]], "weights": {"w_q": [[1, 0], [0, 1]]})" + "}", {"x_kv"}},
      {head + R"("config": {"num_heads": 3}, )" + qkv + R"(, "k": 1})" + "}", {"两次"}},
      {head + R"("config": {"mode": "direct", "num_heads": 3}, )" + qkv + "}", {"3", "2"}},
      {head + R"("config": {"mode": "direct", "mask": {"key_padding": [1, 0, 1]}}, )" + qkv + "}", {"3", "2"}},
      {head + R"("config": {"mode": "direct", "mask": {"key_padding": [1, 0.5]}}, )" + qkv + "}",
       {"config.mask.key_padding[0][1]", "0.5", "被掩码"}},
      {head + R"("config": {"mode": "direct", "mask": {"custom": [[[[1]]]]}}, )" + qkv + "}", {"config.mask.custom", "Lq x Lk"}},
      {head + R"("config": {"mode": "direct"}, "q": [[1, 0]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]})",
       {"1x2", "2x2", "交叉注意力"}},
      {head + R"("config": {"mode": "direct"}, "q": [[1, 0, 0]], "k": [[1, 0]], "v": [[1, 0]]})", {"3", "2"}},
      {head + R"("x": {"random": {"shape": [1, 100000, 8]}}, "config": {"num_heads": 8})" + "}", {"100000", "8"}},
      // Matrices in files of their own (written below): CSV and .npy problems, inside the session's message.
      {head + R"("x": {"csv": "letters.csv"})" + "}", {"letters.csv", "第 1 行第 2 个值", "“a”"}},
      {head + R"("x": {"csv": "ragged.csv"})" + "}", {"第 2 行有 1 个值", "第 1 行有 2 个"}},
      {head + R"("x": {"csv": "empty.csv"})" + "}", {"CSV"}},
      {head + R"("x": {"npy": "text.npy"})" + "}", {"text.npy", "不是 .npy 文件"}},
      {head + R"("x": {"npy": "short.npy"})" + "}", {"不完整", "4096", "0"}},
  };
  const fs::path folder = fs::temp_directory_path() / "al_bad_sessions";
  fs::create_directories(folder);
  const std::string path = (folder / "bad.json").string();
  std::ofstream(folder / "letters.csv") << "1,a\n";
  std::ofstream(folder / "ragged.csv") << "1,2\n3\n";
  std::ofstream(folder / "empty.csv") << "";
  std::ofstream(folder / "text.npy") << "not numbers";
  // The .npy magic and version 1.0, then a header length of 4096 with no header after it.
  std::ofstream(folder / "short.npy", std::ios::binary) << std::string("\x93NUMPY\x01\x00\x00\x10", 10);
  for (const auto& [text, expected] : files) {
    CAPTURE(text);
    { std::ofstream(path, std::ios::binary) << text; }
    std::vector<Error> errors;
    if (auto loaded = load_session_file(path); !loaded.ok()) errors.push_back(loaded.error());
    auto editing = load_session_file_for_editing(path);
    if (!editing.ok()) errors.push_back(editing.error());
    else if (editing->unfit) errors.push_back(*editing->unfit);
    REQUIRE_FALSE(errors.empty());
    for (const Error& error : errors) {
      CAPTURE(error.message);
      const auto chinese = chinese_error(error);
      REQUIRE(chinese.has_value());
      CAPTURE(*chinese);
      CHECK_MESSAGE(foreign_words(*chinese, text + " " + path).empty(),
                    "English: " << doctest::toString(foreign_words(*chinese, text + " " + path).size()) << " "
                                << (foreign_words(*chinese, text + " " + path).empty() ? "" : foreign_words(*chinese, text + " " + path)[0]));
      for (const std::string& part : expected) CHECK_MESSAGE(contains(*chinese, part), "missing: " << part);
    }
  }
  // A file that is not there.
  const auto missing = load_session_file((folder / "absent.json").string());
  REQUIRE_FALSE(missing.ok());
  const auto chinese = chinese_error(missing.error());
  REQUIRE(chinese.has_value());
  CHECK(contains(*chinese, "不存在"));
  fs::remove_all(folder);
}

TEST_CASE("every message from importing a bad matrix file reads in Chinese, with its numbers") {
  const fs::path folder = fs::temp_directory_path() / "al_bad_imports";
  fs::create_directories(folder);
  std::ofstream(folder / "small.csv") << "1,2\n3,4\n";
  std::ofstream(folder / "half.csv") << "0.5,1,1,1,1,1\n";
  std::ofstream(folder / "matrix.dat") << "1\n";
  const Session session = *load_preset("default");  // d_model 8, Lq = Lk = 6
  // (input, file, what the Chinese message must contain)
  const std::vector<std::tuple<InputId, std::string, std::vector<std::string>>> imports = {
      {InputId::WQ, "small.csv", {"W_Q", "8x8", "2x2"}},
      {InputId::X, "small.csv", {"1x6x8", "2x2", "先修改尺寸"}},
      {InputId::KeyPadding, "half.csv", {"键的填充掩码", "第 1 个值", "0.5"}},
      {InputId::WQ, "matrix.dat", {"matrix.dat", ".npy", ".csv"}},
      {InputId::WQ, "absent.csv", {"不存在"}},
  };
  for (const auto& [id, file, expected] : imports) {
    CAPTURE(file);
    const auto imported = import_matrix_file(session, id, (folder / file).string());
    REQUIRE_FALSE(imported.ok());
    CAPTURE(imported.error().message);
    const auto chinese = chinese_error(imported.error());
    REQUIRE(chinese.has_value());
    CAPTURE(*chinese);
    CHECK(foreign_words(*chinese, (folder / file).string()).empty());
    for (const std::string& part : expected) CHECK_MESSAGE(contains(*chinese, part), "missing: " << part);
  }
  // A bias of the right length imports: the cases above are refused for their own reasons.
  std::ofstream(folder / "bias.csv") << "1,1,1,1,1,1,1,1\n";
  CHECK(import_matrix_file(session, InputId::BQ, (folder / "bias.csv").string()).ok());
  fs::remove_all(folder);
}

TEST_CASE("a save that fails reads in Chinese, with the place and the reason") {
  const fs::path folder = fs::temp_directory_path() / "al_bad_saves";
  fs::create_directories(folder);
  std::ofstream(folder / "note.txt") << "a file, not a folder\n";
  // A "folder" that is a file: the temporary file cannot be created in it.
  const std::string target = (folder / "note.txt" / "copy.json").string();
  const auto error = write_file_atomic(target, "{}");
  REQUIRE(error.has_value());
  CAPTURE(error->message);
  const auto chinese = chinese_error(*error);
  REQUIRE(chinese.has_value());
  CAPTURE(*chinese);
  CHECK(foreign_words(*chinese, target).empty());
  CHECK(contains(*chinese, "无法保存“" + target + "”"));
  CHECK(contains(*chinese, "不是文件夹"));
  CHECK(contains(*chinese, "原有的文件没有改变"));

  // A read-only file: refused, and the message says why in Chinese too.
  fs::permissions(folder / "note.txt", fs::perms::owner_read);
  const auto read_only = write_file_atomic((folder / "note.txt").string(), "{}");
  REQUIRE(read_only.has_value());
  const auto read_only_chinese = chinese_error(*read_only);
  REQUIRE(read_only_chinese.has_value());
  CAPTURE(*read_only_chinese);
  CHECK(foreign_words(*read_only_chinese, (folder / "note.txt").string()).empty());
  CHECK(contains(*read_only_chinese, "只读"));
  fs::remove_all(folder);
}

TEST_CASE("a recovery file that cannot be restored reads in Chinese, with why") {
  const fs::path folder = fs::temp_directory_path() / "al_bad_recovery";
  fs::create_directories(folder);
  const std::string path = (folder / "recovery.json").string();
  const std::string head = R"({"format": "attention-lab/recovery", "version": 1)";
  const std::vector<std::pair<std::string, std::string>> files = {
      {R"({"format": "attention-lab/recovery", "vers)", "崩溃"},
      {R"({"format": "something-else"})", "不是恢复文件"},
      {R"({"format": "attention-lab/recovery", "version": 9})", "另一个版本"},
      {head + "}", "\"session\""},
      {head + R"(, "original_path": "", "saved_at_unix_ms": 5, "session": {"format": "attention-lab/session", "version": 1, "x": [[1, "a"]]}})",
       "x[0][1]"},
  };
  for (const auto& [text, expected] : files) {
    CAPTURE(text);
    { std::ofstream(path) << text; }
    const auto read = read_recovery_file(path);
    REQUIRE_FALSE(read.ok());
    CAPTURE(read.error().message);
    const auto chinese = chinese_error(read.error());
    REQUIRE(chinese.has_value());
    CAPTURE(*chinese);
    CHECK(foreign_words(*chinese, text + " " + path).empty());
    CHECK(contains(*chinese, "恢复文件“" + path + "”"));
    CHECK(contains(*chinese, expected));
  }
  fs::remove_all(folder);
}

TEST_CASE("every warning from reading the settings reads in Chinese, with its values") {
  const TempDir dir;
  const std::string path = dir / "settings.json";
  // (file text, what each warning's Chinese must hold, in order)
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"{\"language\": ", {"设置：“" + path + "”不是一个 JSON 对象（JSON 格式有误）；改用默认设置"}},
      {"[1, 2]", {"设置：“" + path + "”不是一个 JSON 对象；改用默认设置"}},
      {R"({"language": 5, "font_percent": 1000, "full_screen": "yes", "window": 3, "recent_files": "a.json"})",
       {"“language”应为一个较短的字符串，但它是 5；", "“font_percent”应为从 60 到 300 的整数，但它是 1000；",
        "“full_screen”应为 true 或 false，但它是 \"yes\"；", "键 \"window\" 应为一个对象；改用默认的窗口大小",
        "键 \"recent_files\" 应为一个路径列表"}},
      {R"({"window": {"width": -5, "x": 1e9}})",
       {"“width”应为从 0 到 100000 的整数，但它是 -5；", "“x”应为从 -100000 到 100000 的整数，但它是 1000000000.0；"}},
  };
  for (const auto& [text, expected] : files) {
    CAPTURE(text);
    { std::ofstream(path) << text; }
    const LoadedSettings loaded = load_settings_file(path);
    REQUIRE(loaded.warnings.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(loaded.warnings[i]);
      const auto chinese = chinese_error(Error{ErrorCode::IoError, loaded.warnings[i], {}});
      REQUIRE(chinese.has_value());
      CAPTURE(*chinese);
      CHECK(foreign_words(*chinese, text + " " + path).empty());
      CHECK(contains(*chinese, expected[i]));
    }
  }
  // A settings file that is a folder: the reason is translated inside the warning.
  fs::remove(path);
  fs::create_directory(path);
  const LoadedSettings folder = load_settings_file(path);
  REQUIRE(folder.warnings.size() == 1);
  const auto chinese = chinese_error(Error{ErrorCode::IoError, folder.warnings[0], {}});
  REQUIRE(chinese.has_value());
  CHECK(*chinese == "无法读取“" + path + "”：这是文件夹，不是文件；改用默认设置");

  // Nowhere to keep the settings.
  const ScopedEnv no_xdg("XDG_CONFIG_HOME", std::nullopt), no_home("HOME", std::nullopt);
  const LoadedSettings nowhere = load_settings();
  REQUIRE(nowhere.warnings.size() == 1);
  const auto where = chinese_error(Error{ErrorCode::IoError, nowhere.warnings[0], {}});
  REQUIRE(where.has_value());
  CHECK(*where == "不知道把 Attention Lab 的设置保存在哪里：$XDG_CONFIG_HOME 和 $HOME 都没有设置；改用默认设置");
}

TEST_CASE("the settings of today's attention that cannot work read in Chinese, with their numbers") {
  // (edit of a preset, what the Chinese message must contain)
  const std::vector<std::tuple<const char*, std::function<void(Session&)>, std::vector<std::string>>> edits = {
      {"default", [](Session& s) { s.config.num_kv_heads = 3; }, {"num_kv_heads = 3", "num_heads = 2", "整除"}},
      {"seed-003-example", [](Session& s) { s.config.positional.type = PositionalType::Sinusoidal; }, {"直接模式", "正弦"}},
      {"seed-003-example", [](Session& s) { s.config.positional.type = PositionalType::Rope; s.config.d_model = 3; },
       {"偶数", "3"}},
      {"default", [](Session& s) { s.config.positional.type = PositionalType::Rope; s.config.positional.rope_base = 0.5; },
       {"rope_base", "0.5"}},
      {"default", [](Session& s) { s.config.mask.window = -2; }, {"滑动窗口", "-2"}},
      {"cross-attention", [](Session& s) { s.config.mask.global_tokens = {0}; }, {"全局词元", "交叉注意力"}},
      {"default", [](Session& s) { s.config.mask.global_tokens = {99}; }, {"全局词元 99", "0 到 5"}},
  };
  for (const auto& [preset, edit, expected] : edits) {
    Session s = *load_preset(preset);
    edit(s);
    auto traced = compute(s);
    REQUIRE_FALSE(traced.ok());
    CAPTURE(traced.error().message);
    const auto chinese = chinese_error(traced.error());
    REQUIRE(chinese.has_value());
    CAPTURE(*chinese);
    CHECK(english_words(*chinese).empty());
    for (const std::string& part : expected) CHECK_MESSAGE(contains(*chinese, part), "missing: " << part);
  }
  // The positional object of a session file.
  const std::string head = R"({"format": "attention-lab/session", "version": 1, "x": [[1, 2]], "config": {"positional": )";
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {R"({})", {"\"type\"", "\"rope\""}},
      {R"({"type": "learned"})", {"\"learned\"", "\"alibi\""}},
      {R"({"type": "alibi", "rope_style": "half"})", {"rope_style", "只用于"}},
      {R"({"type": "rope", "rope_style": "spiral"})", {"\"spiral\"", "\"interleaved\""}},
      {R"({"type": "none", "rope_base": 500})", {"rope_base", "只用于"}},
  };
  for (const auto& [positional, expected] : files) {
    auto parsed = parse_session_json(head + positional + "}}", ".", "session.json");
    REQUIRE_FALSE(parsed.ok());
    CAPTURE(parsed.error().message);
    const auto chinese = chinese_error(parsed.error());
    REQUIRE(chinese.has_value());
    CAPTURE(*chinese);
    CHECK(english_words(*chinese).empty());
    for (const std::string& part : expected) CHECK_MESSAGE(contains(*chinese, part), "missing: " << part);
  }
}

TEST_CASE("the decode lab's refusal of a leaky mask fill reads in Chinese, with the fill") {
  Session s = *load_preset("causal-decoder");
  s.config.mask_fill = -1e-20;  // seed 002's fill
  auto run = decode(s);
  REQUIRE_FALSE(run.ok());
  CAPTURE(run.error().message);
  const auto text = chinese_error(run.error());
  REQUIRE(text.has_value());
  CHECK(english_words(*text).empty());
  CHECK(contains(*text, "-1e-20"));
}
