#include "teaching/stage_text.hpp"

#include <cmath>
#include <optional>

#include "teaching/lab_numbers.hpp"

namespace al {

namespace {

constexpr const char* kStepIds[kStepCount] = {"x",       "qkv",     "scores", "scaled", "masked", "weights",
                                              "dropped", "context", "concat", "w_o",    "output", "x_pos",
                                              "rope",    "alibi"};

// The facts of a session every text branches on.
struct SessionFacts {
  bool cross, direct, bias, fused, has_w_o, has_mask, dropout, sinusoidal;
  ScaleMode scale;
  double fill;
  Index heads, kv_heads;  // kv_heads < heads: grouped-query (1: multi-query) attention
};

// Whether the mask hides anything: global tokens alone do not (without a window every query sees every key).
bool masks_anything(const Config& c) {
  return c.mask.causal || c.mask.key_padding || c.mask.custom || c.mask.window > 0;
}

SessionFacts facts_of(const Session& s) {
  const Config& c = s.config;
  return {c.attention == AttentionKind::Cross,
          c.mode == InputMode::Direct,
          c.bias,
          s.weights.fused(),
          s.weights.w_o != nullptr,
          masks_anything(c),
          c.dropout.active(),
          c.positional.type == PositionalType::Sinusoidal,
          c.scale.mode,
          c.mask_fill,
          c.num_heads,
          c.kv_heads()};
}

// The sizes and scale the texts quote.
struct TextDims {
  Index d_model, heads, d_k, len_q, len_kv;
  double scale;
};

std::optional<TextDims> text_dims(const Session& s, const Trace* trace) {
  if (trace) {
    const Dims& d = trace->dims;
    return TextDims{d.d_model, d.heads, d.d_k, d.len_q, d.len_kv, trace->scale};
  }
  const Config& c = s.config;
  if (c.num_heads <= 0 || c.d_model <= 0 || c.d_model % c.num_heads != 0) return std::nullopt;
  const Index d_k = c.d_model / c.num_heads;
  return TextDims{c.d_model, c.num_heads, d_k, s.len_q(), s.len_kv(), c.scale.multiplier(d_k)};
}

// Variance of the finite values of a tensor (two passes, in double); NaN with fewer than two.
double variance_of(const Tensor& t) {
  double sum = 0;
  Index count = 0;
  for (float v : t.data)
    if (std::isfinite(v)) sum += v, ++count;
  if (count < 2) return std::nan("");
  const double mean = sum / static_cast<double>(count);
  double squares = 0;
  for (float v : t.data)
    if (std::isfinite(v)) squares += (v - mean) * (v - mean);
  return squares / static_cast<double>(count - 1);
}

Index non_finite_count(const Tensor& t) {
  return std::count_if(t.data.begin(), t.data.end(), [](float v) { return !std::isfinite(v); });
}

std::string projection_formula(const SessionFacts& f) {
  const std::string n_slice = "Qₙ = Q[:, n·d_k : (n+1)·d_k]";
  if (f.direct) return "Qₙ, Kₙ, Vₙ = Q, K, V[:, n·d_k : (n+1)·d_k]";
  // Sinusoidal positions are added to the rows before they are projected.
  const std::string pe = f.sinusoidal ? " + PE)" : "";
  const std::string x_q = (f.sinusoidal ? "(" : "") + std::string(f.cross ? "X_q" : "X") + pe;
  const std::string x_kv = (f.sinusoidal ? "(" : "") + std::string(f.cross ? "X_kv" : "X") + pe;
  auto one = [&](const char* out, const std::string& x, const char* w) {
    return std::string(out) + " = " + x + "·W_" + w + (f.bias ? std::string(" + b_") + w : "");
  };
  std::string text = one("Q", x_q, "Q") + "    " + one("K", x_kv, "K") + "    " + one("V", x_kv, "V");
  if (f.fused) text += "    (W_QKV = [W_Q | W_K | W_V])";
  return text + "    " + n_slice;
}

std::string output_projection(const SessionFacts& f) {
  if (!f.has_w_o) return "Concat";
  return f.bias ? "Concat·W_O + b_O" : "Concat·W_O";
}

// headₙ's formula: softmax of the (scaled, masked) scores, dropout, times Vₙ.
// One head's output, with every option of the session that shapes it: grouped K/V heads,
// RoPE's rotation, ALiBi's penalty, the mask, dropout.
std::string head_formula(const SessionFacts& f, const Session& session) {
  const PositionalType positions = session.config.positional.type;
  // As the scores step writes them: K(n ÷ g) is the K/V head query head n reads.
  const std::string kv = f.kv_heads < f.heads ? "(n ÷ " + std::to_string(f.heads / f.kv_heads) + ")" : "ₙ";
  const std::string rot = positions == PositionalType::Rope ? "_rot" : "";
  std::string inside = scaled_scores_symbol(session, "Q" + rot + "ₙ·K" + rot + kv + "ᵀ"), note;
  if (positions == PositionalType::Alibi) inside += " − mₙ·|i − j|";
  if (f.has_mask && std::isinf(f.fill) && f.fill < 0) {
    inside += " + M";
    note = ",   M_ij = 0 (mask_ij = 1), −∞ (mask_ij = 0)";
  } else if (f.has_mask) {
    inside = "masked_fill(" + inside + ", mask = 0, " + lab_number(f.fill) + ")";
  }
  std::string weights = "softmax(" + inside + ")";
  if (f.dropout) weights = "dropout(" + weights + ")";
  return "Cₙ = " + weights + "·V" + kv + note;
}

}  // namespace

const char* step_id(Step step) { return kStepIds[static_cast<int>(step)]; }

bool step_present(Step step, const Session& session) {
  const PositionalType type = session.config.positional.type;
  switch (step) {
    case Step::Positions: return type == PositionalType::Sinusoidal && session.config.mode == InputMode::Projection;
    case Step::Rope: return type == PositionalType::Rope;
    case Step::Alibi: return type == PositionalType::Alibi;
    default: return true;
  }
}

std::vector<Step> steps_of(const Session& session) {
  std::vector<Step> steps;
  for (Step step : kStepOrder)
    if (step_present(step, session)) steps.push_back(step);
  return steps;
}

std::optional<Step> step_from_name(const std::string& name) {
  for (int i = 0; i < kStepCount; ++i)
    if (name == kStepIds[i]) return static_cast<Step>(i);
  if (name == "q" || name == "k" || name == "v") return Step::Qkv;
  if (name == "x_kv_pos") return Step::Positions;
  if (name == "q_rot" || name == "k_rot") return Step::Rope;
  if (name == "biased") return Step::Alibi;
  return std::nullopt;
}

bool substitute(std::string* text, const TextParams& params) {
  bool complete = true;
  std::string out;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t open = text->find('{', pos);
    size_t close = open == std::string::npos ? open : text->find('}', open);
    if (close == std::string::npos) {
      out += text->substr(pos);
      break;
    }
    out += text->substr(pos, open - pos);
    std::string name = text->substr(open + 1, close - open - 1);
    // {name:one|other}: English's singular or plural after the number `name` ("{n} {n:key|keys}").
    std::optional<std::pair<std::string, std::string>> forms;
    const size_t colon = name.find(':'), bar = name.find('|');
    if (colon != std::string::npos && bar != std::string::npos && colon < bar &&
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", 0) == colon) {
      forms = {{name.substr(colon + 1, bar - colon - 1), name.substr(bar + 1)}};
      name.resize(colon);
    }
    bool found = false;
    for (const auto& [param, value] : params)
      if (param == name) {
        out += forms ? (value == "1" ? forms->first : forms->second) : value;
        found = true;
        break;
      }
    if (!found) {
      complete = false;
      out += text->substr(open, close - open + 1);
    }
    pos = close + 1;
  }
  *text = out;
  return complete;
}

std::string softmax_input_symbol(const Session& session) {
  std::string input = scaled_scores_symbol(session);
  if (session.config.positional.type == PositionalType::Alibi) input += " − m·|i − j|";
  return masks_anything(session.config) ? "mask(" + input + ")" : input;
}

std::string scaled_scores_symbol(const Session& session, const std::string& scores) {
  switch (session.config.scale.mode) {
    case ScaleMode::SqrtDk: return scores + "/√d_k";
    case ScaleMode::None: return scores;
    case ScaleMode::Custom: return lab_number(session.config.scale.factor) + "·" + scores;
  }
  return scores;
}

std::string step_timeline(Step step, const Session& session, const TextLookup& lookup) {
  const SessionFacts f = facts_of(session);
  switch (step) {
    case Step::X: return f.direct ? "Q, K, V" : f.cross ? "X_q, X_kv" : "X";
    case Step::Qkv: return f.direct ? "Qₙ/Kₙ/Vₙ" : "Q/K/V";
    case Step::Scores: return "QKᵀ";
    case Step::Scaled:
      if (f.scale == ScaleMode::None) return "×1";
      if (f.scale == ScaleMode::Custom) return "×" + lab_number(session.config.scale.factor);
      return "÷√d_k";
    case Step::Masked: return lookup("step.masked.timeline");
    case Step::Weights: return lookup("step.weights.timeline");
    case Step::Dropped: return lookup("step.dropped.timeline");
    case Step::Context: return f.dropout ? "α′·V" : "α·V";
    case Step::Concat: return lookup("step.concat.timeline");
    case Step::WO: return f.has_w_o ? "W_O" : "(W_O)";
    case Step::Output: return lookup("step.output.timeline");
    case Step::Positions: return "X+PE";
    case Step::Rope: return "RoPE";
    case Step::Alibi: return "−m·|i−j|";
  }
  return "";
}

const char* scale_key_suffix(const Session& session) {
  switch (session.config.scale.mode) {
    case ScaleMode::None: return "_none";
    case ScaleMode::Custom: return "_custom";
    case ScaleMode::SqrtDk: break;
  }
  return "";
}

std::string step_title(Step step, const Session& session, const TextLookup& lookup) {
  const SessionFacts f = facts_of(session);
  const std::string base = std::string("step.") + step_id(step) + ".title";
  std::string key = base;
  if (step == Step::X && f.direct) key += "_direct";
  else if (step == Step::X && f.cross) key += "_cross";
  if (step == Step::Qkv && f.direct) key += "_direct";
  if (step == Step::Scaled) key += scale_key_suffix(session);
  if (step == Step::WO && !f.has_w_o) key += "_absent";
  if (step == Step::Positions && f.cross) key += "_cross";
  std::string text = lookup(key);
  substitute(&text, {{"factor", lab_number(session.config.scale.factor)}});
  return text;
}

// Whether permuting the tokens only permutes the outputs: true of attention itself, not once
// positions are added to X, RoPE turns q and k, ALiBi penalises distance, a mask picks keys by
// position (global tokens alone, with no window, hide nothing) or dropout drops weights by position.
template <typename Add>
void add_order_sentences(const Config& c, const Add& add, const std::string& base) {
  const bool positional_mask = masks_anything(c);
  const bool dropout = c.dropout.active();
  switch (c.positional.type) {
    case PositionalType::None:
      if (!positional_mask) {
        add(base + (dropout ? ".order_dropout" : ".order"));
        return;
      }
      add(base + ".order_masked");
      if (dropout) add(base + ".order_dropout_too");
      return;
    case PositionalType::Sinusoidal: add(base + ".order_sinusoidal"); break;
    case PositionalType::Rope: add(base + ".order_rope"); break;
    case PositionalType::Alibi: add(base + ".order_alibi"); break;
  }
  if (positional_mask) add(base + ".order_mask_too");
  if (dropout) add(base + ".order_dropout_too");
}

StepText step_text(Step step, const Session& session, const Trace* trace, const TextLookup& lookup,
                   bool chinese) {
  const SessionFacts f = facts_of(session);
  const Config& c = session.config;
  const std::string base = std::string("step.") + step_id(step);
  StepText out;
  out.title = step_title(step, session, lookup);
  out.timeline = step_timeline(step, session, lookup);

  TextParams params = {{"p", lab_number(c.dropout.p)},
                       {"keep_scale", lab_number(c.dropout.p < 1 ? 1.0 / (1.0 - c.dropout.p) : 0.0)},
                       {"fill", lab_number(c.mask_fill)},
                       {"factor", lab_number(c.scale.factor)},
                       {"w_o", output_projection(f)}};
  // The sizes from the trace, or, while there is none yet (a large first trace still computing),
  // from the session itself when it splits into whole heads.
  if (const std::optional<TextDims> d = text_dims(session, trace)) {
    const double sqrt_d_k = std::sqrt(static_cast<double>(d->d_k));
    params.insert(params.end(), {{"d_k", std::to_string(d->d_k)},
                                 {"d_model", std::to_string(d->d_model)},
                                 {"h", std::to_string(d->heads)},
                                 {"sqrt_d_k", lab_number(sqrt_d_k)},
                                 {"inv_sqrt_d_k", lab_number(1.0 / sqrt_d_k)},
                                 {"scale", lab_number(d->scale)},
                                 {"lq", std::to_string(d->len_q)},
                                 {"lk", std::to_string(d->len_kv)},
                                 {"uniform", lab_number(d->len_kv > 0 ? 1.0 / static_cast<double>(d->len_kv) : 0.0)}});
  }
  params.insert(params.end(), {{"h_kv", std::to_string(f.kv_heads)},
                               {"group", std::to_string(f.kv_heads > 0 ? f.heads / f.kv_heads : 1)},
                               {"window", std::to_string(c.mask.window)},
                               {"base", rope_base_text(c.positional.rope_base)}});
  auto say = [&](const std::string& key) {
    std::string text = lookup(key);
    substitute(&text, params);
    return text;
  };
  const std::string gap = chinese ? "" : " ";
  auto add = [&](const std::string& key) {
    const std::string sentence = say(key);
    out.explain += (out.explain.empty() ? "" : gap) + sentence;
  };

  switch (step) {
    case Step::X:
      out.formula = f.direct  ? "Q : (B, Lq, d_model)    K, V : (B, Lk, d_model)"
                    : f.cross ? "X_q : (B, Lq, d_model)    X_kv : (B, Lk, d_model)"
                              : "X : (B, Lq, d_model)";
      add(base + (f.direct ? ".explain_direct" : f.cross ? ".explain_cross" : ".explain"));
      add_order_sentences(c, add, base);
      add(base + ".indices");
      break;
    case Step::Qkv:
      out.formula = projection_formula(f);
      add(base + (f.direct ? ".explain_direct" : ".explain") + (f.heads == 1 ? "_one_head" : ""));
      if (!f.direct && f.cross) add(base + ".cross");
      if (f.kv_heads < f.heads) {
        out.formula += "    K, V : (B, h_kv, Lk, d_k),  h_kv = " + std::to_string(f.kv_heads);
        add(base + (f.kv_heads == 1 ? ".mqa" : ".gqa"));
      }
      break;
    case Step::Scores: {
      const std::string q = c.positional.type == PositionalType::Rope ? "Q_rot" : "Q";
      const std::string k = c.positional.type == PositionalType::Rope ? "K_rot" : "K";
      const std::string kv = f.kv_heads < f.heads ? "(n ÷ " + std::to_string(f.heads / f.kv_heads) + ")" : "ₙ";
      out.formula = "Sₙ = " + q + "ₙ·" + k + kv + "ᵀ    S_ij = Σ_p q_ip·k_jp  (p = 0 … d_k − 1)";
      add(base + ".explain");
      if (f.kv_heads < f.heads) add(base + ".gqa");
      break;
    }
    case Step::Positions:
      out.formula = std::string(f.cross ? "X_q′ = X_q + PE,  X_kv′ = X_kv + PE" : "X′ = X + PE") +
                    "    PE[p, 2i] = sin(p / 10000^(2i/d_model)),  PE[p, 2i+1] = cos(p / 10000^(2i/d_model))";
      add(base + ".explain");
      add(base + (f.has_mask || f.dropout ? ".why_masked" : ".why"));
      if (f.cross) add(base + ".cross");
      break;
    case Step::Rope: {
      const bool half = c.positional.rope_style == RopeStyle::Half;
      out.formula = std::string("(q_a, q_b) → (q_a·cos θ − q_b·sin θ,  q_b·cos θ + q_a·sin θ),   θ = p·") +
                    rope_base_text(c.positional.rope_base) + "^(−2k/d_k),   " +
                    (half ? "a = k, b = k + d_k/2" : "a = 2k, b = 2k + 1");
      add(base + ".explain");
      add(base + ".why");
      add(base + (half ? ".half" : ".interleaved"));
      if (trace && trace->dims.d_k >= 2) {
        const Index d_k = trace->dims.d_k;
        params.insert(params.end(), {{"theta_first", lab_number(1.0)},
                                     {"theta_last", lab_number(std::pow(c.positional.rope_base,
                                                                        -2.0 * static_cast<double>(d_k / 2 - 1) /
                                                                            static_cast<double>(d_k)))},
                                     {"pairs", std::to_string(d_k / 2)}});
        out.numbers = say(base + ".numbers");
      }
      break;
    }
    case Step::Alibi: {
      out.formula = "B_ij = S′_ij − m_h·|i − j|";
      add(base + ".explain");
      add(base + ".why");
      if (!c.mask.causal) add(base + ".not_causal");
      if (trace && !trace->alibi_slopes.empty()) {
        std::string slopes;
        for (double m : trace->alibi_slopes) slopes += (slopes.empty() ? "" : ", ") + lab_number(m);
        params.push_back({"slopes", slopes});
        out.formula += "    m = (" + slopes + ")";
        out.numbers = say(base + ".numbers");
      }
      break;
    }
    case Step::Scaled: {
      const char* mode = f.scale == ScaleMode::None ? "_none" : f.scale == ScaleMode::Custom ? "_custom" : "";
      out.formula = f.scale == ScaleMode::None     ? "S′ = S"
                    : f.scale == ScaleMode::Custom ? "S′ = " + lab_number(c.scale.factor) + " · S"
                                                   : "S′ = S / √d_k";
      if (f.scale != ScaleMode::SqrtDk) add(base + ".explain" + mode);
      add(base + ".why");
      if (trace && trace->has(Stage::Scores)) {  // a lean trace may not have kept them (ComputeOptions::keep)
        const double raw = variance_of(trace->stage(Stage::Scores));
        params.insert(params.end(), {{"var_raw", lab_number(raw)},
                                     {"var_scaled", lab_number(raw * trace->scale * trace->scale)},
                                     {"var_sqrt", lab_number(raw / static_cast<double>(trace->dims.d_k))}});
        // One score (one token, one head): its variance is not a number to show.
        const bool single = std::isnan(raw);
        out.numbers = say(base + (single ? (f.scale == ScaleMode::SqrtDk ? ".numbers_single" : ".numbers_single_other")
                                         : ".numbers" + std::string(mode)));
        // An ∞ or NaN (from an input, or an overflow) has no variance: the measure is of the others.
        if (const Index left_out = non_finite_count(trace->stage(Stage::Scores)); left_out > 0 && !single) {
          params.push_back({"left_out", std::to_string(left_out)});
          out.numbers += gap + say(base + ".numbers_non_finite");
        }
      }
      break;
    }
    case Step::Masked: {
      // With ALiBi the mask acts on the biased scores B, not on S′.
      const std::string in = c.positional.type == PositionalType::Alibi ? "B" : "S′";
      out.formula = f.has_mask ? "S″_ij = " + in + "_ij (mask_ij = 1),    S″_ij = " + lab_number(c.mask_fill) +
                                     " (mask_ij = 0)"
                               : "S″ = " + in;
      add(base + ".explain");
      const bool globals_on = !c.mask.global_tokens.empty();
      if (globals_on) {
        std::string globals;
        for (Index g : c.mask.global_tokens) globals += (globals.empty() ? "" : ", ") + std::to_string(g);
        params.push_back({"globals", globals});
        params.push_back({"global_count", std::to_string(c.mask.global_tokens.size())});
      }
      if (!f.has_mask) {
        add(base + ".none");
        if (globals_on) add(base + ".global_no_window");
        break;
      }
      add(base + ".active");
      if (c.mask.window > 0) {
        // A formula, not words: the same in every language.
        const std::string w = std::to_string(c.mask.window);
        out.formula += c.mask.causal ? ",    w = " + w + ": i − " + w + " < j ≤ i" : ",    w = " + w + ": |i − j| < " + w;
        // Global tokens add keys to every row: the window's count is then per non-global query, plus them.
        add(base + (c.mask.causal ? ".window_causal" : ".window") + (globals_on ? "_global" : ""));
      }
      if (globals_on) add(base + ".global");
      if (std::isinf(c.mask_fill) && c.mask_fill < 0) {
        add(base + ".weight_inf");
      } else if (trace) {
        const double leak = trace->checks.masked_weight_max;
        params.push_back({"leak", lab_number(leak)});
        params.push_back({"share", lab_number(trace->checks.masked_share_max)});
        // A finite fill far enough below the scores underflows: exactly 0, as −∞ gives.
        add(base + (leak == 0.0 ? ".weight_zero" : leak < 1e-3 ? ".weight_small" : ".weight_leak"));
      }
      if (trace && trace->any_fully_masked())
        add(base + (std::isinf(c.mask_fill) && c.mask_fill < 0 ? ".fully_masked_nan" : ".fully_masked_uniform"));
      break;
    }
    case Step::Weights:
      out.formula = "α = softmax(S″)    α_ij = exp(S″_ij − m_i) / Σ_l exp(S″_il − m_i),   m_i = max_l S″_il";
      add(base + (c.positional.type == PositionalType::Alibi ? ".explain_alibi" : ".explain"));
      // A row with a key to attend to whose sum is NaN: a NaN or an infinity reached its scores.
      if (trace && std::isnan(trace->checks.row_sum_error_max)) add(base + ".nan_rows");
      break;
    case Step::Dropped:
      out.formula = f.dropout ? "α′ = α ⊙ m / (1 − p),   m_ij ∈ {0, 1}" : "α′ = α";
      add(base + ".explain");
      add(base + (f.dropout ? ".training" : ".eval"));
      break;
    case Step::Context:
      out.formula = f.dropout ? "Cₙ = α′·Vₙ    c_i = Σ_j α′_ij · v_j" : "Cₙ = α·Vₙ    c_i = Σ_j α_ij · v_j";
      add(base + (f.dropout ? ".explain_dropout" : ".explain"));
      break;
    case Step::Concat:
      out.formula = "Concat(C₀, …, C_(h−1)) : (B, Lq, h·d_k)";
      add(base + (f.has_w_o ? ".explain" : ".explain_no_w_o"));
      break;
    case Step::WO:
      out.formula = lookup("formula.output") + " = " + output_projection(f);
      add(base + (f.has_w_o ? ".explain" : ".absent"));
      break;
    case Step::Output:
      out.formula = lookup("formula.output") + " = " + output_projection(f).replace(0, 6, "Concat(C₀, …, C_(h−1))") + "\n" +
                    head_formula(f, session) + "\n" + projection_formula(f) + "    (n = 0 … h − 1)";
      add(base + ".explain");
      break;
  }
  return out;
}

const char* step_text_glyphs() {
  return "ₙ₀…ᵀ√÷×·−∞⊙∈Σ′″α→|[]:θ≤";
}

}  // namespace al
