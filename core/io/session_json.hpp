#pragma once
// Internal to io/: what the session reader (session_io.cpp, its JSON text in json_text.cpp), its size checks
// (session_validate.cpp) and the writer (session_writer.cpp) share.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/number_text.hpp"
#include "model/session.hpp"

namespace al::detail {

using json = nlohmann::json;

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

// Thrown inside the reader and turned into a Result at its entry point, so
// every check can be one line.
struct LoadFailure {
  Error error;
};

std::string describe(const json& j);
std::string index_path(const std::string& path, const std::vector<size_t>& idx, size_t depth);
// "x[0][3]" for the flat index of a C-order tensor.
std::string flat_index_path(const std::string& path, const std::vector<Index>& shape, Index flat);
// Non-finite values travel as strings, since JSON has no NaN or infinity.
std::optional<float> special_value(const std::string& s);
// A number with no fraction, written 4 or 4.0 (scripts write whole floats).
bool is_whole(const json& j);
// Its value, if a whole number fits the type.
std::optional<std::int64_t> whole_int64(const json& j);
std::optional<std::uint64_t> whole_uint64(const json& j);
void append_json_float(std::string& out, float value);
// The text's JSON; a repeated key, bare NaN, an empty or UTF-16 file throw a LoadFailure that says so.
json parse_json_checked(const std::string& text, const std::string& name);

// ---------------------------------------------------------------------------
class SessionReader {
 public:
  // check_fit: refuse a session whose sizes do not fit together (validate()).
  SessionReader(std::string name, std::string base_dir, bool check_fit = true)
      : name_(std::move(name)), base_dir_(std::move(base_dir)), check_fit_(check_fit) {}

  Session read(const json& root);
  // What validate() says of a session read(), in the file's terms: the config
  // values named by their key, a torch-layout weight by the shape as written.
  std::optional<Error> fit_error(const Session& s) const;

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
  // A number that float32 holds (the computation's type); "NaN" and the like are the caller's.
  double get_float(const json& j, const std::string& path) const;
  [[noreturn]] void out_of_range(const std::string& path, const json& j, const std::string& low,
                                 const std::string& high) const {
    fail(ErrorCode::InvalidConfig, path + " is " + j.dump() + "; it must be a whole number from " + low + " to " + high + ".",
         {{"path", path}});
  }
  Index get_positive_int(const json& j, const std::string& path) const;
  std::uint64_t get_uint64(const json& j, const std::string& path) const;

  Config read_config(const json& j, bool& bias_given);
  PositionalSpec read_positional(const json& j) const;
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
  bool torch_layout_ = false;  // "weights": {"layout": "torch"}
};

}  // namespace al::detail
