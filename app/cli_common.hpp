#pragma once
// What the headless commands (trace, grad, train) share: their error exits and
// writing to stdout.
#include <functional>
#include <optional>
#include <string>

namespace al::cli {

// "attention-lab: error: <message>" on stderr; returns 1, the exit code of a command that failed.
int fail(const std::string& message);
// The same followed by the command's usage text; returns 2, the exit code of a wrong command line.
int usage_error(const std::string& message, const std::string& usage);
// The command line of a command that reads one session and prints JSON (grad, decode):
// `<command> <preset | session.json> [own options] --json`, or --help. `option(arg, i)` reads
// one of the command's own options (and its value, as argv[++i]) and returns true, or false
// for an option it does not know. Returns the exit code to stop with (help printed, or a
// usage error), or nothing when `source` is set and --json given.
std::optional<int> parse_session_command(int argc, char** argv, const std::string& command, const std::string& usage,
                                         std::string& source,
                                         const std::function<bool(const std::string& arg, int& i)>& option = {});
// The bytes to stdout as they are (large stages are written one by one, not built into one string).
void write(const std::string& text);

}  // namespace al::cli
