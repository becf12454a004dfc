// The session file (docs/session-format.md): reading JSON into a Session. The
// size checks before generating inputs are in session_validate.cpp, the writer in
// session_writer.cpp, the presets in presets.cpp.
#include "io/session_io.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>

#include "numerics/attention.hpp"
#include "numerics/attention_plan.hpp"
#include "io/matrix_io.hpp"
#include "io/session_json.hpp"
#include "base/random.hpp"

namespace al {

namespace fs = std::filesystem;

namespace detail {

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

double SessionReader::get_float(const json& j, const std::string& path) const {
  const double v = get_number(j, path);
  if (std::fabs(v) >= kFloatOverflow)  // beyond the double range too: nlohmann gives inf
    fail(ErrorCode::InvalidConfig, path + " is " + j.dump() + ", too large for a float32 (at most about 3.4e38).",
         {{"path", path}});
  return v;
}

Index SessionReader::get_positive_int(const json& j, const std::string& path) const {
  if (!is_whole(j)) wrong_type(path, j, "a positive whole number");
  if (j.get<double>() < 1)
    fail(ErrorCode::InvalidConfig, path + " must be at least 1, but it is " + j.dump() + ".", {{"path", path}});
  if (auto v = whole_int64(j)) return *v;
  out_of_range(path, j, "1", std::to_string(INT64_MAX));
}

std::uint64_t SessionReader::get_uint64(const json& j, const std::string& path) const {
  if (!is_whole(j)) wrong_type(path, j, "a whole number (0 or more)");
  if (j.get<double>() < 0)
    fail(ErrorCode::InvalidConfig, path + " must not be negative, but it is " + j.dump() + ".",
         {{"path", path}});
  if (auto v = whole_uint64(j)) return *v;
  out_of_range(path, j, "0", std::to_string(UINT64_MAX));
}

std::vector<std::string> SessionReader::read_tokens(const json& j, const std::string& path) const {
  if (!j.is_array()) wrong_type(path, j, "an array of strings");
  std::vector<std::string> tokens;
  for (size_t i = 0; i < j.size(); ++i)
    tokens.push_back(get_string(j[i], path + "[" + std::to_string(i) + "]"));
  return tokens;
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
  if (p.is_absolute())  // even one inside the folder: the session must still work when the folder moves
    fail(ErrorCode::InvalidConfig, path + " is \"" + rel +
                                       "\", an absolute path; use a path relative to the folder of the session "
                                       "file, so that the session still works when its folder moves.",
         {{"path", path}});
  if (rel.empty() || normal.empty() || *normal.begin() == "..")
    fail(ErrorCode::InvalidConfig, path + " is \"" + rel +
                                       "\", which is outside the session's folder; use a path relative "
                                       "to the folder of the session file, without leading \"..\".",
         {{"path", path}});
  return (fs::path(base_dir_) / normal).string();
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
    stddev = get_float(*it, path + ".std");
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
  if (!is_whole(*version) || version->get<double>() != kFormatVersion)
    fail(ErrorCode::UnsupportedFormat, "version is " + version->dump() + "; this Attention Lab reads version " +
                                           std::to_string(kFormatVersion) + " only.",
         {{"path", "version"}, {"version", version->dump()}});
  check_keys(root, "", {"format", "version", "description", "description_zh", "config", "tokens", "tokens_kv", "x", "x_q",
                        "x_kv", "q", "k", "v", "weights"});
  // Before anything is generated.
  check_generated_total(root);
  check_generated_trace(root);
  if (auto it = root.find("description"); it != root.end()) get_string(*it, "description");
  if (auto it = root.find("description_zh"); it != root.end()) get_string(*it, "description_zh");

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
    if (auto l = w.find("layout"); l != w.end()) {
      const std::string layout = get_string(*l, "weights.layout");
      if (layout == "torch") torch_layout_ = true;
      else if (layout != "math")
        fail(ErrorCode::InvalidConfig, "weights.layout is \"" + layout +
                                           "\"; it must be \"math\" (in x out) or \"torch\" (out x in).",
             {{"path", "weights.layout"}});
    }
    auto weight = [&](const char* key, TensorPtr& dst) {
      if (auto e = w.find(key); e != w.end()) dst = read_weight(*e, std::string("weights.") + key, torch_layout_);
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
    fail(ErrorCode::ShapeMismatch, "the number of labels in tokens (" + std::to_string(s.tokens.size()) +
                                       ") is not the number of positions of " + primary_name + " (" +
                                       std::to_string(primary->dim(1)) + ", shape " + shape_string(primary->shape) +
                                       ").",
         {{"path", "tokens"}});
  const TensorPtr& keys = direct ? s.k : (cross ? s.x_kv : s.x);
  if (!s.tokens_kv.empty() && keys && static_cast<Index>(s.tokens_kv.size()) != keys->dim(1))
    fail(ErrorCode::ShapeMismatch, "the number of labels in tokens_kv (" + std::to_string(s.tokens_kv.size()) +
                                       ") is not the number of key positions (" + std::to_string(keys->dim(1)) +
                                       ", shape " + shape_string(keys->shape) + ").",
         {{"path", "tokens_kv"}});

  // Everything about sizes fitting together (d_model, heads, masks) is the
  // compute's validation; a file that would not compute is refused here.
  if (check_fit_)
    if (auto invalid = fit_error(s)) fail(invalid->code, invalid->message, invalid->params);
  return s;
}

}  // namespace detail

using detail::json;
using detail::LoadFailure;
using detail::parse_json_checked;
using detail::SessionReader;


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
    SessionReader reader(name, base_dir, false);
    LoadedSession loaded{reader.read(root), {}};
    if (auto unfit = reader.fit_error(loaded.session)) {
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

}  // namespace al
