// Every step's text, rendered for every preset and for edited sessions in both
// languages, against numbers computed here by explicit loops from the trace's
// earlier stages: a sentence that depends on the session may only say what the
// session does ("≈ 0" only when the largest masked weight is below 1e-3, the
// scale the session uses, cross attention's X_kv, direct mode's missing W's,
// b_O only with bias, α′ and no "average" with dropout). Also: the messages of bad
// session files in Chinese, the timeline labels and the presets' Chinese descriptions.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "editing/import.hpp"
#include "numerics/attention.hpp"
#include "teaching/lab_numbers.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "teaching/message_patterns.hpp"
#include "teaching/stage_text.hpp"

using namespace al;

namespace {

using Table = std::map<std::string, std::string>;

// Every assets/i18n/*<lang>.json merged, as the app does.
Table load_table(const std::string& lang) {
  Table table;
  const std::string suffix = lang + ".json";
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTENTION_LAB_SOURCE_DIR) + "/assets/i18n")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::ifstream in(entry.path());
    const auto json = nlohmann::json::parse(in);
    for (auto& [key, value] : json.items()) table[key] = value.get<std::string>();
  }
  return table;
}

const Table& table(bool chinese) {
  static const Table en = load_table("en"), zh = load_table("zh");
  return chinese ? zh : en;
}

// A lookup that fails the test on a key missing in that language.
TextLookup lookup_in(bool chinese) {
  return [chinese](const std::string& key) {
    auto it = table(chinese).find(key);
    CHECK_MESSAGE(it != table(chinese).end(), "missing key " << key << (chinese ? " (zh)" : " (en)"));
    return it == table(chinese).end() ? key : it->second;
  };
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The largest softmax weight on a masked cell (rows not fully masked), by an
// explicit loop in double from the trace's scaled scores, the mask and the fill.
double masked_weight_by_loop(const Trace& t) {
  if (!t.mask) return 0;
  const Dims& d = t.dims;
  const Tensor& scaled = t.stage(Stage::Scaled);  // (B, h, Lq, Lk)
  double largest = 0;
  for (Index b = 0; b < d.batch; ++b)
    for (Index h = 0; h < d.heads; ++h)
      for (Index i = 0; i < d.len_q; ++i) {
        std::vector<double> row(static_cast<size_t>(d.len_kv));
        bool any_kept = false;
        for (Index j = 0; j < d.len_kv; ++j) {
          const bool kept = t.mask->at({b, i, j}) != 0.0f;
          any_kept = any_kept || kept;
          row[size_t(j)] = kept ? scaled.at({b, h, i, j}) : t.mask_fill;
        }
        if (!any_kept) continue;
        double top = -INFINITY, sum = 0;
        for (double v : row) top = std::max(top, v);
        for (double v : row) sum += std::exp(v - top);
        for (Index j = 0; j < d.len_kv; ++j)
          if (t.mask->at({b, i, j}) == 0.0f) largest = std::max(largest, std::exp(row[size_t(j)] - top) / sum);
      }
  return largest;
}

// Var of q_i·k_j over every head, batch item and cell, each dot product by a loop in double.
double score_variance_by_loop(const Trace& t) {
  const Dims& d = t.dims;
  std::vector<double> scores;
  for (Index b = 0; b < d.batch; ++b)
    for (Index h = 0; h < d.heads; ++h)
      for (Index i = 0; i < d.len_q; ++i)
        for (Index j = 0; j < d.len_kv; ++j) {
          double s = 0;
          for (Index p = 0; p < d.d_k; ++p) s += double(t.stage(Stage::Q).at({b, h, i, p})) * t.stage(Stage::K).at({b, h, j, p});
          scores.push_back(s);
        }
  double mean = 0, squares = 0;
  for (double s : scores) mean += s;
  mean /= double(scores.size());
  for (double s : scores) squares += (s - mean) * (s - mean);
  return squares / double(scores.size() - 1);
}

// The number after `label` in `text` ("… have variance 6.7, …").
double number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << label << "' in: " << text);
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

// English words in a Chinese text: identifiers a learner reads as code or math are allowed.
std::vector<std::string> english_words(const std::string& text) {
  static const std::set<std::string> allowed = {
      "softmax", "Softmax", "dropout", "Dropout", "PyTorch", "torch", "masked_fill", "scaled_dot_product_attention",
      "MultiheadAttention", "key_padding_mask", "attn_mask", "True", "False", "Concat", "Output", "exp", "max",
      "NaN", "inf", "mask_ij", "d_model", "d_k", "W_O", "W_Q", "W_K", "W_V", "b_O", "X_q", "X_kv", "float32",
      "float64", "Lq", "Lk", "FlashAttention", "Flash", "QKV", "nn", "F", "FLOPs", "SRAM", "HBM", "GPU", "fill",
      "Ctrl", "Attention", "forward", "diag", "elu", "concat",
      "LaTeX", "Markdown", "default",  // file formats, and the name of a built-in example
      "JSON", "true", "false", "null"};
  std::vector<std::string> found;
  // Placeholders, "quoted" values and dotted paths (config.mask.custom) a learner types in a session file.
  static const std::regex placeholder("\\{[a-z_]+\\}|\"[^\"]*\"|[a-z_]+(\\.[a-z_]+)+");
  const std::string prose = std::regex_replace(text, placeholder, "");
  static const std::regex word("[A-Za-z_][A-Za-z_0-9]{3,}");
  for (auto it = std::sregex_iterator(prose.begin(), prose.end(), word); it != std::sregex_iterator(); ++it)
    if (!allowed.count(it->str()) && it->str().find('_') == std::string::npos)  // x_kv, W_QKV: math
      found.push_back(it->str());
  return found;
}

struct Case {
  std::string name;
  Session session;
};

Session edited(const char* preset, const std::function<void(Session&)>& edit) {
  auto s = load_preset(preset);
  REQUIRE(s.ok());
  edit(*s);
  return *s;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const PresetInfo& p : list_presets()) out.push_back({p.name, *load_preset(p.name)});
  auto causal = [](Session& s) { s.config.mask.causal = true; };
  out.push_back({"fill -1e-20", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = -1e-20; })});
  out.push_back({"fill 0", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = 0; })});
  out.push_back({"fill -1e9", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = -1e9; })});
  out.push_back({"scale none", edited("default", [](Session& s) { s.config.scale = {ScaleMode::None, 1.0}; })});
  out.push_back({"scale custom", edited("default", [](Session& s) { s.config.scale = {ScaleMode::Custom, 0.5}; })});
  out.push_back({"dropout on", edited("default", [](Session& s) { s.config.dropout = {0.3, true, 7}; })});
  out.push_back({"no bias", edited("default", [](Session& s) { s.config.bias = false; })});
  // Batch item 0 keeps no key: every row of it is fully masked.
  auto no_keys = [](Session& s) {
    auto padding = std::make_shared<Tensor>(std::vector<Index>{s.batch(), s.len_kv()}, 1.0f);
    for (Index j = 0; j < s.len_kv(); ++j) padding->data[size_t(j)] = 0.0f;
    s.config.mask.key_padding = padding;
  };
  out.push_back({"fully masked -inf", edited("default", no_keys)});
  out.push_back({"fully masked -1e9", edited("default", [&](Session& s) { no_keys(s); s.config.mask_fill = -1e9; })});
  return out;
}

}  // namespace

TEST_CASE("every step's text is true to its session, in English and Chinese") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    auto traced = compute(c.session);
    REQUIRE_MESSAGE(traced.ok(), traced.error().message);
    const Trace& t = **traced;
    const Config& config = c.session.config;
    const bool has_mask = config.mask.causal || config.mask.key_padding || config.mask.custom;
    const bool dropout = config.dropout.training && config.dropout.p > 0;
    const bool cross = config.attention == AttentionKind::Cross, direct = config.mode == InputMode::Direct;
    const double leak = masked_weight_by_loop(t);
    const bool fill_is_minus_inf = std::isinf(config.mask_fill) && config.mask_fill < 0;
    for (bool chinese : {false, true}) {
      CAPTURE(chinese);
      std::map<Step, StepText> texts;
      for (int i = 0; i < kStepCount; ++i) {
        const Step step = static_cast<Step>(i);
        const StepText text = step_text(step, c.session, &t, lookup_in(chinese), chinese);
        CAPTURE(step_id(step));
        CHECK_FALSE(text.title.empty());
        CHECK_FALSE(text.explain.empty());
        for (const std::string* s : {&text.title, &text.numbers, &text.explain})
          CHECK_MESSAGE(!contains(*s, "{"), "a placeholder was not filled: " << *s);
        if (chinese)
          for (const std::string* s : {&text.title, &text.numbers, &text.explain})
            CHECK_MESSAGE(english_words(*s).empty(), "English in the Chinese text: " << *s);
        texts[step] = text;
      }
      const StepText& x = texts[Step::X];
      const StepText& qkv = texts[Step::Qkv];
      const StepText& scaled = texts[Step::Scaled];
      const StepText& masked = texts[Step::Masked];

      // Inputs: direct mode has no X and no W's; cross attention projects K and V from X_kv.
      if (direct) {
        CHECK_FALSE(contains(x.formula + qkv.formula + x.title + qkv.title, "X"));
        CHECK_FALSE(contains(qkv.formula, "W_"));
      } else {
        CHECK(contains(qkv.formula, cross ? "K = X_kv·W_K" : "K = X·W_K"));
        CHECK(contains(qkv.formula, cross ? "Q = X_q·W_Q" : "Q = X·W_Q"));
        CHECK(contains(qkv.formula, "+ b_K") == config.bias);
      }
      // Output projection: + b_O exactly when there is a W_O and bias is on.
      const bool has_w_o = c.session.weights.w_o != nullptr;
      CHECK(contains(texts[Step::WO].formula, "W_O") == has_w_o);
      CHECK(contains(texts[Step::WO].formula, "+ b_O") == (has_w_o && config.bias));
      CHECK(contains(texts[Step::Output].formula, "+ b_O") == (has_w_o && config.bias));
      CHECK(contains(texts[Step::Output].formula, "+ M") == (has_mask && fill_is_minus_inf));

      // Scale: title, formula and timeline name the factor in use.
      const std::string scale_labels = scaled.title + scaled.formula + scaled.timeline;
      switch (config.scale.mode) {
        case ScaleMode::SqrtDk:
          CHECK(contains(scaled.formula, "√d_k"));
          CHECK(contains(scaled.timeline, "√d_k"));
          CHECK(contains(scaled.title, "√d_k"));
          break;
        case ScaleMode::None:
          CHECK_FALSE(contains(scale_labels, "√d_k"));
          CHECK(scaled.timeline == "×1");
          break;
        case ScaleMode::Custom:
          CHECK_FALSE(contains(scale_labels, "√d_k"));
          CHECK(contains(scaled.formula, lab_number(config.scale.factor)));
          CHECK(contains(scaled.title, lab_number(config.scale.factor)));
          CHECK(scaled.timeline == "×" + lab_number(config.scale.factor));
          break;
      }
      // The measured variance is this example's, not the assumption's 1.
      if (!chinese && t.dims.len_q * t.dims.len_kv * t.dims.heads * t.dims.batch * t.dims.d_k <= 4000000) {
        const double raw = score_variance_by_loop(t);
        CHECK(number_after(scaled.numbers, "the scores have variance ") == doctest::Approx(raw).epsilon(2e-3));
        if (config.scale.mode != ScaleMode::None)
          CHECK(number_after(scaled.numbers, "the scaled scores ") ==
                doctest::Approx(raw * t.scale * t.scale).epsilon(2e-3));
      }

      // Mask: "≈ 0" only when the largest masked weight is below 1e-3; a leak is quoted.
      const bool says_nearly_zero = contains(masked.explain, "≈ 0");
      if (!has_mask) {
        CHECK_FALSE(says_nearly_zero);
      } else if (fill_is_minus_inf) {
        CHECK(leak == 0.0);
      } else {
        CHECK(says_nearly_zero == (leak < 1e-3));
        if (leak >= 1e-3) CHECK(contains(masked.explain, lab_number(leak)));
      }
      if (t.any_fully_masked()) {
        CHECK(contains(masked.explain, fill_is_minus_inf ? "exp(−∞ − (−∞))" : lab_number(1.0 / double(t.dims.len_kv))));
        if (fill_is_minus_inf) CHECK(contains(masked.explain, "2.5"));
      }
      CHECK_FALSE(contains(masked.explain, "0/0"));

      // Dropout: α′ rows do not sum to 1, so the context is not called an average.
      CHECK(contains(texts[Step::Context].formula, "α′") == dropout);
      if (!chinese) CHECK(contains(texts[Step::Context].explain, "average of the value rows") == !dropout);
      if (chinese) CHECK(contains(texts[Step::Context].explain, "加权平均：") == !dropout);
      CHECK(contains(texts[Step::Weights].explain, chinese ? "非负" : "non-negative"));
    }
  }
}

TEST_CASE("the timeline labels and titles need no trace and follow the scale") {
  Session s = *load_preset("default");
  s.config.scale = {ScaleMode::Custom, 0.25};
  CHECK(step_timeline(Step::Scaled, s, lookup_in(false)) == "×0.25");
  CHECK(step_title(Step::Scaled, s, lookup_in(false)) == "Scaling by a custom factor 0.25");
  s.config.scale = {ScaleMode::None, 1.0};
  CHECK(step_timeline(Step::Scaled, s, lookup_in(false)) == "×1");
  CHECK(scaled_scores_symbol(s) == "QKᵀ");
  s.config.scale = {ScaleMode::SqrtDk, 1.0};
  CHECK(scaled_scores_symbol(s, "S") == "S/√d_k");
  // The word labels are in the reader's language (softmax and dropout are names in both).
  const std::vector<std::pair<Step, std::pair<std::string, std::string>>> words = {
      {Step::Masked, {"mask", "掩码"}},        {Step::Weights, {"softmax", "softmax"}},
      {Step::Dropped, {"dropout", "dropout"}}, {Step::Concat, {"concat", "拼接"}},
      {Step::Output, {"output", "输出"}}};
  for (const auto& [step, labels] : words) {
    CHECK(step_timeline(step, s, lookup_in(false)) == labels.first);
    CHECK(step_timeline(step, s, lookup_in(true)) == labels.second);
  }
  for (int i = 0; i < kStepCount; ++i)
    CHECK(english_words(step_timeline(static_cast<Step>(i), s, lookup_in(true))).empty());
}

TEST_CASE("every translation key exists in both languages, and Chinese texts are in Chinese") {
  const Table& en = table(false);
  const Table& zh = table(true);
  for (const auto& [key, text] : en) CHECK_MESSAGE(zh.count(key), "no Chinese text for " << key);
  // A Chinese error detail has no English twin: English shows the core's own message.
  for (const auto& [key, text] : zh)
    if (key.rfind("error.", 0) != 0 || key.find(".detail") == std::string::npos)
      CHECK_MESSAGE(en.count(key), "no English text for " << key);
  for (const auto& [key, text] : zh) {
    CAPTURE(key);
    const auto words = english_words(text);
    CHECK_MESSAGE(words.empty(), "English words in the Chinese text: " << text);
  }
}

namespace {
// The key each query of head `head` (batch item 0) weighs most, from the trace's weights.
std::vector<Index> favourite_keys(const Trace& t, Index head) {
  std::vector<Index> keys;
  const auto w = t.stage(Stage::Weights).matrix(head);  // (Lq, Lk) of batch item 0
  for (Index i = 0; i < w.rows(); ++i) {
    Index best = 0;
    for (Index j = 1; j < w.cols(); ++j)
      if (w(i, j) > w(i, best)) best = j;
    keys.push_back(best);
  }
  return keys;
}
std::string description_of(const std::string& preset) {
  for (const PresetInfo& p : list_presets())
    if (p.name == preset) return p.description;
  return "";
}
}  // namespace

TEST_CASE("the heads a preset's description names are the heads where the trace shows the pattern") {
  {
    const auto traced = compute(*load_preset("default"));
    const Trace& t = **traced;
    CHECK(contains(description_of("default"), "head 0 looks at the previous word"));
    // "the cat sat on the mat": from "cat" on, head 0 weighs the previous token most.
    CHECK(favourite_keys(t, 0) == std::vector<Index>{0, 0, 1, 2, 3, 4});
    CHECK(favourite_keys(t, 1) != std::vector<Index>{0, 0, 1, 2, 3, 4});
  }
  {
    const auto traced = compute(*load_preset("cross-attention"));
    const Trace& t = **traced;
    CHECK(contains(description_of("cross-attention"), "head 0 aligns words, head 1 finds the verb"));
    // le → the, chat → cat, dort → sleeping; head 1: every word → "is".
    CHECK(favourite_keys(t, 0) == std::vector<Index>{0, 1, 3});
    CHECK(favourite_keys(t, 1) == std::vector<Index>{2, 2, 2});
  }
}

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
  static const std::regex quoted("“[^”]*”|[0-9]+(x[0-9]+)+");  // and shapes (1x2x2)
  static const std::regex word("[A-Za-z_][A-Za-z_0-9]*");
  // The session format's keys (docs/session-format.md), listed when one is misspelt.
  std::set<std::string> allowed = {"format", "version", "description", "config", "tokens",
                                   "weights", "mode", "attention", "bias", "scale", "mask", "dropout", "causal",
                                   "custom", "training", "seed", "shape", "layout"};
  for (auto it = std::sregex_iterator(own.begin(), own.end(), word); it != std::sregex_iterator(); ++it)
    allowed.insert(it->str());
  std::vector<std::string> found;
  for (const std::string& w : english_words(std::regex_replace(text, quoted, "")))
    if (!allowed.count(w)) found.push_back(w);
  return found;
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
      {head + R"("x": [[1, 2]], "tokens": ["a", "b", "c"])" + "}", {"3", "1"}},
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
      CAPTURE(*chinese); MESSAGE(*chinese);
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

TEST_CASE("every preset has a Chinese description, in Chinese, with the English one's numbers (heads count from 0)") {
  auto numbers = [](const std::string& text) {
    static const std::regex number("[0-9]+(\\.[0-9]+)?");
    std::multiset<std::string> found;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
      found.insert(it->str());
    return found;
  };
  for (const PresetInfo& preset : list_presets()) {
    CAPTURE(preset.name);
    CAPTURE(preset.description_zh);
    REQUIRE_FALSE(preset.description_zh.empty());
    CHECK(english_words(preset.description_zh).empty());
    CHECK(numbers(preset.description_zh) == numbers(preset.description));
  }
  // The heads the two texts name are the same heads.
  for (const PresetInfo& preset : list_presets())
    if (preset.name == "default" || preset.name == "cross-attention") {
      CHECK(contains(preset.description, "head 0"));
      CHECK(contains(preset.description_zh, "头 0"));
      CHECK(contains(preset.description_zh, "头 1"));
    }
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
  fs::remove_all(folder);
}
