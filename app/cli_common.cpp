#include "cli_common.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "io/matrix_io.hpp"

namespace al::cli {

int fail(const std::string& message) {
  std::cerr << "attention-lab: error: " << message << "\n";
  return 1;
}

int usage_error(const std::string& message, const std::string& usage) {
  std::cerr << "attention-lab: error: " << message << "\n" << usage;
  return 2;
}

std::optional<std::string> OptionValues::take(int& i, const std::string& option, const std::string& needs,
                                              std::string& value) {
  const std::string spelled = argv_[i];
  if (i + 1 >= argc_) return spelled + " needs " + needs;
  const std::string next = argv_[i + 1];
  if (next.rfind("--", 0) == 0) return spelled + " needs " + needs + ", but the next argument is the option " + next;
  ++i;
  return accept(option, needs, next, value);
}

std::optional<std::string> OptionValues::accept(const std::string& option, const std::string& needs,
                                                const std::string& text, std::string& value) {
  if (text.empty()) return option + " needs " + needs + ", but it is empty";
  if (const auto before = given_.find(option); before != given_.end())
    return option + " is given twice ('" + before->second + "', then '" + text + "'); give it once";
  given_[option] = text;
  value = text;
  return std::nullopt;
}

std::optional<int> parse_session_command(int argc, char** argv, const std::string& command, const std::string& usage,
                                         std::string& source, const std::vector<ValueOption>& options) {
  bool json = false;
  OptionValues values(argc, argv);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const ValueOption* option = nullptr;
    for (const ValueOption& o : options)
      if (arg == o.name) option = &o;
    if (arg == "--json") {
      json = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    } else if (option) {
      if (auto problem = values.take(i, option->name, option->needs, *option->value))
        return usage_error(command + ": " + *problem, usage);
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error(command + ": unknown option " + arg, usage);
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

std::optional<std::string> output_overwrites_session(const std::string& option, const std::string& out,
                                                     const std::string& source) {
  std::error_code error;
  if (!std::filesystem::equivalent(out, source, error)) return std::nullopt;  // also when either is missing
  return option + " " + out + " is the session file " + source +
         ": writing there would replace the session; nothing was written, choose another name";
}

std::optional<std::string> cannot_save(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) return "'" + path + "' is a folder; give a file name in it";
  if (auto refusal = read_only_refusal(path)) return refusal->message;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return "cannot save '" + path + "': the folder '" + folder.string() + "' does not exist";
    return "cannot save '" + path + "': cannot create a file in '" + folder.string() + "' (" + std::strerror(err) + ")";
  }
  ::close(fd);
  ::unlink(temp.c_str());
  return std::nullopt;
}

void write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace al::cli
