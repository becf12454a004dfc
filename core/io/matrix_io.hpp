#pragma once
// .npy and CSV reading/writing (the project's own reader: float32/float64,
// little-endian, C order; anything else is a clear error).
#include <string>

#include "base/error.hpp"
#include "base/tensor.hpp"

namespace al {

Result<Tensor> parse_npy(const std::string& bytes, const std::string& name_for_errors);
Result<Tensor> read_npy(const std::string& path);
std::string npy_bytes(const Tensor& t);  // float32, C order, format version 1.0

// CSV: one matrix row per line, comma separated; "NaN", "inf", "-inf" allowed.
Result<Tensor> parse_csv(const std::string& text, const std::string& name_for_errors);
Result<Tensor> read_csv(const std::string& path);
std::string csv_text(const Tensor& t);  // cols() values per line; leading dimensions become more lines

// Writes via a temporary file in the same folder, flush, fsync and rename, so a
// crash or a full disk never leaves a half-written file.
std::optional<Error> write_file_atomic(const std::string& path, const std::string& bytes);
// The refusal write_file_atomic gives for a read-only file at path (nothing when it may be replaced), so a
// long computation can check its output first.
std::optional<Error> read_only_refusal(const std::string& path);
Result<std::string> read_file(const std::string& path);

}  // namespace al
