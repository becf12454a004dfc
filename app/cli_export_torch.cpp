#include "cli_export_torch.hpp"

#include <iostream>
#include <optional>
#include <string>

#include "io/export_torch.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "cli_common.hpp"

namespace al::cli {
namespace {

const char* kUsage =
    "usage: attention-lab export-torch <preset | session.json> [--out script.py]\n"
    "Writes a self-contained PyTorch script that rebuilds the session's computation\n"
    "stage by stage. Without --out the script goes to standard output.\n"
    "Run it with `python3 script.py` (prints the output) or `python3 script.py --json`\n"
    "(every stage, in the same names and shapes as `attention-lab trace --json`).\n";

}  // namespace

int run_export_torch(int argc, char** argv) {
  std::string source, out_path;
  OptionValues values(argc, argv);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    std::optional<std::string> problem;
    if (arg == "--out" || arg == "-o") problem = values.take(i, "--out", "a file name", out_path);
    else if (arg.rfind("--out=", 0) == 0) problem = values.accept("--out", "a file name", arg.substr(6), out_path);
    else if (!arg.empty() && arg[0] == '-') problem = "unknown option " + arg;
    else if (source.empty()) source = arg;
    else problem = "more than one session given (" + source + ", " + arg + ")";
    if (problem) return usage_error("export-torch: " + *problem, kUsage);
  }
  if (source.empty())
    return usage_error("export-torch: which session? Give a preset name or a session.json file.", kUsage);
  if (auto problem = output_overwrites_session("--out", out_path, source))
    return usage_error("export-torch: " + *problem, kUsage);

  Result<Session> session = load_session_or_preset(source);
  if (!session) return fail("export-torch: " + session.error().message);
  Result<std::string> script = torch_script(*session, source);
  if (!script) return fail("export-torch: " + script.error().message);
  if (out_path.empty()) {
    std::cout << *script;
    return 0;
  }
  if (auto error = write_file_atomic(out_path, *script)) return fail("export-torch: " + error->message);
  std::cerr << "wrote " << out_path << ": run it with `python3 " << out_path
            << "` (add --json for every stage)\n";
  return 0;
}

}  // namespace al::cli
