#pragma once
// `attention-lab export-torch <preset | session.json> --out script.py`:
// writes a self-contained PyTorch script that rebuilds the session's computation
// stage by stage, so a learner can check every number against PyTorch.
#include <string>

#include "error.hpp"
#include "session.hpp"

namespace al::cli {

// argv[0] is the program name, argv[1] is "export-torch", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_export_torch(int argc, char** argv);

// The script's text for one session (also usable by the app's export menu).
// `source_name` is only mentioned in the script's header comment.
Result<std::string> torch_script(const Session& session, const std::string& source_name);

}  // namespace al::cli
