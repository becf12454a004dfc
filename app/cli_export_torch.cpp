#include "cli_export_torch.hpp"

#include <iostream>

#include "io/export_torch.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"

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
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--out" || arg == "-o") {
      if (i + 1 >= argc) {
        std::cerr << "export-torch: " << arg << " needs a file name\n" << kUsage;
        return 2;
      }
      out_path = argv[++i];
    } else if (arg.rfind("--out=", 0) == 0) {
      out_path = arg.substr(6);
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "export-torch: unknown option " << arg << "\n" << kUsage;
      return 2;
    } else if (source.empty()) {
      source = arg;
    } else {
      std::cerr << "export-torch: more than one session given (" << source << ", " << arg << ")\n" << kUsage;
      return 2;
    }
  }
  if (source.empty()) {
    std::cerr << "export-torch: which session? Give a preset name or a session.json file.\n" << kUsage;
    return 2;
  }

  Result<Session> session = load_session_or_preset(source);
  if (!session) {
    std::cerr << "export-torch: " << session.error().message << "\n";
    return 1;
  }
  Result<std::string> script = torch_script(*session, source);
  if (!script) {
    std::cerr << "export-torch: " << script.error().message << "\n";
    return 1;
  }
  if (out_path.empty()) {
    std::cout << *script;
    return 0;
  }
  if (auto error = write_file_atomic(out_path, *script)) {
    std::cerr << "export-torch: " << error->message << "\n";
    return 1;
  }
  std::cerr << "wrote " << out_path << ": run it with `python3 " << out_path
            << "` (add --json for every stage)\n";
  return 0;
}

}  // namespace al::cli
