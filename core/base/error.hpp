#pragma once
// Typed errors with a message a learner understands. The message is English;
// `params` carry the values in it so the app can render a translated message
// from the code (see assets/i18n) with the same values.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace al {

enum class ErrorCode {
  InvalidConfig,        // a config value out of range (negative size, p outside [0,1) ...)
  HeadsDoNotDivide,     // d_model % num_heads != 0
  ShapeMismatch,        // a matrix whose shape does not fit the others
  MaskShapeMismatch,    // a mask whose shape does not fit (Lq x Lk)
  TooLarge,             // the trace would need more memory than allowed
  MissingInput,         // a key the mode needs is absent
  ParseError,           // malformed JSON / CSV / npy
  UnsupportedFormat,    // valid file, unsupported content (dtype, version ...)
  IoError,              // cannot read / write a file
  UnknownPreset,
  Cancelled,            // a newer edit cancelled this computation
};

const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;                                       // English, complete
  std::vector<std::pair<std::string, std::string>> params;   // named values used in the message
};

// Either a value or an Error (C++17 stand-in for std::expected).
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

Error make_error(ErrorCode code, std::string message,
                 std::vector<std::pair<std::string, std::string>> params = {});

}  // namespace al
