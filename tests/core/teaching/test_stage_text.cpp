// Every step's text, rendered for every preset and for edited sessions in both
// languages, against numbers computed here by explicit loops from the trace's
// earlier stages: a sentence that depends on the session may only say what the
// session does ("exactly 0" when every masked weight underflowed, "≈ 0" only when the
// largest masked weight is below 1e-3, the scale the session uses, cross attention's
// X_kv, direct mode's missing W's, b_O only with bias, α′ and no "average" with dropout).
// Also: every key in both languages, the timeline labels and the presets' Chinese descriptions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "i18n_tables.hpp"
#include "numerics/attention.hpp"
#include "teaching/lab_numbers.hpp"
#include "editing/edits.hpp"
#include "io/session_io.hpp"
#include "teaching/stage_text.hpp"

using namespace al;
using namespace al::testing;

namespace {

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

// Whether query i of batch item b has a key to attend to (not fully masked).
bool has_keys(const Trace& t, Index b, Index i) {
  for (Index j = 0; t.mask && j < t.dims.len_kv; ++j)
    if (t.mask->at({b, i, j}) != 0.0f) return true;
  return !t.mask;
}

// The largest weight on a masked cell (rows not fully masked) as the weights stage holds it.
float masked_weight_in_stage(const Trace& t) {
  if (!t.mask) return 0;
  const Dims& d = t.dims;
  const Tensor& weights = t.stage(Stage::Weights);  // (B, h, Lq, Lk)
  float largest = 0;
  for (Index b = 0; b < d.batch; ++b)
    for (Index i = 0; i < d.len_q; ++i) {
      if (!has_keys(t, b, i)) continue;
      for (Index h = 0; h < d.heads; ++h)
        for (Index j = 0; j < d.len_kv; ++j)
          if (t.mask->at({b, i, j}) == 0.0f) largest = std::max(largest, weights.at({b, h, i, j}));
    }
  return largest;
}

// Whether a row with a key to attend to has a NaN weight, by a loop over the weights stage.
bool nan_row_with_keys(const Trace& t) {
  const Dims& d = t.dims;
  const Tensor& weights = t.stage(Stage::Weights);  // (B, h, Lq, Lk)
  for (Index b = 0; b < d.batch; ++b)
    for (Index i = 0; i < d.len_q; ++i) {
      for (Index h = 0; has_keys(t, b, i) && h < d.heads; ++h)
        for (Index j = 0; j < d.len_kv; ++j)
          if (std::isnan(weights.at({b, h, i, j}))) return true;
    }
  return false;
}

// q_i·k_j over every head, batch item and cell, each dot product by a loop in double.
std::vector<double> scores_by_loop(const Trace& t) {
  const Dims& d = t.dims;
  std::vector<double> scores;
  for (Index b = 0; b < d.batch; ++b)
    for (Index h = 0; h < d.heads; ++h)
      for (Index i = 0; i < d.len_q; ++i)
        for (Index j = 0; j < d.len_kv; ++j) {
          double s = 0;
          // q_rot/k_rot with RoPE; query head h reads K/V head h ÷ (h / h_kv) with grouped-query attention.
          for (Index p = 0; p < d.d_k; ++p)
            s += double(t.stage(t.scored_q()).at({b, h, i, p})) * t.stage(t.scored_k()).at({b, d.kv_head(h), j, p});
          scores.push_back(s);
        }
  return scores;
}

// Their variance over the finite ones: the text says how many are left out (non_finite_scores).
double score_variance_by_loop(const Trace& t) {
  std::vector<double> scores = scores_by_loop(t);
  scores.erase(std::remove_if(scores.begin(), scores.end(), [](double s) { return !std::isfinite(s); }), scores.end());
  double mean = 0, squares = 0;
  for (double s : scores) mean += s;
  mean /= double(scores.size());
  for (double s : scores) squares += (s - mean) * (s - mean);
  return squares / double(scores.size() - 1);
}

// How many of them are ∞ or NaN.
Index non_finite_scores(const Trace& t) {
  const std::vector<double> scores = scores_by_loop(t);
  return std::count_if(scores.begin(), scores.end(), [](double s) { return !std::isfinite(s); });
}

// The number after `label` in `text` ("… have variance 6.7, …").
double number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << label << "' in: " << text);
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}


// "1 heads", "h = 1 heads", "1 K/V heads": a count of one before a plural noun.
bool one_and_plural_found(const std::string& text) {
  // The 1 must not end another number (11, 0.1) nor follow an operator ("2·w − 1 keys" is a count).
  return found(text, R"((^|[^0-9.\s+\-−]|[^+\-−\s] )1 (K/V )?)"
                     R"((heads|tokens|numbers|columns|keys|pairs|slices|blocks|positions|sequences|tries|head outputs|columns are)\b)");
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
  out.push_back({"rope interleaved", edited("llama-block", [](Session& s) {
                   s.config.positional.rope_style = RopeStyle::Interleaved; })});
  out.push_back({"alibi not causal", edited("alibi-6-heads", [](Session& s) { s.config.mask.causal = false; })});
  out.push_back({"cross sinusoidal", edited("cross-attention", [](Session& s) {
                   s.config.positional.type = PositionalType::Sinusoidal; })});
  out.push_back({"window not causal", edited("default", [](Session& s) { s.config.mask.window = 2; })});
  out.push_back({"global token alone", edited("default", [](Session& s) { s.config.mask.global_tokens = {0}; })});
  out.push_back({"window causal + global", edited("mistral-window", [](Session& s) { s.config.mask.global_tokens = {2}; })});
  out.push_back({"fill -1e-20", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = -1e-20; })});
  out.push_back({"fill 0", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = 0; })});
  out.push_back({"fill -1e9", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = -1e9; })});
  // exp(−10 − max) stays above float32's smallest number: a masked weight small but not 0.
  out.push_back({"fill -10", edited("default", [&](Session& s) { causal(s); s.config.mask_fill = -10; })});
  // An infinity in X: the rows that meet it are NaN although they have keys to attend to.
  out.push_back({"x holds inf", edited("default", [](Session& s) {
                   auto x = std::make_shared<Tensor>(*s.x);
                   x->data[1] = std::numeric_limits<float>::infinity();
                   s.x = x;
                 })});
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
  // One of everything: the nouns after a 1 must be singular (see the plural check below).
  out.push_back({"1 token, d_model 1, 1 head", with_sizes(edited("seed-003-example", causal), 1, 1, 1, 1)});
  out.push_back({"default with 1 head", edited("default", [](Session& s) { s.config.num_heads = 1; })});
  out.push_back({"window 1 causal", edited("mistral-window", [](Session& s) { s.config.mask.window = 1; })});
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
    const bool has_mask = t.mask != nullptr;  // what the trace masks (global tokens alone mask nothing)
    const bool dropout = config.dropout.training && config.dropout.p > 0;
    const bool cross = config.attention == AttentionKind::Cross, direct = config.mode == InputMode::Direct;
    const double leak = masked_weight_by_loop(t);
    const bool fill_is_minus_inf = std::isinf(config.mask_fill) && config.mask_fill < 0;
    for (bool chinese : {false, true}) {
      CAPTURE(chinese);
      std::map<Step, StepText> texts;
      for (const Step step : steps_of(c.session)) {
        const StepText text = step_text(step, c.session, &t, lookup_in(chinese), chinese);
        CAPTURE(step_id(step));
        CHECK_FALSE(text.title.empty());
        CHECK_FALSE(text.explain.empty());
        for (const std::string* s : {&text.title, &text.numbers, &text.explain})
          CHECK_MESSAGE(!contains(*s, "{"), "a placeholder was not filled: " << *s);
        if (chinese)
          for (const std::string* s : {&text.title, &text.numbers, &text.explain})
            CHECK_MESSAGE(english_words(*s).empty(), "English in the Chinese text: " << *s);
        else
          for (const std::string* s : {&text.title, &text.numbers, &text.explain})
            CHECK_MESSAGE(!one_and_plural_found(*s), "a plural after 1: " << *s);
        texts[step] = text;
      }
      const StepText& x = texts[Step::X];
      const StepText& qkv = texts[Step::Qkv];
      const StepText& scaled = texts[Step::Scaled];
      const StepText& masked = texts[Step::Masked];

      // The output step shows the heads' average beside the output only when there are heads to average.
      CHECK(contains(texts[Step::Output].explain, chinese ? "平均" : "average") == (t.dims.heads > 1));
      // W_O mixes several heads' results, or one head's columns.
      if (texts.count(Step::WO) && config.mode != InputMode::Direct)
        CHECK(contains(texts[Step::WO].explain, chinese ? "唯一一个头" : "the one head's result") == (t.dims.heads == 1));

      // One head takes every column: no "head n works on columns n·d_k …" to puzzle over.
      CHECK(contains(qkv.explain, "n·d_k") == (t.dims.heads > 1));
      CHECK(contains(qkv.explain, "d_k = d_model") == (t.dims.heads == 1));
      // Inputs: direct mode has no X and no W's; cross attention projects K and V from X_kv.
      if (direct) {
        CHECK_FALSE(contains(x.formula + qkv.formula + x.title + qkv.title, "X"));
        CHECK_FALSE(contains(qkv.formula, "W_"));
      } else {
        // Sinusoidal positions are added before the projections: X + PE is what W_Q meets.
        const bool pe = config.positional.type == PositionalType::Sinusoidal;
        auto rows = [&](const std::string& x) { return pe ? "(" + x + " + PE)" : x; };
        CHECK(contains(qkv.formula, "K = " + rows(cross ? "X_kv" : "X") + "·W_K"));
        CHECK(contains(qkv.formula, "Q = " + rows(cross ? "X_q" : "X") + "·W_Q"));
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
      // With one score there is none: said in words, never "variance nan".
      const Index score_count = t.dims.len_q * t.dims.len_kv * t.dims.heads * t.dims.batch;
      CHECK_FALSE(contains(scaled.numbers, "nan"));
      if (score_count == 1) {
        CHECK(contains(scaled.numbers, chinese ? "本例只有一个分数" : "This example has a single score"));
      } else if (!chinese && score_count * t.dims.d_k <= 4000000) {
        const double raw = score_variance_by_loop(t);
        CHECK(number_after(scaled.numbers, "the scores have variance ") == doctest::Approx(raw).epsilon(2e-3));
        const Index left_out = non_finite_scores(t);
        CHECK(contains(scaled.numbers, "∞ or NaN and left out") == (left_out > 0));
        if (left_out > 0) CHECK(contains(scaled.numbers, std::to_string(left_out) + (left_out == 1 ? " score is" : " scores are")));
        if (config.scale.mode != ScaleMode::None)
          CHECK(number_after(scaled.numbers, "the scaled scores ") ==
                doctest::Approx(raw * t.scale * t.scale).epsilon(2e-3));
      }

      // Softmax: the note on NaN rows exactly when a row with keys to attend to is NaN.
      CHECK(contains(texts[Step::Weights].explain, chinese ? "却是 NaN" : "are NaN (magenta)") == nan_row_with_keys(t));

      // Mask: "exactly 0" when every masked weight of the stage is 0 (−∞, or a finite fill whose
      // exp underflows in float32), "≈ 0" when the largest is below 1e-3; a leak is quoted.
      const bool says_nearly_zero = contains(masked.explain, "≈ 0");
      const bool says_underflow = contains(masked.explain, chinese ? "下溢，恰好是 0" : "underflows to exactly 0");
      if (!has_mask) {
        CHECK_FALSE(says_nearly_zero);
      } else if (fill_is_minus_inf) {
        CHECK(leak == 0.0);
      } else if (masked_weight_in_stage(t) == 0.0f) {
        CHECK(says_underflow);
        CHECK_FALSE(says_nearly_zero);
      } else {
        CHECK_FALSE(says_underflow);
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

// The mask, softmax, concat and positions steps say what this session does, checked against its trace.
TEST_CASE("mask, softmax, concat and positions steps: each claim holds on its session") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    auto traced = compute(c.session);
    REQUIRE(traced.ok());
    const Trace& t = **traced;
    const Config& config = c.session.config;
    auto text = [&](Step step) { return step_text(step, c.session, &t, lookup_in(false), false).explain; };
    const std::string masked = text(Step::Masked);
    // "This example has a mask" exactly when the trace masks a cell.
    CHECK(contains(masked, "This example has a mask") == (t.mask != nullptr));
    // The window's key count, by a loop over the trace's mask: at most 2w − 1 (w with causal) per query,
    // plus the global tokens for a query that is not one; the text adds "plus" exactly when there are some.
    if (config.mask.window > 0 && t.mask) {
      const Index w = config.mask.window, g = static_cast<Index>(config.mask.global_tokens.size());
      const Index bound = (config.mask.causal ? w : 2 * w - 1) + g;
      Index most = 0;
      for (Index i = 0; i < t.dims.len_q; ++i) {
        if (std::count(config.mask.global_tokens.begin(), config.mask.global_tokens.end(), i)) continue;
        Index kept = 0;
        for (Index j = 0; j < t.dims.len_kv; ++j) kept += t.mask->at({0, i, j}) != 0.0f;
        most = std::max(most, kept);
      }
      CHECK(most <= bound);
      if (g > 0) CHECK(most > bound - g);  // the globals are really among the keys kept
      CHECK(contains(masked, "plus the global") == (g > 0));
    }
    if (!config.mask.global_tokens.empty() && config.mask.window == 0) CHECK(contains(masked, "nothing here"));
    // Softmax's input: B with ALiBi, S′ otherwise.
    const std::string weights = text(Step::Weights);
    CHECK(contains(weights, "ALiBi-biased scores B") == (config.positional.type == PositionalType::Alibi));
    // W_O mixes the heads only when there is one.
    CHECK(contains(text(Step::Concat), "that is W_O's job") == (c.session.weights.w_o != nullptr));
    // "Shuffle the rows of X and the outputs are shuffled the same way" is said of attention without a
    // positional mask or dropout only.
    const auto steps = steps_of(c.session);
    if (std::find(steps.begin(), steps.end(), Step::Positions) != steps.end())
      CHECK(contains(text(Step::Positions), "Without masks or dropout") == (t.mask != nullptr || config.dropout.active()));
  }
}

TEST_CASE("softmax_input_symbol: the scaled scores, ALiBi's penalty, the mask when it hides anything") {
  CHECK(softmax_input_symbol(*load_preset("default")) == "QKᵀ/√d_k");
  CHECK(softmax_input_symbol(*load_preset("causal-decoder")) == "mask(QKᵀ/√d_k)");
  CHECK(softmax_input_symbol(*load_preset("alibi-6-heads")) == "mask(QKᵀ/√d_k − m·|i − j|)");
  CHECK(softmax_input_symbol(edited("alibi-6-heads", [](Session& s) { s.config.mask.causal = false; })) ==
        "QKᵀ/√d_k − m·|i − j|");
  CHECK(softmax_input_symbol(edited("default", [](Session& s) { s.config.mask.global_tokens = {0}; })) == "QKᵀ/√d_k");
  CHECK(softmax_input_symbol(edited("default", [](Session& s) { s.config.scale = {ScaleMode::None, 1.0}; })) == "QKᵀ");
}

TEST_CASE("with no trace yet (a large first trace still computing), the sizes come from the session") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    auto traced = compute(c.session);
    REQUIRE_MESSAGE(traced.ok(), traced.error().message);
    for (bool chinese : {false, true}) {
      CAPTURE(chinese);
      for (const Step step : steps_of(c.session)) {
        CAPTURE(step_id(step));
        const StepText text = step_text(step, c.session, nullptr, lookup_in(chinese), chinese);
        for (const std::string* s : {&text.title, &text.numbers, &text.explain})
          CHECK_MESSAGE(!contains(*s, "{"), "a placeholder was not filled: " << *s);
      }
      // The input step quotes only sizes: the same words as once the trace is there.
      CHECK(step_text(Step::X, c.session, nullptr, lookup_in(chinese), chinese).explain ==
            step_text(Step::X, c.session, traced->get(), lookup_in(chinese), chinese).explain);
    }
  }
  // The default example's d_model, written out by hand.
  const Session s = *load_preset("default");
  CHECK(contains(step_text(Step::X, s, nullptr, lookup_in(false), false).explain,
                 "d_model = " + std::to_string(s.config.d_model) + " numbers"));
}

TEST_CASE("a placeholder's noun follows its number: {n:one|other}") {
  auto filled = [](std::string text, const TextParams& params) {
    const bool complete = substitute(&text, params);
    return std::make_pair(text, complete);
  };
  const std::string keys = "keeps {n} {n:key|keys}, not the first {n:one|ones}";
  CHECK(filled(keys, {{"n", "1"}}) == std::make_pair(std::string("keeps 1 key, not the first one"), true));
  CHECK(filled(keys, {{"n", "2"}}) == std::make_pair(std::string("keeps 2 keys, not the first ones"), true));
  CHECK(filled(keys, {{"n", "0"}}) == std::make_pair(std::string("keeps 0 keys, not the first ones"), true));
  CHECK(filled(keys, {{"n", "11"}}).first == "keeps 11 keys, not the first ones");
  CHECK(filled(keys, {}) == std::make_pair(keys, false));  // no value: left as it was, and said so
  // Braces that are not placeholders stay as they are, even with a colon and a bar.
  const std::string json = "as in {\"csv\": \"a|b\"}";
  CHECK(filled(json, {{"csv", "1"}}).first == json);
  for (const char* wrong : {"h = 1 heads", "2 · 1 K/V heads", "holds 1 tokens"}) CHECK(one_and_plural_found(wrong));
  for (const char* right : {"h = 1 head", "11 heads", "0.1 heads", "1 headset"}) CHECK_FALSE(one_and_plural_found(right));
  // Every English text with each of its numbers 1: the app's labs and panels fill them too. The
  // error message patterns are left out: they mirror the core's own English messages.
  for (const auto& [key, text] : table(false)) {
    if (key.rfind("error.pattern.", 0) == 0) continue;
    std::string filled_text = text;
    TextParams ones;
    for (const std::string& name : find_all(text, R"(\{([a-z_]+)(:[^{}|]*\|[^{}]*)?\})", 1)) ones.push_back({name, "1"});
    substitute(&filled_text, ones);
    CHECK_MESSAGE(!one_and_plural_found(filled_text), key << ": " << filled_text);
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

TEST_CASE("every menu path a text gives (\"File → Save\", \"Labs → Fused QKV\") leads to an item that is there") {
  // The items of each menu and tab, by the keys of their labels (panel_menu.cpp, panel_files.cpp,
  // panel_config.cpp): a path must end at one of them, in both languages.
  const std::vector<std::pair<std::string, std::vector<std::string>>> places = {
      {"menu.file", {"files.menu.", "menu.quit", "teach.export.menu"}},
      {"menu.labs", {"flash_lab.title", "linear_lab.title", "lessons.title", "labs.sqrt_dk.title", "labs.mask_fill.title",
                     "labs.stability.title", "labs.fused.title", "labs.quiz.title", "labs.decode.title",
                     "labs.rope.title", "training.title"}},
      {"tab.config", {"config."}}};
  for (bool chinese : {false, true}) {
    CAPTURE(chinese);
    const Table& t = table(chinese);
    int paths = 0;
    for (const auto& [key, text] : t) {
      CAPTURE(key);
      for (const auto& [place, items] : places)
        for (const std::string arrow : {" → ", " > "}) {
          const std::string start = t.at(place) + arrow;
          for (size_t at = text.find(start); at != std::string::npos; at = text.find(start, at + 1)) {
            ++paths;
            const std::string rest = text.substr(at + start.size());
            bool leads = false;
            for (const auto& [item_key, label] : t)
              for (const std::string& prefix : items)
                if (item_key.rfind(prefix, 0) == 0 && !label.empty() && rest.rfind(label, 0) == 0) leads = true;
            CHECK_MESSAGE(leads, "no such item: " << start << rest.substr(0, 40));
          }
        }
    }
    CHECK(paths >= 3);  // File → Save, Labs → Fused QKV, Settings → Positions
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

TEST_CASE("every preset has a Chinese description, in Chinese, with the English one's numbers (heads count from 0)") {
  auto numbers = [](const std::string& text) {
    const std::vector<std::string> all = find_all(text, "[0-9]+(\\.[0-9]+)?");
    return std::multiset<std::string>(all.begin(), all.end());
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

TEST_CASE("today's attention: the x_pos, RoPE and ALiBi steps exist only when on, in pipeline order, with their why") {
  auto order = [](const Session& s) {
    std::vector<std::string> ids;
    for (Step step : steps_of(s)) ids.push_back(step_id(step));
    return ids;
  };
  using Ids = std::vector<std::string>;
  const Ids plain = {"x", "qkv", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "w_o", "output"};
  CHECK(order(*load_preset("default")) == plain);
  Ids rope = plain, alibi = plain, positions = plain;
  rope.insert(rope.begin() + 2, "rope");
  alibi.insert(alibi.begin() + 4, "alibi");
  positions.insert(positions.begin() + 1, "x_pos");
  CHECK(order(*load_preset("llama-block")) == rope);
  CHECK(order(*load_preset("alibi-6-heads")) == alibi);
  CHECK(order(*load_preset("longformer-global")) == positions);
  CHECK(step_from_name("q_rot") == Step::Rope);
  CHECK(step_from_name("biased") == Step::Alibi);
  CHECK(step_from_name("x_kv_pos") == Step::Positions);

  for (bool chinese : {false, true}) {
    CAPTURE(chinese);
    auto text = [&](const char* preset, Step step, const std::function<void(Session&)>& edit = nullptr) {
      Session s = *load_preset(preset);
      if (edit) edit(s);
      auto t = compute(s);
      REQUIRE(t.ok());
      return step_text(step, s, t->get(), lookup_in(chinese), chinese);
    };
    // RoPE: the score depends only on i − j; d_k = 4 gives 2 pairs, the last turning 10000^(−1/2) = 0.01 per position.
    const StepText r = text("llama-block", Step::Rope);
    CHECK(contains(r.explain, "i − j"));
    CHECK(contains(r.formula, "a = k, b = k + d_k/2"));
    CHECK(contains(r.formula, "10000^(−2k/d_k)"));
    CHECK(contains(r.numbers, "0.01"));
    CHECK(contains(text("llama-block", Step::Rope, [](Session& s) {
                     s.config.positional.rope_style = RopeStyle::Interleaved; }).formula, "a = 2k, b = 2k + 1"));
    // GQA: 8 query heads, 2 K/V heads, groups of 4.
    const StepText q = text("llama-block", Step::Qkv);
    CHECK(contains(q.formula, "h_kv = 2"));
    CHECK(contains(q.explain, "h_kv = 2"));
    CHECK(contains(q.explain, "n ÷ 4"));
    CHECK(contains(text("llama-block", Step::Scores).formula, "K_rot(n ÷ 4)ᵀ"));
    CHECK_FALSE(contains(text("default", Step::Qkv).explain, "h_kv"));
    // The output step's formula holds every option the earlier steps showed, and no other.
    const std::string llama = text("llama-block", Step::Output).formula;
    CHECK(contains(llama, "softmax(Q_rotₙ·K_rot(n ÷ 4)ᵀ/√d_k + M)·V(n ÷ 4)"));
    const std::string alibi = text("alibi-6-heads", Step::Output).formula;
    CHECK(contains(alibi, "Qₙ·Kₙᵀ/√d_k − mₙ·|i − j|"));
    CHECK(contains(alibi, "·Vₙ"));
    CHECK(contains(text("longformer-global", Step::Output).formula, "Q = (X + PE)·W_Q"));
    CHECK(contains(text("longformer-global", Step::Qkv).formula, "K = (X + PE)·W_K"));
    const std::string plain_output = text("default", Step::Output).formula;
    for (const char* modern : {"rot", "÷", "mₙ", "PE"}) CHECK_FALSE(contains(plain_output, modern));
    // ALiBi: the slopes of 6 heads; the |i − j| of a non-causal session is said to be ours.
    const StepText a = text("alibi-6-heads", Step::Alibi);
    std::string slopes;  // Press et al. for 6 heads: 2^-2, 2^-4, 2^-6, 2^-8 (the 4-head rule), then 2^-1, 2^-3
    for (double m : {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}) slopes += (slopes.empty() ? "" : ", ") + lab_number(m);
    CHECK(contains(a.formula, "m = (" + slopes + ")"));
    const std::string ours = chinese ? "本程序的定义" : "this program's definition";
    CHECK_FALSE(contains(a.explain, ours));
    CHECK(contains(text("alibi-6-heads", Step::Alibi, [](Session& s) { s.config.mask.causal = false; }).explain, ours));
    // Window and global tokens in the mask step.
    const StepText m = text("mistral-window", Step::Masked);
    CHECK(contains(m.formula, "w = 3: i − 3 < j ≤ i"));
    CHECK(contains(m.explain, "O(L·w)"));
    // O(L·w) is the scores of a whole pass; a decoder's rolling cache stays w keys long.
    CHECK(contains(m.explain, chinese ? "滚动缓存，文本再长大小也不变" : "a rolling cache, the same size however long the text"));
    const StepText g = text("longformer-global", Step::Masked);
    CHECK(contains(g.formula, "w = 2: |i − j| < 2"));
    CHECK(contains(g.explain, chinese ? "位置 0 上是全局词元" : "A global token at position 0:"));
    const StepText two = text("longformer-global", Step::Masked, [](Session& s) { s.config.mask.global_tokens = {0, 3}; });
    CHECK(contains(two.explain, chinese ? "位置 0, 3 上是全局词元" : "Global tokens at positions 0, 3:"));
    // Sinusoidal positions.
    CHECK(contains(text("longformer-global", Step::Positions).formula, "X′ = X + PE"));
  }
}

namespace {

// (B, L, C) with each batch item's rows reordered: row i of the result is row perm[i].
TensorPtr rows_permuted(const TensorPtr& t, const std::vector<Index>& perm) {
  if (!t) return t;
  auto out = std::make_shared<Tensor>(*t);
  const Index batch = t->dim(0), len = t->dim(1), cols = t->dim(2);
  for (Index b = 0; b < batch; ++b)
    for (Index i = 0; i < len; ++i)
      for (Index c = 0; c < cols; ++c) out->at({b, i, c}) = t->at({b, perm[size_t(i)], c});
  return out;
}

// The first token moved to the end: unlike a reversal, it changes distances |i − j| (a reversal
// keeps them, so a window or ALiBi without a causal mask would not notice it).
std::vector<Index> rotated(Index len) {
  std::vector<Index> perm;
  for (Index i = 0; i < len; ++i) perm.push_back((i + 1) % len);
  return perm;
}

// Largest |output(permuted tokens)[i] − output[perm[i]]| over the outputs' largest |value|: 0 when
// permuting the tokens only permutes the outputs. The queries are rotated; in cross attention the
// keys' and values' sequence is rotated too (which alone should change nothing).
double order_effect(const Session& s) {
  const std::vector<Index> perm_q = rotated(s.len_q()), perm_kv = rotated(s.len_kv());
  const bool cross = s.config.attention == AttentionKind::Cross;
  Session p = s;
  const std::vector<Index>& kv = cross ? perm_kv : perm_q;
  p.x = rows_permuted(s.x, perm_q);
  p.x_kv = rows_permuted(s.x_kv, perm_kv);
  p.q = rows_permuted(s.q, perm_q);
  p.k = rows_permuted(s.k, kv);
  p.v = rows_permuted(s.v, kv);
  const auto before = compute(s), after = compute(p);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  const Tensor& out = (*before)->stage(Stage::Output);   // (B, Lq, d_model)
  const Tensor& moved = (*after)->stage(Stage::Output);  // (B, Lq, d_model)
  double largest = 1e-30, difference = 0;
  for (Index b = 0; b < out.dim(0); ++b)
    for (Index i = 0; i < out.dim(1); ++i)
      for (Index c = 0; c < out.dim(2); ++c) {
        if (!std::isfinite(out.at({b, i, c}))) continue;  // a fully masked row's NaN
        largest = std::max(largest, std::abs(static_cast<double>(out.at({b, i, c}))));
        difference = std::max(difference, std::abs(static_cast<double>(moved.at({b, i, c})) -
                                                   out.at({b, perm_q[size_t(i)], c})));
      }
  return difference / largest;
}

}  // namespace

TEST_CASE("the X step says permuting the tokens only permutes the outputs exactly when it does") {
  // Every preset, and the default example with each way positions enter attention.
  std::vector<std::pair<std::string, Session>> sessions;
  for (const PresetInfo& p : list_presets())
    if (p.name != "seed-000-usage") sessions.push_back({p.name, *load_preset(p.name)});  // no mask, no positions
  const Session plain = *load_preset("default");
  auto edited = [&](const std::string& name, const std::function<void(Config&)>& edit) {
    Session s = plain;
    edit(s.config);
    sessions.push_back({name, s});
  };
  edited("causal", [](Config& c) { c.mask.causal = true; });
  edited("window 2", [](Config& c) { c.mask.window = 2; });
  edited("global token 0 alone", [](Config& c) { c.mask.global_tokens = {0}; });
  edited("sinusoidal", [](Config& c) { c.positional.type = PositionalType::Sinusoidal; });
  edited("rope", [](Config& c) { c.positional.type = PositionalType::Rope; });
  edited("alibi", [](Config& c) { c.positional.type = PositionalType::Alibi; });
  edited("rope + causal", [](Config& c) {
    c.positional.type = PositionalType::Rope;
    c.mask.causal = true;
  });
  edited("dropout in training", [](Config& c) { c.dropout = {0.2, true, 7}; });
  edited("dropout in evaluation", [](Config& c) { c.dropout = {0.2, false, 7}; });
  int only_permutes = 0, changes = 0;
  for (const auto& [name, session] : sessions) {
    CAPTURE(name);
    const double effect = order_effect(session);
    CAPTURE(effect);
    REQUIRE((effect < 1e-5 || effect > 1e-3));  // float rounding, or a real change
    auto trace = compute(session);
    REQUIRE(trace.ok());
    const std::string said = step_text(Step::X, session, trace->get(), lookup_in(false), false).explain;
    const bool says_only_permutes = contains(said, table(false).at("step.x.order"));
    CHECK_MESSAGE(says_only_permutes == (effect < 1e-5), said);
    CHECK_FALSE(contains(said, "adds none"));
    (effect < 1e-5 ? only_permutes : changes) += 1;
  }
  CHECK(only_permutes == 5);  // default, cross-attention, seed-003, global token alone, dropout in evaluation
  CHECK(changes >= 10);
}
