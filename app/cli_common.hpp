#pragma once
// What the headless commands (trace, grad, decode, train, export-torch) share: their error
// exits, their options' values, the checks on an output file, and writing to stdout.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace al::cli {

// "attention-lab: error: <message>" on stderr; returns 1, the exit code of a command that failed.
int fail(const std::string& message);
// The same followed by the command's usage text; returns 2, the exit code of a wrong command line.
int usage_error(const std::string& message, const std::string& usage);

// Reads options' values from argv, each option once: a second --steps used to replace the
// first without a word, and an option missing its value took the next option as its value.
class OptionValues {
 public:
  OptionValues(int argc, char** argv) : argc_(argc), argv_(argv) {}
  // The value after the option argv[i] (i moves onto it), named `option` (its canonical
  // spelling); `needs` says what it takes ("a file name"). Returns why there is none instead:
  // missing, empty, the next option (a value starting with "--"), or `option` given before.
  std::optional<std::string> take(int& i, const std::string& option, const std::string& needs, std::string& value);
  // The same for a value written inside the argument (--out=FILE).
  std::optional<std::string> accept(const std::string& option, const std::string& needs, const std::string& text,
                                    std::string& value);

 private:
  int argc_;
  char** argv_;
  std::map<std::string, std::string> given_;  // option -> its value
};

// An option of a session command that takes a value: its name, what it takes, where it goes.
struct ValueOption {
  std::string name, needs;
  std::string* value;
};
// The command line of a command that reads one session and prints JSON (grad, decode):
// `<command> <preset | session.json> [own options] --json`, or --help. Returns the exit code
// to stop with (help printed, or a usage error), or nothing when `source` is set and --json given.
std::optional<int> parse_session_command(int argc, char** argv, const std::string& command, const std::string& usage,
                                         std::string& source, const std::vector<ValueOption>& options = {});

// Why `out` (given as `option`) must not be written for the session `source`: it is the
// session's own file (the same file by device and inode, however spelled). Nothing when fine.
std::optional<std::string> output_overwrites_session(const std::string& option, const std::string& out,
                                                     const std::string& source);
// Why a file cannot be saved at `path`, found by creating and removing a temporary file in its
// folder as the atomic save does, before minutes of work: a folder, a missing folder, no permission.
std::optional<std::string> cannot_save(const std::string& path);

// The bytes to stdout as they are (large stages are written one by one, not built into one string).
void write(const std::string& text);

}  // namespace al::cli
