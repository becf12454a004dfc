// The session file (docs/session-format.md): writing a Session as JSON.
#include <charconv>
#include <cmath>
#include <string>

#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "io/session_json.hpp"

namespace al {

namespace {

using detail::append_json_float;
using detail::json;

void append_double(std::string& out, double value) {
  if (value == 0.0 && std::signbit(value)) { out += "-0.0"; return; }  // "-0" would read back as integer 0
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  out.append(buf, res.ptr);
}

// Nested arrays. indent < 0: compact. Otherwise the innermost rows go on one
// line each and outer levels are indented by `indent` more per level.
void append_nested(std::string& out, const Tensor& t, size_t axis, Index offset, int indent, int level) {
  if (t.shape.empty()) {
    append_json_float(out, t.data.empty() ? 0.0f : t.data[0]);
    return;
  }
  const Index n = t.shape[axis];
  Index stride = 1;
  for (size_t d = axis + 1; d < t.shape.size(); ++d) stride *= t.shape[d];
  out += '[';
  const bool innermost = axis + 1 == t.shape.size();
  for (Index i = 0; i < n; ++i) {
    if (i) out += (innermost && indent >= 0) ? ", " : ",";
    if (!innermost && indent >= 0) {
      out += '\n';
      out.append(static_cast<size_t>((level + 1) * indent), ' ');
    }
    if (innermost) append_json_float(out, t.data[static_cast<size_t>(offset + i)]);
    else append_nested(out, t, axis + 1, offset + i * stride, indent, level + 1);
  }
  if (!innermost && indent >= 0 && n > 0) {
    out += '\n';
    out.append(static_cast<size_t>(level * indent), ' ');
  }
  out += ']';
}
}  // namespace

std::string tensor_to_json(const Tensor& t) {
  std::string out;
  append_nested(out, t, 0, 0, -1, 0);
  return out;
}

std::string session_to_json(const Session& s) {
  const Config& c = s.config;
  std::string out = "{\n  \"format\": \"" + std::string(detail::kFormatName) + "\",\n  \"version\": " +
                    std::to_string(detail::kFormatVersion) + ",\n  \"config\": {\n";
  out += "    \"mode\": \"" + std::string(c.mode == InputMode::Direct ? "direct" : "projection") + "\",\n";
  out += "    \"attention\": \"" + std::string(c.attention == AttentionKind::Cross ? "cross" : "self") + "\",\n";
  out += "    \"d_model\": " + std::to_string(c.d_model) + ",\n";
  out += "    \"num_heads\": " + std::to_string(c.num_heads) + ",\n";
  // The new keys only when they change something, so older sessions save as they were.
  if (c.num_kv_heads > 0 && c.num_kv_heads != c.num_heads)
    out += "    \"num_kv_heads\": " + std::to_string(c.num_kv_heads) + ",\n";
  if (c.positional.type != PositionalType::None) {
    static const char* types[] = {"none", "sinusoidal", "rope", "alibi"};
    out += "    \"positional\": {\"type\": \"" + std::string(types[static_cast<int>(c.positional.type)]) + "\"";
    if (c.positional.type == PositionalType::Rope) {
      out += ", \"rope_style\": \"" + std::string(c.positional.rope_style == RopeStyle::Half ? "half" : "interleaved") +
             "\", \"rope_base\": ";
      append_double(out, c.positional.rope_base);
    }
    out += "},\n";
  }
  out += "    \"bias\": " + std::string(c.bias ? "true" : "false") + ",\n";
  out += "    \"scale\": ";
  if (c.scale.mode == ScaleMode::SqrtDk) out += "\"sqrt_dk\"";
  else if (c.scale.mode == ScaleMode::None) out += "\"none\"";
  else append_double(out, c.scale.factor);
  out += ",\n    \"mask\": {\"causal\": " + std::string(c.mask.causal ? "true" : "false");
  auto matrix = [&](const char* key, const TensorPtr& t, int level) {
    out += "\"" + std::string(key) + "\": ";
    append_nested(out, *t, 0, 0, 2, level);
  };
  if (c.mask.key_padding) {
    out += ", ";
    matrix("key_padding", c.mask.key_padding, 3);
  }
  if (c.mask.custom) {
    out += ", ";
    matrix("custom", c.mask.custom, 3);
  }
  if (c.mask.window > 0) out += ", \"window\": " + std::to_string(c.mask.window);
  if (!c.mask.global_tokens.empty()) {
    out += ", \"global_tokens\": [";
    for (size_t i = 0; i < c.mask.global_tokens.size(); ++i)
      out += (i ? ", " : "") + std::to_string(c.mask.global_tokens[i]);
    out += "]";
  }
  out += "},\n    \"mask_fill\": ";
  if (std::isfinite(c.mask_fill)) append_double(out, c.mask_fill);
  else out += std::isnan(c.mask_fill) ? "\"NaN\"" : (c.mask_fill < 0 ? "\"-inf\"" : "\"Infinity\"");
  out += ",\n    \"dropout\": {\"p\": ";
  append_double(out, c.dropout.p);
  out += ", \"training\": " + std::string(c.dropout.training ? "true" : "false") +
         ", \"seed\": " + std::to_string(c.dropout.seed) + "}\n  }";

  auto tokens = [&](const char* key, const std::vector<std::string>& list) {
    if (list.empty()) return;
    out += ",\n  \"" + std::string(key) + "\": " + json(list).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  tokens("tokens", s.tokens);
  tokens("tokens_kv", s.tokens_kv);
  auto top = [&](const char* key, const TensorPtr& t) {
    if (!t) return;
    out += ",\n  ";
    matrix(key, t, 1);
  };
  top(c.attention == AttentionKind::Cross ? "x_q" : "x", s.x);
  top("x_kv", s.x_kv);
  top("q", s.q);
  top("k", s.k);
  top("v", s.v);

  const Weights& w = s.weights;
  const std::pair<const char*, const TensorPtr*> weights[] = {
      {"w_q", &w.w_q}, {"b_q", &w.b_q}, {"w_k", &w.w_k}, {"b_k", &w.b_k}, {"w_v", &w.w_v}, {"b_v", &w.b_v},
      {"w_qkv", &w.w_qkv}, {"b_qkv", &w.b_qkv}, {"w_o", &w.w_o}, {"b_o", &w.b_o}};
  bool any_weight = false;
  for (const auto& [key, ptr] : weights) any_weight = any_weight || *ptr;
  if (any_weight) {
    out += ",\n  \"weights\": {\n    \"layout\": \"math\"";
    for (const auto& [key, ptr] : weights) {
      if (!*ptr) continue;
      out += ",\n    ";
      matrix(key, *ptr, 2);
    }
    out += "\n  }";
  }
  out += "\n}\n";
  return out;
}

std::optional<Error> save_session_file(const std::string& path, const Session& session) {
  return write_file_atomic(path, session_to_json(session));
}
}  // namespace al
