// Session files as learners and their scripts really write them (the bad-input
// audit): whole numbers as floats, Python's bare NaN, Excel's CSV, torch-layout
// weights of the wrong shape, numbers float32 cannot hold, files that are not
// UTF-8 text. Each message is checked word for word, and in Chinese.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "base/number_text.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/i18n_tables.hpp"
#include "teaching/message_patterns.hpp"
#include "../user_dirs_fixture.hpp"

using namespace al;
using namespace al::testing;

namespace {

const std::string kHead = R"({"format": "attention-lab/session", "version": 1)";

// d_model 4, 2 heads, 2 tokens, math layout; `config` and `rest` are spliced in.
std::string session(const std::string& config = "", const std::string& rest = "") {
  return kHead + ",\n\"config\": {\"d_model\": 4, \"num_heads\": 2" + config +
         "},\n\"x\": [[1, 0, 0, 0], [0, 1, 0, 0]],\n"
         "\"weights\": {\"w_q\": {\"random\": {\"shape\": [4, 4]}}, \"w_k\": {\"random\": {\"shape\": [4, 4]}}, "
         "\"w_v\": {\"random\": {\"shape\": [4, 4]}}, \"w_o\": {\"random\": {\"shape\": [4, 4]}}}" + rest + "}";
}

Error error_of(const std::string& text, const std::string& folder = "") {
  auto r = parse_session_json(text, folder, "s.json");
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::string param(const Error& e, const std::string& name) {
  for (const auto& [key, value] : e.params)
    if (key == name) return value;
  return "";
}

// The Chinese the window shows (app/gui/platform/i18n.cpp): a message pattern, nothing left in English
// but what the learner wrote (`own`) and the names the format uses.
void check_chinese(const Error& e, const std::string& own, const std::vector<std::string>& parts) {
  std::vector<std::pair<std::string, std::string>> patterns;
  for (const auto& [key, text] : table(false))
    if (key.rfind("error.pattern.", 0) == 0) patterns.push_back({key, text});
  const auto chinese = translate_message(e.message, patterns, [](const std::string& key) -> std::optional<std::string> {
    auto it = table(true).find(key);
    return it == table(true).end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  CAPTURE(e.message);
  REQUIRE(chinese.has_value());
  CAPTURE(*chinese);
  for (const std::string& word : english_words(*chinese)) CHECK_MESSAGE(contains(own, word), "English: " << word);
  for (const std::string& part : parts) CHECK_MESSAGE(contains(*chinese, part), "missing: " << part);
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A little-endian float64 .npy of shape (rows, cols).
std::string npy_f8(Index rows, Index cols, const std::vector<double>& values) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (double v : values) out.append(reinterpret_cast<const char*>(&v), 8);  // the test machines are little-endian
  return out;
}

}  // namespace

TEST_CASE("bad input: a torch-layout weight of the wrong shape is told the shape as written and as wanted") {
  // num_kv_heads 1: W_K is 4 x 2 in math layout, so 2 x 4 in torch layout; the file writes it 4 x 2.
  const std::string w_k = R"("w_k": [[1, 0], [0, 1], [1, 0], [0, 1]])";
  const std::string torch = R"({"layout": "torch", "w_q": {"random": {"shape": [4, 4]}}, )" + w_k +
                            R"(, "w_v": {"random": {"shape": [2, 4]}}, "w_o": {"random": {"shape": [4, 4]}}})";
  const std::string text = kHead + R"(, "config": {"d_model": 4, "num_heads": 2, "num_kv_heads": 1},
    "x": [[1, 0, 0, 0]], "weights": )" + torch + "}";
  const Error e = error_of(text);
  CHECK(e.code == ErrorCode::ShapeMismatch);
  CHECK(e.message ==
        "s.json: weights.w_k is 4x2 as written, but in torch layout (out x in) it must be 2x4 (num_kv_heads·d_k = 2 x d_model).");
  CHECK(param(e, "path") == "weights.w_k");
  check_chinese(e, text, {"weights.w_k", "4x2", "2x4", "torch 布局"});
  // The window loads such a file to be fixed, with the same explanation.
  auto editing = parse_session_json_for_editing(text, "", "s.json");
  REQUIRE(editing.ok());
  REQUIRE(editing->unfit.has_value());
  CHECK(editing->unfit->message == e.message);

  // w_o written 3 x 4, and a fused w_qkv written 4 x 12 (in x out, as math layout would have it).
  auto with_weights = [](const std::string& weights) {
    return kHead + R"(, "config": {"d_model": 4, "num_heads": 2}, "x": [[1, 0, 0, 0]], "weights": {"layout": "torch", )" +
           weights + "}}";
  };
  CHECK(error_of(with_weights(R"("w_qkv": {"random": {"shape": [12, 4]}}, "w_o": [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]])"))
            .message == "s.json: weights.w_o is 3x4 as written, but in torch layout (out x in) it must be 4x4 (d_model x d_model).");
  CHECK(error_of(with_weights(R"("w_qkv": {"random": {"shape": [4, 12]}}, "w_o": {"random": {"shape": [4, 4]}})")).message ==
        "s.json: weights.w_qkv is 4x12 as written, but in torch layout (out x in) it must be 12x4 (3·d_model x d_model).");
  // Math layout keeps validate()'s message.
  CHECK(error_of(kHead + R"(, "config": {"d_model": 4, "num_heads": 2}, "x": [[1, 0, 0, 0]], "weights": {"w_q": [[1, 0], [0, 1], [1, 0], [0, 1]]}})")
            .message == "s.json: w_q has shape 4x2 but must be 4x4 (d_model x d_model)");
}

TEST_CASE("bad input: Python's bare NaN and Infinity, and a number beyond float64, say where and what to write") {
  // Python's json.dump writes NaN, Infinity and -Infinity bare.
  const std::vector<std::pair<std::string, std::string>> bare = {
      {"NaN", "NaN"}, {"Infinity", "Infinity"}, {"-Infinity", "-Infinity"}, {"nan", "NaN"}, {"-inf", "-Infinity"}};
  for (const auto& [written, string] : bare) {
    CAPTURE(written);
    const std::string text = kHead + ",\n\"x\": [[1, 0],\n   [0, " + written + "]]}";
    const Error e = error_of(text);
    CHECK(e.code == ErrorCode::ParseError);
    CHECK(e.message == "s.json: line 3, column 8: JSON has no NaN or Infinity; write it as the string \"" + string +
                           "\" (with the quotes), which the session format reads as that number.");
    CHECK(param(e, "line") == "3");
    CHECK(param(e, "column") == "8");
    check_chinese(e, text, {"第 3 行第 8 列", "\"" + string + "\"", "JSON"});
  }
  // The strings the message asks for load.
  auto ok = parse_session_json(session("", ", \"q\": [[\"NaN\", \"Infinity\", \"-Infinity\", 0]]"), "", "s.json");
  CHECK(ok.ok());

  const std::string huge = kHead + ",\n\"x\": [[1, -1e400]]}";
  const Error e = error_of(huge);
  CHECK(e.message == "s.json: line 2, column 11: the number -1e400 is too large for a float32 (at most about 3.4e38).");
  check_chinese(e, huge, {"第 2 行第 11 列", "-1e400", "float32"});
}

TEST_CASE("bad input: every number float32 cannot hold is refused, naming the key or file, line and value") {
  const TempDir dir;
  Error e = error_of(session(R"(, "scale": 1e39)"));
  CHECK(e.message == "s.json: config.scale is 1e+39, too large for a float32 (at most about 3.4e38).");
  CHECK(param(e, "path") == "config.scale");
  check_chinese(e, "", {"config.scale", "1e+39", "float32"});
  CHECK(error_of(session(R"(, "mask_fill": -1e39)")).message ==
        "s.json: config.mask_fill is -1e+39, too large for a float32 (at most about 3.4e38).");
  CHECK(error_of(session("", R"(, "q": {"random": {"shape": [2, 4], "std": 1e39}})")).message ==
        "s.json: q.random.std is 1e+39, too large for a float32 (at most about 3.4e38).");
  // The largest float32 is fine.
  CHECK(parse_session_json(session(R"(, "scale": 3.4e38, "mask_fill": -3.4e38)"), "", "s.json").ok());

  write(dir / "big.csv", "1,0,0,0\n 1e39 ,0,0,0\n");
  const std::string csv = session("", R"(, "q": {"csv": "big.csv"})");
  e = error_of(csv, dir.path.string());
  CHECK(e.message == "s.json: q: " + (dir / "big.csv") + ": line 2, value 1 is 1e39, too large for a float32 (at most about 3.4e38)");
  check_chinese(e, csv + dir.path.string(), {"第 2 行第 1 个值", "1e39", "float32"});
  // Beyond the double range: too large is refused, too small is 0 (it was read as infinity).
  CHECK(parse_csv("1e400,0\n", "t.csv").error().message ==
        "t.csv: line 1, value 1 is 1e400, too large for a float32 (at most about 3.4e38)");
  auto tiny = parse_csv("-1e-400,0.000001e-399\n", "t.csv");
  REQUIRE(tiny.ok());
  CHECK(tiny->data == std::vector<float>{0.0f, 0.0f});
  CHECK(std::signbit(tiny->data[0]));

  write(dir / "big.npy", npy_f8(2, 4, {1, 0, 0, 0, 0, 0, 0, -1e39}));
  const std::string npy = session("", R"(, "q": {"npy": "big.npy"})");
  e = error_of(npy, dir.path.string());
  CHECK(e.message ==
        "s.json: q: " + (dir / "big.npy") + ": value [1][3] is -1e+39, too large for a float32 (at most about 3.4e38)");
  check_chinese(e, npy + dir.path.string(), {"[1][3]", "-1e+39", "float32"});
  // Non-finite float64 values are kept, as in a float32 file.
  write(dir / "inf.npy", npy_f8(1, 2, {INFINITY, NAN}));
  auto inf = read_npy(dir / "inf.npy");
  REQUIRE(inf.ok());
  CHECK(std::isinf(inf->data[0]));
  CHECK(std::isnan(inf->data[1]));
}

TEST_CASE("bad input: a CSV saved by Excel as \"CSV UTF-8\" starts with a byte-order mark, which is skipped") {
  auto t = parse_csv("\xEF\xBB\xBF" "1,0\n0,1\n", "q.csv");
  REQUIRE(t.ok());
  CHECK(t->shape == std::vector<Index>{2, 2});
  CHECK(t->data == std::vector<float>{1, 0, 0, 1});
  // Only at the start: elsewhere it is not a number.
  CHECK(parse_csv("1,0\n\xEF\xBB\xBF" "0,1\n", "q.csv").error().message ==
        "q.csv: line 2, value 1 is '\xEF\xBB\xBF" "0', not a number (NaN, inf and -inf are allowed)");
}

TEST_CASE("bad input: whole numbers written as floats are read; whole numbers out of range say the range") {
  const std::string text = R"({"format": "attention-lab/session", "version": 1.0,
    "config": {"d_model": 4.0, "num_heads": 2.0, "num_kv_heads": 1.0,
               "mask": {"causal": true, "window": 2.0, "global_tokens": [0.0]},
               "dropout": {"p": 0.5, "training": true, "seed": 7.0}},
    "x": {"random": {"shape": [3.0, 4.0], "seed": 1.0}},
    "weights": {"w_q": {"random": {"shape": [4, 4]}}, "w_k": {"random": {"shape": [4, 2]}},
                "w_v": {"random": {"shape": [4, 2]}}, "w_o": {"random": {"shape": [4, 4]}}}})";
  auto s = parse_session_json(text, "", "s.json");
  REQUIRE(s.ok());
  CHECK(s->config.d_model == 4);
  CHECK(s->config.num_heads == 2);
  CHECK(s->config.num_kv_heads == 1);
  CHECK(s->config.mask.window == 2);
  CHECK(s->config.mask.global_tokens == std::vector<Index>{0});
  CHECK(s->config.dropout.seed == 7);
  CHECK(s->x->shape == std::vector<Index>{1, 3, 4});

  Error e = error_of(session(R"(, "dropout": {"seed": 18446744073709551616})"));
  CHECK(e.message == "s.json: config.dropout.seed is 1.8446744073709552e+19; it must be a whole number from 0 to 18446744073709551615.");
  check_chinese(e, "", {"config.dropout.seed", "18446744073709551615", "整数"});
  CHECK(error_of(kHead + R"(, "config": {"d_model": 1e20}})").message ==
        "s.json: config.d_model is 1e+20; it must be a whole number from 1 to 9223372036854775807.");
  CHECK(error_of(kHead + R"(, "config": {"num_heads": 9223372036854775808}})").message ==
        "s.json: config.num_heads is 9223372036854775808; it must be a whole number from 1 to 9223372036854775807.");
  CHECK(error_of(session(R"(, "mask": {"global_tokens": [1e19]})")).message ==
        "s.json: config.mask.global_tokens[0] is 1e+19; it must be a whole number from 0 to 9223372036854775807.");
  // Not whole, or not positive, as before.
  CHECK(error_of(session(R"(, "mask": {"window": 2.5})")).message ==
        "s.json: config.mask.window must be a positive whole number, but it is the number 2.5.");
  CHECK(error_of(session(R"(, "mask": {"window": 0.0})")).message == "s.json: config.mask.window must be at least 1, but it is 0.0.");
  CHECK(error_of(session(R"(, "dropout": {"seed": -1.0})")).message ==
        "s.json: config.dropout.seed must not be negative, but it is -1.0.");
  CHECK(error_of(R"({"format": "attention-lab/session", "version": 1.5})").message ==
        "s.json: version is 1.5; this Attention Lab reads version 1 only.");

  // A float shape counts towards the cap on generated numbers before anything is generated.
  e = error_of(kHead + R"(, "x": {"random": {"shape": [16384.0, 16384.0]}}, "q": {"random": {"shape": [1.0, 4.0]}}})");
  CHECK(e.code == ErrorCode::TooLarge);
  CHECK(contains(e.message, "ask for 268435460 numbers together (q.random 4, x.random 268435456)"));
}

TEST_CASE("bad input: numbers in messages are written the shortest way, with the key that holds them") {
  CHECK(shortest_text(-1e-20) == "-1e-20");
  CHECK(shortest_text(-0.1) == "-0.1");
  CHECK(shortest_text(1e39) == "1e+39");
  CHECK(shortest_text(0.5) == "0.5");
  CHECK(shortest_text(NAN) == "NaN");
  CHECK(shortest_text(-INFINITY) == "-inf");

  Error e = error_of(session(R"(, "dropout": {"p": -0.1})"));
  CHECK(e.message == "s.json: config.dropout.p must be at least 0 and below 1, but it is -0.1.");
  CHECK(param(e, "path") == "config.dropout.p");
  check_chinese(e, "", {"config.dropout.p", "-0.1"});
  e = error_of(session(R"(, "positional": {"type": "rope", "rope_base": 1e-30})"));
  CHECK(e.message ==
        "s.json: config.positional.rope_base must be a finite number above 1 (10000 in Llama), but it is 1e-30.");
  check_chinese(e, "", {"config.positional.rope_base", "1e-30", "Llama"});
  // The window edits a session with no file: the same shortest numbers.
  Session s = *load_preset("default");
  s.config.dropout.p = -0.1;
  CHECK(validate(s)->message == "the dropout probability p must be at least 0 and below 1, but it is -0.1");
  s = *load_preset("default");
  s.config.positional.type = PositionalType::Rope;
  s.config.positional.rope_base = 1e-30;
  CHECK(validate(s)->message == "rope_base must be a finite number above 1 (10000 in Llama), but it is 1e-30");
}

TEST_CASE("bad input: a repeated key is named by its JSON path, with both places") {
  const std::string text = kHead + ",\n\"config\": {\"mask\": {\"causal\": true,\n  \"causal\": false}}}";
  Error e = error_of(text);
  CHECK(e.message == "s.json: the key \"config.mask.causal\" appears twice, at line 2, column 21 and at line 3, column 3; "
                     "give each key once.");
  CHECK(param(e, "path") == "config.mask.causal");
  CHECK(param(e, "line") == "3");
  check_chinese(e, text, {"\"config.mask.causal\"", "第 2 行第 21 列", "第 3 行第 3 列", "两次"});
  // Inside arrays, and with a key that holds the quote and colon of another key's text.
  CHECK(error_of(kHead + R"(, "z": [1, {"a\":": 1}, {"k": 1, "b": [], "k": 2}]})").message ==
        "s.json: the key \"z[2].k\" appears twice, at line 1, column 74 and at line 1, column 91; give each key once.");
}

TEST_CASE("bad input: an empty file, UTF-16 text and a NUL byte are said plainly") {
  for (const std::string& blank : {std::string(), std::string(" \n\t\r\n"), std::string("\xEF\xBB\xBF")}) {
    const Error e = error_of(blank);
    CHECK(e.code == ErrorCode::ParseError);
    CHECK(e.message == "s.json is empty: it holds no JSON text.");
    check_chinese(e, "", {"s.json", "空的"});
  }
  // Notepad's "Unicode" (UTF-16 LE with a byte-order mark), big-endian, and without a mark.
  for (const std::string& utf16 : {std::string("\xFF\xFE{\0\"\0", 6), std::string("\xFE\xFF\0{\0\"", 6),
                                   std::string("{\0\"\0f\0", 6), std::string("\0{\0\"", 4)}) {
    const Error e = error_of(utf16);
    CHECK(e.message == "s.json is UTF-16 text; save it as UTF-8 (in Notepad: Save As, Encoding UTF-8).");
    check_chinese(e, "", {"UTF-16", "UTF-8"});
  }
  const Error e = error_of(kHead + ",\n  \"x\": [[1]]" + std::string(1, '\0') + "}");
  CHECK(e.message == "s.json: line 2, column 13: a NUL byte (code 0); a session file is text, so this looks like binary "
                     "data or a damaged file.");
  check_chinese(e, "", {"第 2 行第 13 列", "空字节"});
}
