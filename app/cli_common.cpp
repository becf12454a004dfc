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

std::optional<int> parse_session_command(int argc, char** argv, const std::string& command, const std::string& usage,
                                         std::string& source,
                                         const std::function<bool(const std::string& arg, int& i)>& option) {
  bool json = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      if (!option || !option(arg, i)) return usage_error(command + ": unknown option " + arg, usage);
    } else if (source.empty()) {
      source = arg;
    } else {
      return usage_error(command + ": more than one session given (" + source + ", " + arg + ")", usage);
    }
  }
  if (source.empty())
    return usage_error(command + ": which session? Give a preset name or a session.json file.", usage);
  if (!json) return usage_error(command + ": give --json (the only output format).", usage);
  return std::nullopt;
}

void write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace al::cli
