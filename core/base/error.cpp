#include "base/error.hpp"

namespace al {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidConfig: return "invalid_config";
    case ErrorCode::HeadsDoNotDivide: return "heads_do_not_divide";
    case ErrorCode::ShapeMismatch: return "shape_mismatch";
    case ErrorCode::MaskShapeMismatch: return "mask_shape_mismatch";
    case ErrorCode::TooLarge: return "too_large";
    case ErrorCode::MissingInput: return "missing_input";
    case ErrorCode::ParseError: return "parse_error";
    case ErrorCode::UnsupportedFormat: return "unsupported_format";
    case ErrorCode::IoError: return "io_error";
    case ErrorCode::UnknownPreset: return "unknown_preset";
    case ErrorCode::Cancelled: return "cancelled";
  }
  return "unknown";
}

Error make_error(ErrorCode code, std::string message,
                 std::vector<std::pair<std::string, std::string>> params) {
  return Error{code, std::move(message), std::move(params)};
}

}  // namespace al
