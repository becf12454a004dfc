// The session file: reading, every error a learner can make, writing, round trips.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "numerics/attention.hpp"
#include "io/matrix_io.hpp"
#include "base/random.hpp"
#include "io/session_io.hpp"

namespace fs = std::filesystem;
using namespace al;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A small valid projection session, 2 tokens, d_model 2, 1 head, math layout.
std::string small_session(const std::string& config_extra = "", const std::string& x = "[[1, 0], [0, 1]]",
                          const std::string& weights_extra = "") {
  return R"({"format": "attention-lab/session", "version": 1,
  "config": {"d_model": 2, "num_heads": 1)" + config_extra + R"(},
  "x": )" + x + R"(,
  "weights": {"w_q": [[1, 2], [3, 4]], "w_k": [[1, 0], [0, 1]], "w_v": [[0.5, 0], [0, 2]],
              "w_o": [[1, 0], [0, 1]])" + weights_extra + R"(}})";
}

Error parse_error_of(const std::string& text) {
  auto r = parse_session_json(text, "", "s.json");
  REQUIRE_FALSE(r.ok());
  return r.error();
}

bool same_tensor(const TensorPtr& a, const TensorPtr& b) {
  if (!a || !b) return !a && !b;
  if (a->shape != b->shape) return false;
  // Bitwise, so NaN == NaN and -0 != 0: the round trip must be exact.
  return std::memcmp(a->data.data(), b->data.data(), a->data.size() * sizeof(float)) == 0;
}

void check_same_session(const Session& a, const Session& b) {
  const Config &ca = a.config, &cb = b.config;
  CHECK(ca.mode == cb.mode);
  CHECK(ca.attention == cb.attention);
  CHECK(ca.d_model == cb.d_model);
  CHECK(ca.num_heads == cb.num_heads);
  CHECK(ca.bias == cb.bias);
  CHECK(ca.scale == cb.scale);
  CHECK(ca.mask.causal == cb.mask.causal);
  CHECK(same_tensor(ca.mask.key_padding, cb.mask.key_padding));
  CHECK(same_tensor(ca.mask.custom, cb.mask.custom));
  CHECK(((std::isnan(ca.mask_fill) && std::isnan(cb.mask_fill)) || ca.mask_fill == cb.mask_fill));
  CHECK(ca.dropout == cb.dropout);
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens_kv == b.tokens_kv);
  CHECK(same_tensor(a.x, b.x));
  CHECK(same_tensor(a.x_kv, b.x_kv));
  CHECK(same_tensor(a.q, b.q));
  CHECK(same_tensor(a.k, b.k));
  CHECK(same_tensor(a.v, b.v));
  const Weights &wa = a.weights, &wb = b.weights;
  for (auto [pa, pb] : {std::pair{&wa.w_q, &wb.w_q}, {&wa.b_q, &wb.b_q}, {&wa.w_k, &wb.w_k}, {&wa.b_k, &wb.b_k},
                        {&wa.w_v, &wb.w_v}, {&wa.b_v, &wb.b_v}, {&wa.w_qkv, &wb.w_qkv}, {&wa.b_qkv, &wb.b_qkv},
                        {&wa.w_o, &wb.w_o}, {&wa.b_o, &wb.b_o}})
    CHECK(same_tensor(*pa, *pb));
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "al-session-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    fs::create_directories((path / name).parent_path());
    const std::string p = (path / name).string();
    REQUIRE_FALSE(write_file_atomic(p, bytes).has_value());
    return p;
  }
};

}  // namespace

TEST_CASE("session: a small file is read with its values, and a 2-D x means B = 1") {
  auto r = parse_session_json(small_session(), "", "s.json");
  REQUIRE(r.ok());
  const Session& s = *r;
  CHECK(s.x->shape == std::vector<Index>{1, 2, 2});
  CHECK(s.weights.w_q->shape == std::vector<Index>{2, 2});
  CHECK(s.weights.w_q->at({0, 1}) == 2.0f);  // math layout: row = input, column = output
  CHECK(s.weights.w_q->at({1, 0}) == 3.0f);
  CHECK(s.weights.w_v->at({1, 1}) == 2.0f);
}

TEST_CASE("session: defaults for everything left out") {
  const std::string text = R"({"format": "attention-lab/session", "version": 1,
    "config": {"mode": "direct"},
    "q": [[[1, 2, 3, 4]]], "k": [[[1, 0, 0, 0]]], "v": [[[0, 1, 0, 0]]]})";
  auto r = parse_session_json(text, "", "s.json");
  REQUIRE(r.ok());
  const Config& c = r->config;
  CHECK(c.attention == AttentionKind::Self);
  CHECK(c.d_model == 4);  // from the last dimension of q
  CHECK(c.num_heads == 1);
  CHECK(c.bias == false);  // no biases given
  CHECK(c.scale.mode == ScaleMode::SqrtDk);
  CHECK(c.mask_fill == -std::numeric_limits<double>::infinity());
  CHECK_FALSE(c.mask.causal);
  CHECK(c.mask.key_padding == nullptr);
  CHECK(c.mask.custom == nullptr);
  CHECK(c.dropout.p == 0.0);
  CHECK_FALSE(c.dropout.training);
  CHECK(c.dropout.seed == 0);

  // With biases present and "bias" left out, bias is on; "mode" defaults to projection.
  auto with_bias = parse_session_json(small_session("", "[[1, 0], [0, 1]]",
                                                    R"(, "b_q": [0, 0], "b_k": [0, 0], "b_v": [0, 0], "b_o": [1, 1])"),
                                      "", "s.json");
  REQUIRE(with_bias.ok());
  CHECK(with_bias->config.bias);
  CHECK(with_bias->config.mode == InputMode::Projection);
}

TEST_CASE("session: config values of every kind are read") {
  auto r = parse_session_json(
      small_session(R"(, "bias": false, "scale": 0.25, "mask": {"causal": true, "key_padding": [1, 0],
                       "custom": [[1, 1], [true, false]]}, "mask_fill": -1e9,
                       "dropout": {"p": 0.1, "training": true, "seed": 18446744073709551615})"),
      "", "s.json");
  REQUIRE(r.ok());
  const Config& c = r->config;
  CHECK(c.scale.mode == ScaleMode::Custom);
  CHECK(c.scale.factor == 0.25);
  CHECK(c.mask.causal);
  CHECK(c.mask.key_padding->shape == std::vector<Index>{1, 2});  // one row: B = 1
  CHECK(c.mask.custom->data == std::vector<float>{1, 1, 1, 0});
  CHECK(c.mask_fill == -1e9);
  CHECK(c.dropout.p == 0.1);
  CHECK(c.dropout.training);
  CHECK(c.dropout.seed == 18446744073709551615ull);

  auto none = parse_session_json(small_session(R"(, "scale": "none", "mask_fill": "-inf")"), "", "s.json");
  REQUIRE(none.ok());
  CHECK(none->config.scale.mode == ScaleMode::None);
}

TEST_CASE("session: malformed JSON names the line and column") {
  const Error e = parse_error_of("{\"format\": \"attention-lab/session\",\n  \"version\": 1,\n  \"x\": [1, 2,, 3]\n}");
  CHECK(e.code == ErrorCode::ParseError);
  CHECK(contains(e.message, "s.json is not valid JSON"));
  CHECK(contains(e.message, "line 3, column 14"));
}

TEST_CASE("session: wrong format, version, or not an object") {
  Error e = parse_error_of(R"({"format": "something-else", "version": 1})");
  CHECK(e.code == ErrorCode::UnsupportedFormat);
  CHECK(contains(e.message, R"(format is "something-else", not "attention-lab/session")"));

  e = parse_error_of(R"({"version": 1})");
  CHECK(e.code == ErrorCode::MissingInput);
  CHECK(contains(e.message, "\"format\""));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 2})");
  CHECK(e.code == ErrorCode::UnsupportedFormat);
  CHECK(contains(e.message, "version is 2; this Attention Lab reads version 1"));

  e = parse_error_of(R"({"format": "attention-lab/session"})");
  CHECK(contains(e.message, "\"version\" is missing"));

  e = parse_error_of("[1, 2, 3]");
  CHECK(contains(e.message, "not a JSON object"));
}

TEST_CASE("session: unknown and duplicate keys are errors that name them") {
  std::string text = small_session();
  text.replace(text.find("\"weights\""), 9, "\"wieghts\"");
  Error e = parse_error_of(text);
  CHECK(e.code == ErrorCode::ParseError);
  CHECK(contains(e.message, "unknown key 'wieghts'"));

  e = parse_error_of(small_session(R"(, "d_modle": 2)"));
  CHECK(contains(e.message, "unknown key 'config.d_modle'"));
  CHECK(contains(e.message, "d_model"));  // the list of allowed keys

  e = parse_error_of(small_session(R"(, "mask": {"casual": true})"));
  CHECK(contains(e.message, "unknown key 'config.mask.casual'"));

  e = parse_error_of(small_session("", "[[1, 0], [0, 1]]", R"(, "w_x": [[1]])"));
  CHECK(contains(e.message, "unknown key 'weights.w_x'"));

  e = parse_error_of(small_session(R"(, "num_heads": 2)"));
  CHECK(contains(e.message, "the key \"config.num_heads\" appears twice, at line 2, column 28 and at line 2, column 44"));
}

TEST_CASE("session: wrong types name the JSON path") {
  Error e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "config": {"d_model": "8"}})");
  CHECK(e.code == ErrorCode::ParseError);
  CHECK(contains(e.message, "config.d_model must be a positive whole number, but it is the string \"8\""));

  e = parse_error_of(small_session(R"(, "bias": "yes")"));
  CHECK(contains(e.message, "config.bias must be true or false"));

  e = parse_error_of(small_session(R"(, "dropout": {"p": "0.1"})"));
  CHECK(contains(e.message, "config.dropout.p must be a number"));

  e = parse_error_of(small_session(R"(, "dropout": {"seed": -1})"));
  CHECK(contains(e.message, "config.dropout.seed must not be negative"));

  e = parse_error_of(small_session(R"(, "scale": "sqrt")"));
  CHECK(contains(e.message, "config.scale is \"sqrt\""));

  e = parse_error_of(small_session(R"(, "mode": "projected")"));
  CHECK(contains(e.message, "config.mode is \"projected\""));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "config": {"num_heads": 0}})");
  CHECK(contains(e.message, "config.num_heads must be at least 1"));

  std::string text = small_session();
  text.replace(text.find("[[1, 2], [3, 4]]"), 16, R"([[1, 2], [3, 4], [5, "six"]])");
  e = parse_error_of(text);
  CHECK(contains(e.message, "weights.w_q[2][1] must be a number"));
  CHECK(contains(e.message, "\"six\""));

  e = parse_error_of(small_session("", "\"x\""));
  CHECK(contains(e.message, "x must be a matrix"));
}

TEST_CASE("session: ragged, empty, too deep and too large matrices") {
  Error e = parse_error_of(small_session("", "[[1, 0], [0, 1, 2]]"));
  CHECK(e.code == ErrorCode::ShapeMismatch);
  CHECK(contains(e.message, "x[1] has 3 entries but x[0] has 2"));

  e = parse_error_of(small_session("", "[[1, 0], 5]"));
  CHECK(contains(e.message, "x[1] is the number 5 where an array of 2 entries is expected"));

  e = parse_error_of(small_session("", "[[1, [0]], [0, 1]]"));
  CHECK(contains(e.message, "x[0][1] must be a number"));

  e = parse_error_of(small_session("", "[]"));
  CHECK(contains(e.message, "x is empty"));

  e = parse_error_of(small_session("", "[[[[[1]]]]]"));
  CHECK(contains(e.message, "more than 4 levels"));

  e = parse_error_of(small_session("", "[[1e39, 0], [0, 1]]"));
  CHECK(contains(e.message, "x[0][0] is 1e+39, too large for a float32"));

  e = parse_error_of(small_session("", "[1, 0]"));
  CHECK(contains(e.message, "x has shape 2; it must be B x L x d_model"));
}

TEST_CASE("session: non-finite values travel as strings and are kept") {
  auto r = parse_session_json(small_session("", R"([["NaN", "Infinity"], ["-Infinity", 1]])"), "", "s.json");
  REQUIRE(r.ok());
  CHECK(std::isnan(r->x->data[0]));
  CHECK(r->x->data[1] == std::numeric_limits<float>::infinity());
  CHECK(r->x->data[2] == -std::numeric_limits<float>::infinity());
  const std::string json = session_to_json(*r);
  CHECK(contains(json, R"(["NaN", "Infinity"])"));
  CHECK(contains(json, R"(["-Infinity", 1])"));
}

TEST_CASE("session: shapes that do not fit are refused with both shapes named") {
  Error e = parse_error_of(small_session("", "[[1, 0, 2], [0, 1, 2]]"));
  CHECK(e.code == ErrorCode::ShapeMismatch);
  CHECK(contains(e.message, "s.json: "));
  CHECK(contains(e.message, "1x2x3"));
  CHECK(contains(e.message, "d_model is 2"));

  e = parse_error_of(small_session("", "[[1, 0], [0, 1]]").replace(
      small_session().find("[[1, 2], [3, 4]]"), 16, "[[1, 2, 3], [3, 4, 5]]"));
  CHECK(e.code == ErrorCode::ShapeMismatch);
  CHECK(contains(e.message, "w_q has shape 2x3"));

  // Seed 002's mistake: a 9-long mask for 10 keys.
  const std::string nine = R"({"format": "attention-lab/session", "version": 1,
    "config": {"mode": "direct", "attention": "cross", "mask": {"key_padding": [[0, 0, 1, 1, 0, 0, 0, 0, 0]]}},
    "q": {"random": {"shape": [1, 5, 4], "seed": 1}}, "k": {"random": {"shape": [1, 10, 4], "seed": 2}},
    "v": {"random": {"shape": [1, 10, 4], "seed": 2}}})";
  e = parse_error_of(nine);
  CHECK(e.code == ErrorCode::MaskShapeMismatch);
  CHECK(contains(e.message, "1x9"));
  CHECK(contains(e.message, "1x10"));

  e = parse_error_of(small_session(R"(, "mask": {"key_padding": [[1, 0.5]]})"));
  CHECK(contains(e.message, "config.mask.key_padding[0][1] is 0.5"));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "config": {"num_heads": 3},
    "x": {"random": {"shape": [2, 8]}}, "weights": {"w_q": {"random": {"shape": [8, 8]}},
    "w_k": {"random": {"shape": [8, 8]}}, "w_v": {"random": {"shape": [8, 8]}}, "w_o": {"random": {"shape": [8, 8]}}}})");
  CHECK(e.code == ErrorCode::HeadsDoNotDivide);

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "tokens": ["a", "b", "c"],
    "config": {"mode": "direct"}, "q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]})");
  CHECK(contains(e.message, "the number of labels in tokens (3) is not the number of positions of q (2, shape"));
}

TEST_CASE("session: missing inputs are named") {
  Error e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "config": {"mode": "direct"},
    "q": [[1, 0]], "k": [[1, 0]]})");
  CHECK(e.code == ErrorCode::MissingInput);
  CHECK(contains(e.message, "needs v"));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "config": {"attention": "cross"}})");
  CHECK(e.code == ErrorCode::MissingInput);
  CHECK(contains(e.message, "x_q"));

  e = parse_error_of(small_session(R"(, "bias": true)"));
  CHECK(e.code == ErrorCode::MissingInput);
  CHECK(contains(e.message, "b_q"));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "x": [[1]], "x_q": [[1]]})");
  CHECK(contains(e.message, "both \"x\" and \"x_q\""));
}

TEST_CASE("session: torch layout equals math layout transposed, separate and fused") {
  const std::string math = R"({"format": "attention-lab/session", "version": 1,
    "config": {"d_model": 2, "num_heads": 1, "bias": true},
    "x": [[1, 2], [3, -1], [0.5, 0.5]],
    "weights": {"layout": "math",
      "w_q": [[1, 2], [3, 4]], "b_q": [0.1, 0.2], "w_k": [[0, 1], [1, 0]], "b_k": [0, 0],
      "w_v": [[2, 0], [1, 1]], "b_v": [1, -1], "w_o": [[1, -1], [0.5, 2]], "b_o": [0, 0.5]}})";
  const std::string torch = R"({"format": "attention-lab/session", "version": 1,
    "config": {"d_model": 2, "num_heads": 1, "bias": true},
    "x": [[1, 2], [3, -1], [0.5, 0.5]],
    "weights": {"layout": "torch",
      "w_q": [[1, 3], [2, 4]], "b_q": [0.1, 0.2], "w_k": [[0, 1], [1, 0]], "b_k": [0, 0],
      "w_v": [[2, 1], [0, 1]], "b_v": [1, -1], "w_o": [[1, 0.5], [-1, 2]], "b_o": [0, 0.5]}})";
  auto a = parse_session_json(math, "", "math.json");
  auto b = parse_session_json(torch, "", "torch.json");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  check_same_session(*a, *b);

  // nn.Linear(d, 3d).weight is (3d, d): rows 0..d-1 make Q, then K, then V.
  const std::string fused_torch = R"({"format": "attention-lab/session", "version": 1,
    "config": {"d_model": 2, "num_heads": 1, "bias": false},
    "x": [[1, 2], [3, -1], [0.5, 0.5]],
    "weights": {"layout": "torch", "w_qkv": [[1, 3], [2, 4], [0, 1], [1, 0], [2, 1], [0, 1]],
      "w_o": [[1, 0.5], [-1, 2]]}})";
  auto f = parse_session_json(fused_torch, "", "fused.json");
  REQUIRE(f.ok());
  const Tensor& w = *f->weights.w_qkv;
  REQUIRE(w.shape == std::vector<Index>{2, 6});
  // Math layout (d, 3d) = [W_Q | W_K | W_V] with the math matrices above.
  CHECK(w.data == std::vector<float>{1, 2, 0, 1, 2, 0, 3, 4, 1, 0, 1, 1});

  // And the computed outputs agree between the two layouts.
  auto ta = compute(*a);
  auto tb = compute(*b);
  REQUIRE(ta.ok());
  REQUIRE(tb.ok());
  CHECK((*ta)->stage(Stage::Output).data == (*tb)->stage(Stage::Output).data);
}

TEST_CASE("session: the random generator is al::random_normal with the given shape, seed and std") {
  auto r = parse_session_json(R"({"format": "attention-lab/session", "version": 1, "config": {"mode": "direct"},
    "q": {"random": {"shape": [3, 4], "seed": 7, "std": 0.5}}, "k": {"random": {"shape": [3, 4]}},
    "v": {"random": {"shape": [3, 4], "seed": 7, "std": 0.5}}})",
                              "", "s.json");
  REQUIRE(r.ok());
  CHECK(r->q->shape == std::vector<Index>{1, 3, 4});
  CHECK(r->q->data == random_normal({3, 4}, 7, 0.5).data);
  CHECK(r->k->data == random_normal({3, 4}, 0, 1.0).data);  // seed 0, std 1 by default
  CHECK(*r->q == *r->v);

  Error e = parse_error_of(R"({"format": "attention-lab/session", "version": 1,
    "x": {"random": {"shape": [100000, 100000, 100000]}}})");
  CHECK(e.code == ErrorCode::TooLarge);
  CHECK(contains(e.message, "x.random.shape"));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "x": {"random": {"seed": 1}}})");
  CHECK(contains(e.message, "x.random needs a \"shape\""));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "x": {"random": {"shape": [2], "sd": 1}}})");
  CHECK(contains(e.message, "unknown key 'x.random.sd'"));

  e = parse_error_of(R"({"format": "attention-lab/session", "version": 1, "x": {"npy": "a.npy", "csv": "b.csv"}})");
  CHECK(contains(e.message, "exactly one key"));
}

TEST_CASE("session: session_to_json then parse gives the same session (exact floats)") {
  Session s;
  s.config.mode = InputMode::Projection;
  s.config.attention = AttentionKind::Cross;
  s.config.d_model = 4;
  s.config.num_heads = 2;
  s.config.bias = true;
  s.config.scale = {ScaleMode::Custom, 0.1};
  s.config.mask.causal = true;
  s.config.mask.key_padding = make_tensor(Tensor({2, 3}, std::vector<float>{1, 1, 0, 1, 0, 0}));
  s.config.mask.custom = make_tensor(Tensor({2, 3}, std::vector<float>{1, 0, 1, 1, 1, 0}));
  s.config.mask_fill = -1e-20;
  s.config.dropout = {0.3, true, 12345678901234567890ull};
  s.tokens = {"le", std::string("\"chat\"\n\0!", 9)};  // escaped on the way out, a NUL kept
  s.tokens_kv = {"the", "cat", "\xe7\x8c\xab"};
  Tensor x = random_normal({2, 2, 4}, 1, 1.0);
  x.data[3] = std::numeric_limits<float>::quiet_NaN();
  x.data[4] = -std::numeric_limits<float>::infinity();
  x.data[5] = std::numeric_limits<float>::denorm_min();
  x.data[6] = std::numeric_limits<float>::max();
  x.data[7] = -0.0f;
  x.data[8] = 0.1f;
  s.x = make_tensor(x);
  s.x_kv = make_tensor(random_normal({2, 3, 4}, 2, 3.0));
  s.weights.w_qkv = make_tensor(random_normal({4, 12}, 3, 0.5));
  s.weights.b_qkv = make_tensor(random_normal({12}, 4, 0.1));
  s.weights.w_q = make_tensor(random_normal({4, 4}, 5, 0.5));  // kept alongside the fused weight
  s.weights.w_o = make_tensor(random_normal({4, 4}, 6, 0.5));
  s.weights.b_o = make_tensor(random_normal({4}, 7, 0.1));

  const std::string text = session_to_json(s);
  CHECK(contains(text, "\"layout\": \"math\""));
  CHECK(contains(text, "\"x_q\": "));  // cross attention writes the queries' input as x_q
  auto back = parse_session_json(text, "", "roundtrip.json");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message));
  check_same_session(s, *back);
  CHECK(session_to_json(*back) == text);

  // Other scale and fill spellings, in direct self attention.
  Session d;
  d.config.mode = InputMode::Direct;
  d.config.d_model = 2;
  d.config.num_heads = 1;
  d.config.bias = false;
  d.config.scale = {ScaleMode::None, 1.0};
  d.q = d.k = d.v = make_tensor(Tensor({1, 3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto back_d = parse_session_json(session_to_json(d), "", "d.json");
  REQUIRE(back_d.ok());
  check_same_session(d, *back_d);
}

TEST_CASE("session: save_session_file and load_session_file round-trip; presets survive a save") {
  TempDir dir;
  for (const char* name : {"default", "seed-004-fused", "padded-batch"}) {
    CAPTURE(name);
    auto preset = load_preset(name);
    REQUIRE(preset.ok());
    const std::string path = (dir.path / (std::string(name) + ".json")).string();
    REQUIRE_FALSE(save_session_file(path, *preset).has_value());
    auto back = load_session_file(path);
    REQUIRE(back.ok());
    check_same_session(*preset, *back);
  }
}

TEST_CASE("session: {\"npy\": ...} and {\"csv\": ...} are read relative to the session's folder") {
  TempDir dir;
  Tensor x({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6});
  dir.write("data/x.npy", npy_bytes(x));
  dir.write("data/w.csv", "1,0\n0,1\n1,1\n");
  const std::string session = R"({"format": "attention-lab/session", "version": 1, "config": {"mode": "direct"},
    "q": {"npy": "data/x.npy"}, "k": {"npy": "./data/../data/x.npy"}, "v": {"csv": "data/w.csv"}})";
  const std::string path = dir.write("s.json", session);
  auto r = load_session_file(path);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  CHECK(r->q->shape == std::vector<Index>{1, 3, 2});
  CHECK(r->q->data == x.data);
  CHECK(*r->k == *r->q);
  CHECK(r->v->data == std::vector<float>{1, 0, 0, 1, 1, 1});
}

TEST_CASE("session: npy references that escape, are missing, or are unreadable") {
  TempDir dir;
  auto load = [&](const std::string& q_ref) {
    const std::string text = R"({"format": "attention-lab/session", "version": 1, "config": {"mode": "direct"},
      "q": )" + q_ref + R"(, "k": [[1, 0]], "v": [[1, 0]]})";
    auto r = load_session_file(dir.write("sub/s.json", text));
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  dir.write("outside.npy", npy_bytes(Tensor({1, 2})));
  Error e = load(R"({"npy": "../outside.npy"})");
  CHECK(e.code == ErrorCode::InvalidConfig);
  CHECK(contains(e.message, "q.npy is \"../outside.npy\", which is outside the session's folder"));

  e = load(R"({"npy": "a/../../outside.npy"})");
  CHECK(contains(e.message, "outside the session's folder"));

  e = load("{\"npy\": \"" + (dir.path / "outside.npy").string() + "\"}");
  CHECK(contains(e.message, "an absolute path; use a path relative to the folder of the session file"));

  e = load(R"({"npy": "absent.npy"})");
  CHECK(e.code == ErrorCode::IoError);
  CHECK(contains(e.message, "absent.npy"));
  CHECK(contains(e.message, "does not exist"));

  std::string big_endian = npy_bytes(Tensor({1, 2}));
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  dir.write("sub/be.npy", big_endian);
  e = load(R"({"npy": "be.npy"})");
  CHECK(e.code == ErrorCode::UnsupportedFormat);
  CHECK(contains(e.message, "be.npy"));
  CHECK(contains(e.message, "big-endian"));

  std::string truncated = npy_bytes(Tensor({1, 2}));
  dir.write("sub/cut.npy", truncated.substr(0, truncated.size() - 3));
  e = load(R"({"npy": "cut.npy"})");
  CHECK(e.code == ErrorCode::ParseError);
  CHECK(contains(e.message, "truncated"));

  // Text without a folder (a preset, a pasted string) cannot refer to files.
  auto no_folder = parse_session_json(R"({"format": "attention-lab/session", "version": 1, "x": {"npy": "x.npy"}})",
                                      "", "pasted");
  REQUIRE_FALSE(no_folder.ok());
  CHECK(contains(no_folder.error().message, "no folder"));
}

TEST_CASE("session: load_session_file and load_session_or_preset report missing files and names") {
  auto missing = load_session_file("/nonexistent/folder/s.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::IoError);
  CHECK(contains(missing.error().message, "/nonexistent/folder/s.json"));

  auto path_like = load_session_or_preset("no-such-session.json");
  REQUIRE_FALSE(path_like.ok());
  CHECK(path_like.error().code == ErrorCode::IoError);

  auto unknown = load_session_or_preset("no-such-preset");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == ErrorCode::UnknownPreset);
  CHECK(contains(unknown.error().message, "neither a session file nor a preset"));
  CHECK(contains(unknown.error().message, "default"));

  auto preset = load_session_or_preset("default");
  CHECK(preset.ok());
}

TEST_CASE("tensor_to_json: compact nested arrays with non-finite values as strings") {
  Tensor t({2, 1, 2}, std::vector<float>{1, 0.5f, std::numeric_limits<float>::quiet_NaN(),
                                         -std::numeric_limits<float>::infinity()});
  CHECK(tensor_to_json(t) == R"([[[1,0.5]],[["NaN","-Infinity"]]])");
  CHECK(tensor_to_json(Tensor({3}, std::vector<float>{0.1f, -2, 1e-20f})) == "[0.1,-2,1e-20]");
}

TEST_CASE("session: today's attention keys are read, saved only when set, and read back (issue 14)") {
  const std::string gqa_weights = R"({"w_q": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
     "w_k": [[1, 0], [0, 1], [1, 1], [0, 0]], "w_v": [[0, 1], [1, 0], [0, 0], [1, 1]],
     "w_o": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]})";
  const std::string text = R"({"format": "attention-lab/session", "version": 1,
    "config": {"d_model": 4, "num_heads": 2, "num_kv_heads": 1,
               "positional": {"type": "rope", "rope_style": "interleaved", "rope_base": 500},
               "mask": {"causal": true, "window": 2, "global_tokens": [0]}},
    "x": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], "weights": )" + gqa_weights + "}";
  auto r = parse_session_json(text, "", "s.json");
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  const Config& c = r->config;
  CHECK(c.num_kv_heads == 1);
  CHECK(c.positional.type == PositionalType::Rope);
  CHECK(c.positional.rope_style == RopeStyle::Interleaved);
  CHECK(c.positional.rope_base == 500.0);
  CHECK(c.mask.window == 2);
  CHECK(c.mask.global_tokens == std::vector<Index>{0});
  const std::string saved = session_to_json(*r);
  CHECK(contains(saved, R"("num_kv_heads": 1)"));
  CHECK(contains(saved, R"("positional": {"type": "rope", "rope_style": "interleaved", "rope_base": 500})"));
  CHECK(contains(saved, R"("window": 2, "global_tokens": [0])"));
  auto again = parse_session_json(saved, "", "again.json");
  REQUIRE(again.ok());
  CHECK(again->config.positional == c.positional);
  CHECK(again->config.mask.window == 2);
  CHECK(again->config.num_kv_heads == 1);

  // Without the new options nothing new is written: older sessions save as before.
  auto plain = parse_session_json(small_session(), "", "s.json");
  REQUIRE(plain.ok());
  const std::string plain_saved = session_to_json(*plain);
  for (const char* key : {"num_kv_heads", "positional", "window", "global_tokens"}) CHECK_FALSE(contains(plain_saved, key));

  // Bad values name the key.
  CHECK(contains(parse_error_of(small_session(R"(, "positional": {"type": "rotary"})")).message, "\"rotary\""));
  CHECK(contains(parse_error_of(small_session(R"(, "positional": {"type": "alibi", "rope_base": 10})")).message,
                 "only for \"type\": \"rope\""));
  CHECK(contains(parse_error_of(small_session(R"(, "mask": {"window": 0})")).message, "config.mask.window"));
  CHECK(contains(parse_error_of(small_session(R"(, "mask": {"global_tokens": [-1]})")).message,
                 "config.mask.global_tokens[0]"));
  CHECK(contains(parse_error_of(small_session(R"(, "num_kv_heads": 2)")).message, "num_kv_heads"));
}
