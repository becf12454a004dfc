// Pieces the session reader and writer share (session_json.hpp).
#include "io/session_json.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace al::detail {

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

bool is_whole(const json& j) {
  if (j.is_number_integer()) return true;  // unsigned too
  if (!j.is_number_float()) return false;
  const double v = j.get<double>();
  return std::isfinite(v) && v == std::floor(v);
}

// 2^63 and 2^64 are exact doubles: a whole double below them converts exactly.
std::optional<std::int64_t> whole_int64(const json& j) {
  if (j.is_number_unsigned()) {
    if (j.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(j.get<std::uint64_t>());
  }
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (!is_whole(j) || j.get<double>() < -0x1p63 || j.get<double>() >= 0x1p63) return std::nullopt;
  return static_cast<std::int64_t>(j.get<double>());
}

std::optional<std::uint64_t> whole_uint64(const json& j) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer()) return std::nullopt;  // only negative values land here
  if (!is_whole(j) || j.get<double>() < 0 || j.get<double>() >= 0x1p64) return std::nullopt;
  return static_cast<std::uint64_t>(j.get<double>());
}

void append_json_float(std::string& out, float value) {
  if (std::isnan(value)) { out += "\"NaN\""; return; }
  if (std::isinf(value)) { out += value > 0 ? "\"Infinity\"" : "\"-Infinity\""; return; }
  if (value == 0.0f && std::signbit(value)) { out += "-0.0"; return; }  // "-0" would read back as integer 0
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, value);  // shortest form that reads back exactly
  out.append(buf, res.ptr);
}

}  // namespace al::detail
