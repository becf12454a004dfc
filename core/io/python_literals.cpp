#include "io/python_literals.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace al::python {

namespace {

// Tensors up to this many elements are written as readable nested lists; bigger
// ones as base64 of their bytes (a 1M-element list would make a script Python
// parses slowly and no one reads).
constexpr Index kInlineElements = 4096;

// Nested Python lists laid out like numpy prints them: one innermost row per line.
void write_nested(std::ostringstream& out, const Tensor& t, size_t dim, Index offset, int indent,
                  bool binary) {
  const Index n = t.shape[dim];
  out << '[';
  if (dim + 1 == t.shape.size()) {
    for (Index i = 0; i < n; ++i) {
      const float value = t.data[static_cast<size_t>(offset + i)];
      out << (i ? ", " : "") << (binary ? std::to_string(value != 0.0f ? 1 : 0) : python_float(value));
    }
  } else {
    const Index stride = shape_product({t.shape.begin() + static_cast<long>(dim) + 1, t.shape.end()});
    for (Index i = 0; i < n; ++i) {
      if (i) out << ",\n" << std::string(static_cast<size_t>(indent + 1), ' ');
      write_nested(out, t, dim + 1, offset + i * stride, indent + 1, binary);
    }
  }
  out << ']';
}

std::string base64(const unsigned char* bytes, size_t size) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const unsigned a = bytes[i], b = i + 1 < size ? bytes[i + 1] : 0, c = i + 2 < size ? bytes[i + 2] : 0;
    out += alphabet[a >> 2];
    out += alphabet[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < size ? alphabet[((b & 15) << 2) | (c >> 6)] : '=';
    out += i + 2 < size ? alphabet[c & 63] : '=';
  }
  return out;
}

}  // namespace

// The shortest decimal that Python reads back (as a double, then rounded to
// float32 by torch.tensor) to exactly this float: readable ("0.1", not
// "0.100000001") and exact. Nine significant digits always suffice.
std::string python_float(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(value));
    if (static_cast<float>(std::strtod(buffer, nullptr)) == value) break;
  }
  return buffer;
}

// Same for a double (scale factors, fill values): shortest exact form.
std::string python_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string python_string(const std::string& text) {
  // A JSON string literal is also a valid Python string literal.
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string shape_tuple(const std::vector<Index>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// `name = <tensor>`, under a comment naming its axes and their sizes. `binary`
// tensors (masks, dropout keeps) are written as 0/1 (as uint8 bytes when large).
void write_tensor(std::ostringstream& out, const std::string& name, const Tensor& t,
                  const std::string& comment, const std::string& axes, bool binary) {
  out << "# " << comment << ". " << axes << " = " << shape_tuple(t.shape) << "\n";
  if (t.size() == 0) {
    out << name << " = torch.zeros(" << shape_tuple(t.shape) << ")\n";
    return;
  }
  if (t.size() <= kInlineElements) {
    out << name << " = torch.tensor(";
    write_nested(out, t, 0, 0, static_cast<int>(name.size() + 16), binary);
    out << ", dtype=torch.float32)\n";
    return;
  }
  std::string encoded;
  if (binary) {
    std::vector<unsigned char> bits(t.data.size());
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = t.data[i] != 0.0f ? 1 : 0;
    encoded = base64(bits.data(), bits.size());
  } else {
    // x86 and ARM are little-endian, which is what unpack() reads.
    encoded = base64(reinterpret_cast<const unsigned char*>(t.data.data()), t.data.size() * sizeof(float));
  }
  out << name << " = unpack(" << shape_tuple(t.shape) << ", " << (binary ? "torch.uint8" : "torch.float32")
      << ", [\n";
  constexpr size_t kLine = 96;
  for (size_t i = 0; i < encoded.size(); i += kLine) out << "    \"" << encoded.substr(i, kLine) << "\",\n";
  out << "])" << (binary ? ".float()" : "") << "\n";
}

}  // namespace al::python
