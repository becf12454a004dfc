#pragma once
// Python source for numbers, strings and tensors: what `attention-lab export-torch`
// writes its scripts with (exact: every float reads back to itself).
#include <sstream>
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace al::python {

// The shortest decimal that reads back (as float32 / as a double) to exactly this value.
std::string python_float(float value);
std::string python_double(double value);
// A Python string literal.
std::string python_string(const std::string& text);
// "(2, 3)", "(4,)".
std::string shape_tuple(const std::vector<Index>& shape);
// `name = <tensor>`, under a comment naming its axes and their sizes: nested lists when
// small, base64 of the raw bytes (read by the script's unpack()) when large. `binary`
// tensors (masks, dropout keeps) are written as 0/1.
void write_tensor(std::ostringstream& out, const std::string& name, const Tensor& t, const std::string& comment,
                  const std::string& axes, bool binary = false);

}  // namespace al::python
