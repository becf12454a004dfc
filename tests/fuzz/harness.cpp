#include "harness.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "numerics/attention.hpp"
#include "numerics/decode.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"

namespace al::fuzz {
namespace {

[[noreturn]] void property_failed(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz property failed: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// Same shape and the same bits, except that any NaN equals any NaN (the text
// formats do not keep NaN payloads).
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape || a.data.size() != b.data.size()) return false;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const float x = a.data[i], y = b.data[i];
    if (x != x && y != y) continue;
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

void check_error(const Error& e) {
  if (e.message.empty()) property_failed("an error without a message", error_code_name(e.code));
}

void run_session(const std::string& text, const std::string& files_dir) {
  Result<Session> loaded = parse_session_json(text, files_dir, "fuzz.json");
  if (!loaded) return check_error(loaded.error());
  // A session the loader accepts must save, load back and save to the same text.
  const std::string saved = session_to_json(*loaded);
  Result<Session> reloaded = parse_session_json(saved, "", "saved.json");
  if (!reloaded) property_failed("an accepted session does not load after saving", reloaded.error().message + "\n" + saved);
  if (session_to_json(*reloaded) != saved) property_failed("save -> load -> save changed the session", saved);
  // And it must compute (or refuse cleanly); a small memory limit keeps runs fast.
  ComputeOptions options;
  options.memory_limit_bytes = Index{1} << 22;
  auto trace = compute(*loaded, options);
  if (!trace) return check_error(trace.error());
  const Tensor& out = (*trace)->stage(Stage::Output);
  const std::vector<Index> expected = {loaded->batch(), loaded->len_q(), loaded->config.d_model};
  if (out.shape != expected)
    property_failed("the output shape is not (B, Lq, d_model)", shape_string(out.shape) + " vs " + shape_string(expected));
  // Decoding token by token runs or refuses cleanly, one step per position.
  auto run = decode(*loaded);
  if (!run) return check_error(run.error());
  if (static_cast<Index>(run->steps.size()) != loaded->len_q()) property_failed("decode: not one step per token", "");
}

void run_npy(const std::string& bytes) {
  Result<Tensor> t = parse_npy(bytes, "fuzz.npy");
  if (!t) return check_error(t.error());
  if (static_cast<Index>(t->data.size()) != shape_product(t->shape)) property_failed("npy: data does not fill the shape", "");
  Result<Tensor> again = parse_npy(npy_bytes(*t), "again.npy");
  if (!again || !same_values(*t, *again)) property_failed("npy: write -> read changed the array", shape_string(t->shape));
}

void run_csv(const std::string& text) {
  Result<Tensor> t = parse_csv(text, "fuzz.csv");
  if (!t) return check_error(t.error());
  if (t->rank() != 2 || t->rows() < 1 || t->cols() < 1) property_failed("csv: not a non-empty matrix", shape_string(t->shape));
  Result<Tensor> again = parse_csv(csv_text(*t), "again.csv");
  if (!again || !same_values(*t, *again)) property_failed("csv: write -> read changed the matrix", csv_text(*t));
}

}  // namespace

std::optional<Kind> kind_from_name(const std::string& name) {
  if (name == "session") return Kind::Session;
  if (name == "npy") return Kind::Npy;
  if (name == "csv") return Kind::Csv;
  return std::nullopt;
}

void run_one(Kind kind, const std::uint8_t* data, std::size_t size, const std::string& session_files_dir) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  switch (kind) {
    case Kind::Session: return run_session(input, session_files_dir);
    case Kind::Npy: return run_npy(input);
    case Kind::Csv: return run_csv(input);
  }
}

}  // namespace al::fuzz
