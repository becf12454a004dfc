// Validating a session file's sizes before anything is generated: the
// {"random"} inputs together, and the trace they would lead to, against the caps.
#include <string>
#include <vector>

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
}  // namespace al::detail
