// Validating a session file's sizes before anything is generated: the
// {"random"} inputs together, and the trace they would lead to, against the caps;
// and saying what validate() finds in the terms of the file.
#include <cmath>
#include <string>
#include <vector>

#include "base/number_text.hpp"
#include "io/session_json.hpp"
#include "numerics/attention.hpp"
#include "numerics/attention_plan.hpp"

namespace al::detail {

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
    const auto size = whole_int64(d);
    if (!size || *size <= 0 || *size > kMaxElements || count > kMaxElements / *size) return 0;
    count *= *size;
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
  std::vector<Index> shape;
  for (const json& d : spec["shape"]) shape.push_back(*whole_int64(d));
  return shape;
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
  const auto written_heads = heads_it != config.end() ? whole_int64(*heads_it) : std::nullopt;
  const Index heads = written_heads && *written_heads > 0 ? *written_heads : 1;
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

namespace {

// validate() sees every weight in math layout (in x out); a file in torch layout
// (out x in) is told the shape it wrote and the one it should write.
std::optional<Error> torch_shape_error(const Session& s, const Error& invalid) {
  if (invalid.code != ErrorCode::ShapeMismatch) return std::nullopt;
  const Config& c = s.config;
  const Index d = c.d_model, kv = c.kv_width();
  const bool grouped = kv != d;
  const std::string kv_name = grouped ? "num_kv_heads·d_k = " + std::to_string(kv) : "d_model";
  const Weights& w = s.weights;
  struct Rule {
    const char* name;
    const TensorPtr& weight;
    Index out;
    std::string out_name;
  };
  const Rule rules[] = {{"w_q", w.w_q, d, "d_model"},
                        {"w_k", w.w_k, kv, kv_name},
                        {"w_v", w.w_v, kv, kv_name},
                        {"w_qkv", w.w_qkv, d + 2 * kv, grouped ? "d_model + 2·num_kv_heads·d_k" : "3·d_model"},
                        {"w_o", w.w_o, d, "d_model"}};
  for (const Rule& r : rules) {
    if (!r.weight || r.weight->rank() != 2) continue;
    // Only the error validate() gives for this weight's shape.
    const std::string math = std::string(r.name) + " has shape " + shape_string(r.weight->shape) + " but must be ";
    if (invalid.message.rfind(math, 0) != 0) continue;
    const std::string path = std::string("weights.") + r.name;
    const std::string written = std::to_string(r.weight->dim(1)) + "x" + std::to_string(r.weight->dim(0));
    const std::string wanted = std::to_string(r.out) + "x" + std::to_string(d);
    return make_error(ErrorCode::ShapeMismatch,
                      path + " is " + written + " as written, but in torch layout (out x in) it must be " + wanted +
                          " (" + r.out_name + " x d_model).",
                      {{"path", path}, {"shape", written}, {"expected", wanted}});
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> SessionReader::fit_error(const Session& s) const {
  // validate()'s limits on these two, said with the key that holds the value.
  const PositionalSpec& positional = s.config.positional;
  if (positional.type == PositionalType::Rope && !(std::isfinite(positional.rope_base) && positional.rope_base > 1.0))
    return make_error(ErrorCode::InvalidConfig,
                      "config.positional.rope_base must be a finite number above 1 (10000 in Llama), but it is " +
                          shortest_text(positional.rope_base) + ".",
                      {{"path", "config.positional.rope_base"}});
  const double p = s.config.dropout.p;
  if (!(p >= 0.0 && p < 1.0))
    return make_error(ErrorCode::InvalidConfig,
                      "config.dropout.p must be at least 0 and below 1, but it is " + shortest_text(p) + ".",
                      {{"path", "config.dropout.p"}});
  auto invalid = validate(s);
  if (invalid && torch_layout_)
    if (auto torch = torch_shape_error(s, *invalid)) return torch;
  return invalid;
}

}  // namespace al::detail
