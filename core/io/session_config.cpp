// Reading a session's "config" object: every key, its type and its allowed values
// (the sizes fitting together is validate()'s job, after the whole file is read).
#include <cmath>

#include "io/session_json.hpp"

namespace al::detail {

Config SessionReader::read_config(const json& j, bool& bias_given) {
  Config c;
  c.num_heads = 1;
  c.d_model = 0;  // 0 = take it from the inputs
  bias_given = false;
  if (!j.is_object()) wrong_type("config", j, "an object");
  check_keys(j, "config", {"mode", "attention", "d_model", "num_heads", "num_kv_heads", "positional", "bias",
                           "scale", "mask", "mask_fill", "dropout"});
  if (auto it = j.find("mode"); it != j.end()) {
    const std::string mode = get_string(*it, "config.mode");
    if (mode == "projection") c.mode = InputMode::Projection;
    else if (mode == "direct") c.mode = InputMode::Direct;
    else fail(ErrorCode::InvalidConfig, "config.mode is \"" + mode + "\"; it must be \"projection\" or \"direct\".",
              {{"path", "config.mode"}});
  }
  if (auto it = j.find("attention"); it != j.end()) {
    const std::string kind = get_string(*it, "config.attention");
    if (kind == "self") c.attention = AttentionKind::Self;
    else if (kind == "cross") c.attention = AttentionKind::Cross;
    else fail(ErrorCode::InvalidConfig, "config.attention is \"" + kind + "\"; it must be \"self\" or \"cross\".",
              {{"path", "config.attention"}});
  }
  if (auto it = j.find("d_model"); it != j.end()) c.d_model = get_positive_int(*it, "config.d_model");
  if (auto it = j.find("num_heads"); it != j.end()) c.num_heads = get_positive_int(*it, "config.num_heads");
  if (auto it = j.find("num_kv_heads"); it != j.end() && !it->is_null())
    c.num_kv_heads = get_positive_int(*it, "config.num_kv_heads");
  if (auto it = j.find("positional"); it != j.end() && !it->is_null()) c.positional = read_positional(*it);
  if (auto it = j.find("bias"); it != j.end()) {
    c.bias = get_bool(*it, "config.bias");
    bias_given = true;
  }
  if (auto it = j.find("scale"); it != j.end()) {
    if (it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s == "sqrt_dk") c.scale.mode = ScaleMode::SqrtDk;
      else if (s == "none") c.scale.mode = ScaleMode::None;
      else fail(ErrorCode::InvalidConfig,
                "config.scale is \"" + s + "\"; it must be \"sqrt_dk\", \"none\" or a number.",
                {{"path", "config.scale"}});
    } else if (it->is_number()) {
      c.scale.mode = ScaleMode::Custom;
      c.scale.factor = get_float(*it, "config.scale");
    } else {
      wrong_type("config.scale", *it, "\"sqrt_dk\", \"none\" or a number");
    }
  }
  if (auto it = j.find("mask"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) wrong_type("config.mask", *it, "an object");
    check_keys(*it, "config.mask", {"causal", "key_padding", "custom", "window", "global_tokens"});
    if (auto m = it->find("causal"); m != it->end()) c.mask.causal = get_bool(*m, "config.mask.causal");
    if (auto m = it->find("window"); m != it->end() && !m->is_null())
      c.mask.window = get_positive_int(*m, "config.mask.window");
    if (auto m = it->find("global_tokens"); m != it->end() && !m->is_null()) {
      if (!m->is_array()) wrong_type("config.mask.global_tokens", *m, "a list of positions");
      for (size_t i = 0; i < m->size(); ++i) {
        const std::string here = "config.mask.global_tokens[" + std::to_string(i) + "]";
        const json& p = (*m)[i];
        // Position 0 is the usual [CLS].
        if (!is_whole(p) || p.get<double>() < 0) wrong_type(here, p, "a position (a whole number from 0)");
        const auto position = whole_int64(p);
        if (!position) out_of_range(here, p, "0", std::to_string(INT64_MAX));
        c.mask.global_tokens.push_back(*position);
      }
    }
    if (auto m = it->find("key_padding"); m != it->end() && !m->is_null())
      c.mask.key_padding = read_mask(*m, "config.mask.key_padding", false);
    if (auto m = it->find("custom"); m != it->end() && !m->is_null())
      c.mask.custom = read_mask(*m, "config.mask.custom", true);
  }
  if (auto it = j.find("mask_fill"); it != j.end()) {
    if (it->is_string()) {
      auto special = special_value(it->get<std::string>());
      if (!special) fail(ErrorCode::InvalidConfig,
                         "config.mask_fill is " + it->dump() + "; it must be \"-inf\" or a number.",
                         {{"path", "config.mask_fill"}});
      c.mask_fill = *special;
    } else {
      c.mask_fill = get_float(*it, "config.mask_fill");
    }
  }
  if (auto it = j.find("dropout"); it != j.end()) {
    if (!it->is_object()) wrong_type("config.dropout", *it, "an object");
    check_keys(*it, "config.dropout", {"p", "training", "seed"});
    if (auto d = it->find("p"); d != it->end()) c.dropout.p = get_number(*d, "config.dropout.p");
    if (auto d = it->find("training"); d != it->end()) c.dropout.training = get_bool(*d, "config.dropout.training");
    if (auto d = it->find("seed"); d != it->end()) c.dropout.seed = get_uint64(*d, "config.dropout.seed");
  }
  return c;
}

PositionalSpec SessionReader::read_positional(const json& j) const {
  PositionalSpec p;
  if (!j.is_object()) wrong_type("config.positional", j, "an object such as {\"type\": \"rope\"}");
  check_keys(j, "config.positional", {"type", "rope_style", "rope_base"});
  const auto type = j.find("type");
  if (type == j.end())
    fail(ErrorCode::InvalidConfig, "config.positional needs a \"type\": \"none\", \"sinusoidal\", \"rope\" or \"alibi\".",
         {{"path", "config.positional.type"}});
  const std::string t = get_string(*type, "config.positional.type");
  if (t == "none") p.type = PositionalType::None;
  else if (t == "sinusoidal") p.type = PositionalType::Sinusoidal;
  else if (t == "rope") p.type = PositionalType::Rope;
  else if (t == "alibi") p.type = PositionalType::Alibi;
  else fail(ErrorCode::InvalidConfig,
            "config.positional.type is \"" + t + "\"; it must be \"none\", \"sinusoidal\", \"rope\" or \"alibi\".",
            {{"path", "config.positional.type"}});
  const bool rope = p.type == PositionalType::Rope;
  if (auto it = j.find("rope_style"); it != j.end()) {
    if (!rope) fail(ErrorCode::InvalidConfig, "config.positional.rope_style is only for \"type\": \"rope\"",
                    {{"path", "config.positional.rope_style"}});
    const std::string style = get_string(*it, "config.positional.rope_style");
    if (style == "half") p.rope_style = RopeStyle::Half;
    else if (style == "interleaved") p.rope_style = RopeStyle::Interleaved;
    else fail(ErrorCode::InvalidConfig,
              "config.positional.rope_style is \"" + style + "\"; it must be \"half\" (Llama) or \"interleaved\" (GPT-J).",
              {{"path", "config.positional.rope_style"}});
  }
  if (auto it = j.find("rope_base"); it != j.end()) {
    if (!rope) fail(ErrorCode::InvalidConfig, "config.positional.rope_base is only for \"type\": \"rope\"",
                    {{"path", "config.positional.rope_base"}});
    p.rope_base = get_number(*it, "config.positional.rope_base");
  }
  return p;
}

}  // namespace al::detail
