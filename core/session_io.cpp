// The session file (docs/session-format.md): JSON <-> Session, and the presets.
#include "session_io.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <set>

#include "attention.hpp"
#include "attention_plan.hpp"
#include "matrix_io.hpp"
#include "random.hpp"

namespace al {

// Generated from assets/presets/*.json by core/embed_presets.cmake: (name, JSON text).
const std::vector<std::pair<std::string, std::string>>& embedded_presets();

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kFormatName = "attention-lab/session";
constexpr int kFormatVersion = 1;
// Inputs are at most (B, Lq, Lk); deeper nesting is a mistake (and deep
// recursion on hostile input is avoided).
constexpr size_t kMaxRank = 4;
// Generated or loaded matrices larger than this are refused before allocation
// (1 GiB of float32); the compute applies its own, tighter memory limit.
constexpr Index kMaxElements = Index(1) << 28;
// The same cap over all the {"random"} matrices of one session together: many
// inputs each under the cap could still exhaust the memory.
constexpr Index kMaxGeneratedElements = kMaxElements;
// Doubles at or above 2^128 - 2^103 (FLT_MAX plus half a step) round to infinity as float32.
constexpr double kFloatOverflow = 0x1.ffffffp+127;

// Thrown inside the reader and turned into a Result at its entry point, so
// every check can be one line.
struct LoadFailure {
  Error error;
};

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + j.dump();
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary data";
    default: return "the number " + j.dump();
  }
}

std::string index_path(const std::string& path, const std::vector<size_t>& idx, size_t depth) {
  std::string p = path;
  for (size_t i = 0; i < depth; ++i) p += "[" + std::to_string(idx[i]) + "]";
  return p;
}

// "x[0][3]" for the flat index of a C-order tensor.
std::string flat_index_path(const std::string& path, const std::vector<Index>& shape, Index flat) {
  std::vector<size_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = static_cast<size_t>(flat % shape[d]);
    flat /= shape[d];
  }
  return index_path(path, idx, idx.size());
}

// Non-finite values travel as strings, since JSON has no NaN or infinity.
std::optional<float> special_value(const std::string& s) {
  if (s == "NaN" || s == "nan") return std::numeric_limits<float>::quiet_NaN();
  if (s == "Infinity" || s == "inf") return std::numeric_limits<float>::infinity();
  if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<float>::infinity();
  return std::nullopt;
}

void append_double(std::string& out, double value) {
  if (value == 0.0 && std::signbit(value)) { out += "-0.0"; return; }  // "-0" would read back as integer 0
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  out.append(buf, res.ptr);
}

void append_json_float(std::string& out, float value) {
  if (std::isnan(value)) { out += "\"NaN\""; return; }
  if (std::isinf(value)) { out += value > 0 ? "\"Infinity\"" : "\"-Infinity\""; return; }
  if (value == 0.0f && std::signbit(value)) { out += "-0.0"; return; }  // "-0" would read back as integer 0
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, value);  // shortest form that reads back exactly
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

// ---------------------------------------------------------------------------
class SessionReader {
 public:
  // check_fit: refuse a session whose sizes do not fit together (validate()).
  SessionReader(std::string name, std::string base_dir, bool check_fit = true)
      : name_(std::move(name)), base_dir_(std::move(base_dir)), check_fit_(check_fit) {}

  Session read(const json& root);

 private:
  [[noreturn]] void fail(ErrorCode code, const std::string& message,
                         std::vector<std::pair<std::string, std::string>> params = {}) const {
    params.insert(params.begin(), {"file", name_});
    throw LoadFailure{make_error(code, name_ + ": " + message, std::move(params))};
  }
  [[noreturn]] void wrong_type(const std::string& path, const json& j, const std::string& expected) const {
    fail(ErrorCode::ParseError, path + " must be " + expected + ", but it is " + describe(j) + ".",
         {{"path", path}});
  }

  void check_keys(const json& obj, const std::string& path,
                  std::initializer_list<const char*> allowed) const;
  std::string get_string(const json& j, const std::string& path) const;
  bool get_bool(const json& j, const std::string& path) const;
  double get_number(const json& j, const std::string& path) const;
  Index get_positive_int(const json& j, const std::string& path) const;
  std::uint64_t get_uint64(const json& j, const std::string& path) const;

  Config read_config(const json& j, bool& bias_given);
  std::vector<std::string> read_tokens(const json& j, const std::string& path) const;
  Tensor read_matrix(const json& j, const std::string& path) const;
  Tensor read_nested(const json& j, const std::string& path) const;
  Tensor read_random(const json& j, const std::string& path) const;
  std::string resolve_file(const json& j, const std::string& path) const;
  void check_generated_total(const json& root) const;
  void check_generated_trace(const json& root) const;

  // Shape rules of each kind of input (see docs/session-format.md).
  TensorPtr read_sequence(const json& j, const std::string& path) const;
  TensorPtr read_weight(const json& j, const std::string& path, bool torch_layout) const;
  TensorPtr read_bias(const json& j, const std::string& path) const;
  TensorPtr read_mask(const json& j, const std::string& path, bool per_query) const;

  std::string name_;
  std::string base_dir_;
  bool check_fit_ = true;
};

void SessionReader::check_keys(const json& obj, const std::string& path,
                               std::initializer_list<const char*> allowed) const {
  for (const auto& item : obj.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || item.key() == a;
    if (known) continue;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
    const std::string full = path.empty() ? item.key() : path + "." + item.key();
    fail(ErrorCode::ParseError, "unknown key '" + full + "' (a typo?); the keys allowed " +
                                    (path.empty() ? std::string("at the top level") : "in " + path) +
                                    " are: " + list,
         {{"path", full}});
  }
}

std::string SessionReader::get_string(const json& j, const std::string& path) const {
  if (!j.is_string()) wrong_type(path, j, "a string");
  return j.get<std::string>();
}

bool SessionReader::get_bool(const json& j, const std::string& path) const {
  if (!j.is_boolean()) wrong_type(path, j, "true or false");
  return j.get<bool>();
}

double SessionReader::get_number(const json& j, const std::string& path) const {
  if (!j.is_number()) wrong_type(path, j, "a number");
  return j.get<double>();
}

Index SessionReader::get_positive_int(const json& j, const std::string& path) const {
  if (j.is_number_unsigned() || j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
      fail(ErrorCode::InvalidConfig, path + " is " + j.dump() + ", far too large.", {{"path", path}});
    }
    if (v <= 0) fail(ErrorCode::InvalidConfig, path + " must be at least 1, but it is " + j.dump() + ".",
                     {{"path", path}});
    return v;
  }
  wrong_type(path, j, "a positive whole number");
}

std::uint64_t SessionReader::get_uint64(const json& j, const std::string& path) const {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer())  // only negative values land here
    fail(ErrorCode::InvalidConfig, path + " must not be negative, but it is " + j.dump() + ".",
         {{"path", path}});
  wrong_type(path, j, "a whole number (0 or more)");
}

std::vector<std::string> SessionReader::read_tokens(const json& j, const std::string& path) const {
  if (!j.is_array()) wrong_type(path, j, "an array of strings");
  std::vector<std::string> tokens;
  for (size_t i = 0; i < j.size(); ++i)
    tokens.push_back(get_string(j[i], path + "[" + std::to_string(i) + "]"));
  return tokens;
}

Config SessionReader::read_config(const json& j, bool& bias_given) {
  Config c;
  c.num_heads = 1;
  c.d_model = 0;  // 0 = take it from the inputs
  bias_given = false;
  if (!j.is_object()) wrong_type("config", j, "an object");
  check_keys(j, "config", {"mode", "attention", "d_model", "num_heads", "bias", "scale", "mask",
                           "mask_fill", "dropout"});
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
      c.scale.factor = it->get<double>();
    } else {
      wrong_type("config.scale", *it, "\"sqrt_dk\", \"none\" or a number");
    }
  }
  if (auto it = j.find("mask"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) wrong_type("config.mask", *it, "an object");
    check_keys(*it, "config.mask", {"causal", "key_padding", "custom"});
    if (auto m = it->find("causal"); m != it->end()) c.mask.causal = get_bool(*m, "config.mask.causal");
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
      c.mask_fill = get_number(*it, "config.mask_fill");
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

Tensor SessionReader::read_nested(const json& j, const std::string& path) const {
  // The shape comes from the first element at every depth; every other
  // element is then checked against it (ragged rows are an error).
  std::vector<Index> shape;
  for (const json* cur = &j; cur->is_array(); cur = &(*cur)[0]) {
    if (shape.size() == kMaxRank)
      fail(ErrorCode::ShapeMismatch, path + " has more than " + std::to_string(kMaxRank) +
                                         " levels of nested arrays.", {{"path", path}});
    shape.push_back(static_cast<Index>(cur->size()));
    if (cur->empty()) break;
  }
  // The shape comes from the first entry at each depth, so a small ragged file
  // can claim any number of entries: bound it before multiplying or reserving.
  Index count = 1;
  for (Index d : shape) {
    if (d == 0) {
      count = 0;
      break;
    }
    if (count > kMaxElements / d)
      fail(ErrorCode::TooLarge, path + " has shape " + shape_string(shape) + " (counted from its first entries), more than " +
                                    std::to_string(kMaxElements) + " numbers.", {{"path", path}});
    count *= d;
  }
  if (count == 0)
    fail(ErrorCode::ShapeMismatch, path + " is empty (shape " + shape_string(shape) + ").", {{"path", path}});

  std::vector<float> data;
  data.reserve(static_cast<size_t>(std::min<Index>(count, Index(1) << 20)));  // grows if the rows are all there
  std::vector<size_t> idx(shape.size());
  // Iterative walk: `stack[d]` is the array being read at depth d.
  std::vector<const json*> stack(shape.size() + 1);
  stack[0] = &j;
  size_t depth = 0;
  idx[0] = 0;
  auto check_array = [&](const json& a, size_t d) {
    const std::string here = index_path(path, idx, d);
    if (!a.is_array())
      fail(ErrorCode::ShapeMismatch, here + " is " + describe(a) + " where an array of " +
                                         std::to_string(shape[d]) + " entries is expected (as in " +
                                         index_path(path, std::vector<size_t>(d, 0), d) + ").",
           {{"path", here}});
    if (static_cast<Index>(a.size()) != shape[d])
      fail(ErrorCode::ShapeMismatch, here + " has " + std::to_string(a.size()) + " entries but " +
                                         index_path(path, std::vector<size_t>(d, 0), d) + " has " +
                                         std::to_string(shape[d]) +
                                         " (every row of a matrix needs the same length).",
           {{"path", here}});
  };
  check_array(j, 0);
  while (true) {
    const json& arr = *stack[depth];
    if (idx[depth] == arr.size()) {
      if (depth == 0) break;
      --depth;
      ++idx[depth];
      continue;
    }
    const json& e = arr[idx[depth]];
    if (depth + 1 < shape.size()) {
      check_array(e, depth + 1);
      stack[depth + 1] = &e;
      ++depth;
      idx[depth] = 0;
      continue;
    }
    if (e.is_number()) {
      const double v = e.get<double>();
      if (std::isfinite(v) && std::fabs(v) >= kFloatOverflow) {
        const std::string here = index_path(path, idx, depth + 1);
        fail(ErrorCode::InvalidConfig, here + " is " + e.dump() +
                                           ", too large for a float32 (at most about 3.4e38).",
             {{"path", here}});
      }
      data.push_back(static_cast<float>(v));
    } else if (e.is_string() && special_value(e.get<std::string>())) {
      data.push_back(*special_value(e.get<std::string>()));
    } else if (e.is_boolean()) {
      data.push_back(e.get<bool>() ? 1.0f : 0.0f);  // masks may say true/false
    } else {
      const std::string here = index_path(path, idx, depth + 1);
      fail(ErrorCode::ParseError, here + " must be a number (or \"NaN\", \"Infinity\", \"-Infinity\"), but it is " +
                                      describe(e) + ".",
           {{"path", here}});
    }
    ++idx[depth];
  }
  return Tensor(std::move(shape), std::move(data));
}

std::string SessionReader::resolve_file(const json& j, const std::string& path) const {
  const std::string rel = get_string(j, path);
  if (base_dir_.empty())
    fail(ErrorCode::IoError, path + " refers to the file \"" + rel +
                                 "\", but this session has no folder to find it in (only a session "
                                 "file may refer to other files).",
         {{"path", path}});
  const fs::path p(rel);
  const fs::path normal = p.lexically_normal();
  if (rel.empty() || p.is_absolute() || normal.empty() || *normal.begin() == "..")
    fail(ErrorCode::InvalidConfig, path + " is \"" + rel +
                                       "\", which is outside the session's folder; use a path relative "
                                       "to the folder of the session file, without leading \"..\".",
         {{"path", path}});
  return (fs::path(base_dir_) / normal).string();
}

namespace {

struct RandomRequest {
  std::string path;  // "x.random"
  Index count = 0;   // numbers it asks for
};

// The numbers a {"shape": [...]} asks for; 0 when it is malformed or over the
// per-matrix cap (read_random names what is wrong then).
Index random_count(const json& spec) {
  auto shape = spec.is_object() ? spec.find("shape") : spec.end();
  if (!spec.is_object() || shape == spec.end() || !shape->is_array() || shape->empty() || shape->size() > kMaxRank)
    return 0;
  Index count = 1;
  for (const json& d : *shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() <= 0) return 0;
    const Index size = d.get<std::int64_t>();
    if (size > kMaxElements || count > kMaxElements / size) return 0;
    count *= size;
  }
  return count;
}

// Every {"random": {"shape": [...]}} in the objects of `j` down to `depth`
// levels (matrices sit at most at config.mask.custom), with its count.
void find_random_requests(const json& j, const std::string& path, int depth, std::vector<RandomRequest>& found) {
  if (!j.is_object() || depth < 0) return;
  for (const auto& item : j.items()) {
    const std::string here = path.empty() ? item.key() : path + "." + item.key();
    if (item.key() != "random") {
      find_random_requests(item.value(), here, depth - 1, found);
      continue;
    }
    const Index count = random_count(item.value());
    if (count == 0) continue;
    found.push_back({here, count});
  }
}

}  // namespace

void SessionReader::check_generated_total(const json& root) const {
  std::vector<RandomRequest> requests;
  find_random_requests(root, "", 3, requests);
  Index total = 0;  // each count is at most 2^28, and there are few: no overflow
  std::string parts;
  for (const RandomRequest& r : requests) {
    total += r.count;
    parts += (parts.empty() ? "" : ", ") + r.path + " " + std::to_string(r.count);
  }
  if (total <= kMaxGeneratedElements) return;
  const Index bytes = total * Index(sizeof(float));
  fail(ErrorCode::TooLarge,
       "the {\"random\"} matrices ask for " + std::to_string(total) + " numbers together (" + parts +
           "), which would need " + detail::human_bytes(bytes) + "; a session can generate at most " +
           std::to_string(kMaxGeneratedElements) + " numbers (" +
           detail::human_bytes(kMaxGeneratedElements * Index(sizeof(float))) + "). Make them smaller.",
       {{"bytes", std::to_string(bytes)}, {"limit", std::to_string(kMaxGeneratedElements * Index(sizeof(float)))}});
}

namespace {

// The shape of root[key] when it is {"random": {"shape": [...]}} within the cap.
std::optional<std::vector<Index>> random_shape(const json& root, const char* key) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_object() || it->size() != 1 || !it->contains("random")) return std::nullopt;
  const json& spec = (*it)["random"];
  if (random_count(spec) == 0) return std::nullopt;
  return spec["shape"].get<std::vector<Index>>();
}

}  // namespace

void SessionReader::check_generated_trace(const json& root) const {
  // The config as far as the sizes go, read leniently: read_config names its mistakes later.
  const json empty = json::object();
  auto config_it = root.find("config");
  const json& config = config_it != root.end() && config_it->is_object() ? *config_it : empty;
  auto text_of = [&](const char* key) {
    auto it = config.find(key);
    return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const bool direct = text_of("mode") == "direct", cross = text_of("attention") == "cross";
  auto heads_it = config.find("num_heads");
  const Index heads = heads_it != config.end() && heads_it->is_number_integer() && heads_it->get<std::int64_t>() > 0
                          ? heads_it->get<std::int64_t>()
                          : 1;
  const char* query_key = direct ? "q" : (root.contains("x_q") ? "x_q" : "x");
  const char* key_key = direct ? "k" : (cross ? "x_kv" : query_key);
  const auto queries = random_shape(root, query_key), keys = random_shape(root, key_key);
  if (!queries || !keys || queries->size() < 2 || keys->size() < 2) return;
  const Index batch = queries->size() == 3 ? queries->front() : 1;
  const Index len_q = (*queries)[queries->size() - 2], len_k = (*keys)[keys->size() - 2];
  // At least the scores and the attention weights, (B, h, Lq, Lk) floats each;
  // in double, as the product can pass 2^63.
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(batch) * static_cast<double>(heads) * static_cast<double>(len_q) *
                       static_cast<double>(len_k);
  const Index limit = default_memory_limit();
  if (bytes <= static_cast<double>(limit)) return;
  const double most_shown = static_cast<double>(Index(1) << 62);
  const std::string needed = bytes < most_shown ? detail::human_bytes(static_cast<Index>(bytes))
                                                : "more than " + detail::human_bytes(Index(1) << 62);
  fail(ErrorCode::TooLarge,
       "this session's trace would need at least " + needed + " (its scores and attention weights are B x h x Lq x Lk = " +
           std::to_string(batch) + " x " + std::to_string(heads) + " x " + std::to_string(len_q) + " x " +
           std::to_string(len_k) + " numbers each), more than the memory limit of " + detail::human_bytes(limit) +
           "; its {\"random\"} inputs were not generated. Make the sequences shorter.",
       {{"limit", std::to_string(limit)}});
}

Tensor SessionReader::read_random(const json& j, const std::string& path) const {
  if (!j.is_object()) wrong_type(path, j, "an object {\"shape\": [...], \"seed\": N, \"std\": s}");
  check_keys(j, path, {"shape", "seed", "std"});
  auto shape_it = j.find("shape");
  if (shape_it == j.end())
    fail(ErrorCode::MissingInput, path + " needs a \"shape\", e.g. [1, 4, 8].", {{"path", path + ".shape"}});
  if (!shape_it->is_array() || shape_it->empty() || shape_it->size() > kMaxRank)
    wrong_type(path + ".shape", *shape_it, "an array of 1 to " + std::to_string(kMaxRank) + " sizes");
  std::vector<Index> shape;
  Index count = 1;
  for (size_t i = 0; i < shape_it->size(); ++i) {
    const Index d = get_positive_int((*shape_it)[i], path + ".shape[" + std::to_string(i) + "]");
    if (d > kMaxElements || count > kMaxElements / d)
      fail(ErrorCode::TooLarge, path + ".shape " + shape_it->dump() + " asks for more than " +
                                    std::to_string(kMaxElements) + " numbers.", {{"path", path + ".shape"}});
    count *= d;
    shape.push_back(d);
  }
  std::uint64_t seed = 0;
  double stddev = 1.0;
  if (auto it = j.find("seed"); it != j.end()) seed = get_uint64(*it, path + ".seed");
  if (auto it = j.find("std"); it != j.end()) {
    stddev = get_number(*it, path + ".std");
    if (!(stddev >= 0)) fail(ErrorCode::InvalidConfig, path + ".std must not be negative.", {{"path", path + ".std"}});
  }
  return random_normal(std::move(shape), seed, stddev);
}

Tensor SessionReader::read_matrix(const json& j, const std::string& path) const {
  if (j.is_array()) return read_nested(j, path);
  if (!j.is_object())
    wrong_type(path, j, "a matrix: nested arrays of numbers, {\"npy\": \"file.npy\"}, {\"csv\": "
                        "\"file.csv\"} or {\"random\": {...}}");
  if (j.size() != 1 || !(j.contains("npy") || j.contains("csv") || j.contains("random"))) {
    std::string keys;
    for (const auto& item : j.items()) keys += (keys.empty() ? "" : ", ") + item.key();
    fail(ErrorCode::ParseError, path + " is an object with keys {" + keys +
                                    "}; a matrix object has exactly one key: \"npy\", \"csv\" or \"random\".",
         {{"path", path}});
  }
  if (auto it = j.find("random"); it != j.end()) return read_random(*it, path + ".random");
  const bool npy = j.contains("npy");
  const std::string file = resolve_file(npy ? j["npy"] : j["csv"], path + (npy ? ".npy" : ".csv"));
  Result<Tensor> loaded = npy ? read_npy(file) : read_csv(file);
  if (!loaded) {
    Error e = loaded.error();
    fail(e.code, path + ": " + e.message, {{"path", path}});
  }
  Tensor t = std::move(*loaded);
  if (t.rank() > static_cast<Index>(kMaxRank))
    fail(ErrorCode::ShapeMismatch, path + " (" + file + ") has shape " + shape_string(t.shape) +
                                       ", more dimensions than any input has.", {{"path", path}});
  if (t.empty())
    fail(ErrorCode::ShapeMismatch, path + " (" + file + ") is empty (shape " + shape_string(t.shape) + ").",
         {{"path", path}});
  return t;
}

TensorPtr SessionReader::read_sequence(const json& j, const std::string& path) const {
  Tensor t = read_matrix(j, path);
  if (t.rank() == 2) t.shape.insert(t.shape.begin(), 1);  // one sequence: B = 1
  if (t.rank() != 3)
    fail(ErrorCode::ShapeMismatch, path + " has shape " + shape_string(t.shape) +
                                       "; it must be B x L x d_model (or L x d_model for a batch of one).",
         {{"path", path}, {"shape", shape_string(t.shape)}});
  return make_tensor(std::move(t));
}

TensorPtr SessionReader::read_weight(const json& j, const std::string& path, bool torch_layout) const {
  Tensor t = read_matrix(j, path);
  if (t.rank() != 2)
    fail(ErrorCode::ShapeMismatch, path + " has shape " + shape_string(t.shape) + "; a weight must be a 2-D matrix.",
         {{"path", path}, {"shape", shape_string(t.shape)}});
  if (!torch_layout) return make_tensor(std::move(t));
  // torch stores (out, in) for y = x·Wᵀ + b; the session holds (in, out).
  Tensor math({t.cols(), t.rows()});
  math.matrix() = t.matrix().transpose();
  return make_tensor(std::move(math));
}

TensorPtr SessionReader::read_bias(const json& j, const std::string& path) const {
  Tensor t = read_matrix(j, path);
  if (t.rank() != 1)
    fail(ErrorCode::ShapeMismatch, path + " has shape " + shape_string(t.shape) + "; a bias must be a 1-D array.",
         {{"path", path}, {"shape", shape_string(t.shape)}});
  return make_tensor(std::move(t));
}

TensorPtr SessionReader::read_mask(const json& j, const std::string& path, bool per_query) const {
  Tensor t = read_matrix(j, path);
  // key_padding: (B, Lk), a single row meaning B = 1. custom: (Lq, Lk) or (B, Lq, Lk).
  if (!per_query && t.rank() == 1) t.shape.insert(t.shape.begin(), 1);
  const bool rank_ok = per_query ? (t.rank() == 2 || t.rank() == 3) : t.rank() == 2;
  if (!rank_ok)
    fail(ErrorCode::MaskShapeMismatch,
         path + " has shape " + shape_string(t.shape) +
             (per_query ? "; a custom mask is Lq x Lk or B x Lq x Lk." : "; key padding is B x Lk."),
         {{"path", path}, {"shape", shape_string(t.shape)}});
  for (Index i = 0; i < t.size(); ++i) {
    const float v = t.data[static_cast<size_t>(i)];
    if (v != 0.0f && v != 1.0f) {
      const std::string here = flat_index_path(path, t.shape, i);
      std::string value;
      append_json_float(value, v);
      fail(ErrorCode::InvalidConfig, here + " is " + value + "; a mask holds 1 (attend) or 0 (masked).",
           {{"path", here}});
    }
  }
  return make_tensor(std::move(t));
}

Session SessionReader::read(const json& root) {
  if (!root.is_object())
    fail(ErrorCode::UnsupportedFormat, "not an Attention Lab session (the file is " + describe(root) +
                                           ", not a JSON object).");
  auto format = root.find("format");
  if (format == root.end())
    fail(ErrorCode::MissingInput, "not an Attention Lab session: the key \"format\": \"" +
                                      std::string(kFormatName) + "\" is missing.", {{"path", "format"}});
  if (!format->is_string() || format->get<std::string>() != kFormatName)
    fail(ErrorCode::UnsupportedFormat, "format is " + format->dump() + ", not \"" + kFormatName + "\".",
         {{"path", "format"}});
  auto version = root.find("version");
  if (version == root.end())
    fail(ErrorCode::MissingInput, "the key \"version\" is missing (this Attention Lab reads version " +
                                      std::to_string(kFormatVersion) + ").", {{"path", "version"}});
  if (!version->is_number_integer() || version->get<std::int64_t>() != kFormatVersion)
    fail(ErrorCode::UnsupportedFormat, "version is " + version->dump() + "; this Attention Lab reads version " +
                                           std::to_string(kFormatVersion) + " only.",
         {{"path", "version"}, {"version", version->dump()}});
  check_keys(root, "", {"format", "version", "description", "config", "tokens", "tokens_kv", "x", "x_q",
                        "x_kv", "q", "k", "v", "weights"});
  // Before anything is generated.
  check_generated_total(root);
  check_generated_trace(root);
  if (auto it = root.find("description"); it != root.end()) get_string(*it, "description");

  Session s;
  bool bias_given = false;
  auto config = root.find("config");
  s.config = read_config(config == root.end() ? json::object() : *config, bias_given);
  if (auto it = root.find("tokens"); it != root.end()) s.tokens = read_tokens(*it, "tokens");
  if (auto it = root.find("tokens_kv"); it != root.end()) s.tokens_kv = read_tokens(*it, "tokens_kv");

  // "x" and "x_q" are two names for the queries' input.
  auto x = root.find("x"), x_q = root.find("x_q");
  if (x != root.end() && x_q != root.end())
    fail(ErrorCode::InvalidConfig, "both \"x\" and \"x_q\" are given; they name the same input, give one.",
         {{"path", "x_q"}});
  if (x != root.end()) s.x = read_sequence(*x, "x");
  if (x_q != root.end()) s.x = read_sequence(*x_q, "x_q");
  if (auto it = root.find("x_kv"); it != root.end()) s.x_kv = read_sequence(*it, "x_kv");
  if (auto it = root.find("q"); it != root.end()) s.q = read_sequence(*it, "q");
  if (auto it = root.find("k"); it != root.end()) s.k = read_sequence(*it, "k");
  if (auto it = root.find("v"); it != root.end()) s.v = read_sequence(*it, "v");

  if (auto it = root.find("weights"); it != root.end()) {
    const json& w = *it;
    if (!w.is_object()) wrong_type("weights", w, "an object");
    check_keys(w, "weights", {"layout", "w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_qkv", "b_qkv",
                              "w_o", "b_o"});
    bool torch_layout = false;
    if (auto l = w.find("layout"); l != w.end()) {
      const std::string layout = get_string(*l, "weights.layout");
      if (layout == "torch") torch_layout = true;
      else if (layout != "math")
        fail(ErrorCode::InvalidConfig, "weights.layout is \"" + layout +
                                           "\"; it must be \"math\" (in x out) or \"torch\" (out x in).",
             {{"path", "weights.layout"}});
    }
    auto weight = [&](const char* key, TensorPtr& dst) {
      if (auto e = w.find(key); e != w.end()) dst = read_weight(*e, std::string("weights.") + key, torch_layout);
    };
    auto bias = [&](const char* key, TensorPtr& dst) {
      if (auto e = w.find(key); e != w.end()) dst = read_bias(*e, std::string("weights.") + key);
    };
    Weights& ws = s.weights;
    weight("w_q", ws.w_q);
    weight("w_k", ws.w_k);
    weight("w_v", ws.w_v);
    weight("w_qkv", ws.w_qkv);
    weight("w_o", ws.w_o);
    bias("b_q", ws.b_q);
    bias("b_k", ws.b_k);
    bias("b_v", ws.b_v);
    bias("b_qkv", ws.b_qkv);
    bias("b_o", ws.b_o);
  }
  const Weights& ws = s.weights;
  if (!bias_given) s.config.bias = ws.b_q || ws.b_k || ws.b_v || ws.b_qkv || ws.b_o;

  // The input that defines Lq and d_model in this mode.
  const bool direct = s.config.mode == InputMode::Direct;
  const TensorPtr& primary = direct ? s.q : s.x;
  const bool cross = s.config.attention == AttentionKind::Cross;
  const char* primary_name = direct ? "q" : (cross || x_q != root.end() ? "x_q" : "x");
  if (!primary)
    fail(ErrorCode::MissingInput,
         std::string("the input \"") + primary_name + "\" is missing; " +
             (direct ? "direct mode reads q, k and v."
                     : cross ? "cross attention reads x_q (queries) and x_kv (keys and values)."
                           : "projection mode reads x (and the weights)."),
         {{"path", primary_name}});
  if (s.config.d_model == 0) s.config.d_model = primary->dim(-1);
  if (!s.tokens.empty() && static_cast<Index>(s.tokens.size()) != primary->dim(1))
    fail(ErrorCode::ShapeMismatch, "tokens has " + std::to_string(s.tokens.size()) + " labels but " +
                                       primary_name + " has " + std::to_string(primary->dim(1)) +
                                       " positions (shape " + shape_string(primary->shape) + ").",
         {{"path", "tokens"}});
  const TensorPtr& keys = direct ? s.k : (cross ? s.x_kv : s.x);
  if (!s.tokens_kv.empty() && keys && static_cast<Index>(s.tokens_kv.size()) != keys->dim(1))
    fail(ErrorCode::ShapeMismatch, "tokens_kv has " + std::to_string(s.tokens_kv.size()) +
                                       " labels but the keys have " + std::to_string(keys->dim(1)) +
                                       " positions (shape " + shape_string(keys->shape) + ").",
         {{"path", "tokens_kv"}});

  // Everything about sizes fitting together (d_model, heads, masks) is the
  // compute's validation; a file that would not compute is refused here.
  if (check_fit_)
    if (auto invalid = validate(s)) fail(invalid->code, invalid->message, invalid->params);
  return s;
}

json parse_json_checked(const std::string& text, const std::string& name) {
  // Duplicate keys are a mistake the JSON parser would hide (the last one wins).
  std::vector<std::set<std::string>> open_objects;
  json::parser_callback_t on_event = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (event == json::parse_event_t::key && !open_objects.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second)
      throw LoadFailure{make_error(ErrorCode::ParseError,
                                   name + ": the key \"" + parsed.get<std::string>() +
                                       "\" appears twice in the same object.",
                                   {{"file", name}, {"path", parsed.get<std::string>()}})};
    return true;
  };
  try {
    return json::parse(text, on_event);
  } catch (const json::parse_error& e) {
    // Line and column of the byte where parsing stopped.
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') { ++line; column = 1; }
      else ++column;
    }
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    for (char& ch : what)  // the text it quotes may hold raw control bytes
      if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    throw LoadFailure{make_error(ErrorCode::ParseError, name + " is not valid JSON: " + what,
                                 {{"file", name}, {"line", std::to_string(line)}, {"column", std::to_string(column)}})};
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw LoadFailure{make_error(ErrorCode::ParseError, name + " is not valid JSON: " + std::string(e.what()),
                                 {{"file", name}})};
  }
}

}  // namespace

Result<Session> parse_session_json(const std::string& text, const std::string& base_dir,
                                   const std::string& name) {
  try {
    const json root = parse_json_checked(text, name);
    return SessionReader(name, base_dir).read(root);
  } catch (const LoadFailure& f) {
    return f.error;
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::TooLarge, name + ": not enough memory to load this session.", {{"file", name}});
  }
}

Result<LoadedSession> parse_session_json_for_editing(const std::string& text, const std::string& base_dir,
                                                     const std::string& name) {
  try {
    const json root = parse_json_checked(text, name);
    LoadedSession loaded{SessionReader(name, base_dir, false).read(root), {}};
    if (auto unfit = validate(loaded.session)) {
      loaded.unfit = std::move(unfit);
      loaded.unfit->message = name + ": " + loaded.unfit->message;
    }
    return loaded;
  } catch (const LoadFailure& f) {
    return f.error;
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::TooLarge, name + ": not enough memory to load this session.", {{"file", name}});
  }
}

Result<LoadedSession> load_session_file_for_editing(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  const fs::path folder = fs::path(path).parent_path();
  return parse_session_json_for_editing(*text, folder.empty() ? "." : folder.string(), path);
}

Result<Session> load_session_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  const fs::path folder = fs::path(path).parent_path();
  return parse_session_json(*text, folder.empty() ? "." : folder.string(), path);
}

std::string tensor_to_json(const Tensor& t) {
  std::string out;
  append_nested(out, t, 0, 0, -1, 0);
  return out;
}

std::string session_to_json(const Session& s) {
  const Config& c = s.config;
  std::string out = "{\n  \"format\": \"" + std::string(kFormatName) + "\",\n  \"version\": " +
                    std::to_string(kFormatVersion) + ",\n  \"config\": {\n";
  out += "    \"mode\": \"" + std::string(c.mode == InputMode::Direct ? "direct" : "projection") + "\",\n";
  out += "    \"attention\": \"" + std::string(c.attention == AttentionKind::Cross ? "cross" : "self") + "\",\n";
  out += "    \"d_model\": " + std::to_string(c.d_model) + ",\n";
  out += "    \"num_heads\": " + std::to_string(c.num_heads) + ",\n";
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

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> list;
  for (const auto& [name, text] : embedded_presets()) {
    PresetInfo info{name, {}};
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object())
      if (auto it = j.find("description"); it != j.end() && it->is_string()) info.description = it->get<std::string>();
    list.push_back(std::move(info));
  }
  return list;
}

const char* default_preset_name() { return "default"; }

Result<Session> load_preset(const std::string& name) {
  for (const auto& [preset, text] : embedded_presets())
    if (preset == name) return parse_session_json(text, "", "preset '" + name + "'");
  std::string names;
  for (const auto& [preset, text] : embedded_presets()) names += (names.empty() ? "" : ", ") + preset;
  return make_error(ErrorCode::UnknownPreset, "there is no preset named '" + name + "' (the presets are: " + names + ")",
                    {{"name", name}});
}

Result<Session> load_session_or_preset(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::exists(name_or_path, ec)) return load_session_file(name_or_path);
  // Anything that looks like a path is reported as a missing file, not as an unknown preset.
  if (name_or_path.find('/') != std::string::npos || fs::path(name_or_path).has_extension())
    return load_session_file(name_or_path);
  Result<Session> preset = load_preset(name_or_path);
  if (preset || preset.error().code != ErrorCode::UnknownPreset) return preset;
  Error e = preset.error();
  e.message = "'" + name_or_path + "' is neither a session file nor a preset: " + e.message +
              " (see --list-presets)";
  return e;
}

}  // namespace al
