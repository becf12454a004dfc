#pragma once
// What the headless commands (trace, grad, train) share: their error exits and
// writing to stdout.
#include <string>

namespace al::cli {

// "attention-lab: error: <message>" on stderr; returns 1, the exit code of a command that failed.
int fail(const std::string& message);
// The same followed by the command's usage text; returns 2, the exit code of a wrong command line.
int usage_error(const std::string& message, const std::string& usage);
// The bytes to stdout as they are (large stages are written one by one, not built into one string).
void write(const std::string& text);

}  // namespace al::cli
