#include "cli_common.hpp"

#include <cstdio>
#include <iostream>

namespace al::cli {

int fail(const std::string& message) {
  std::cerr << "attention-lab: error: " << message << "\n";
  return 1;
}

int usage_error(const std::string& message, const std::string& usage) {
  std::cerr << "attention-lab: error: " << message << "\n" << usage;
  return 2;
}

void write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace al::cli
