#pragma once
// `attention-lab trace <preset | session.json> --json | --summary`: computes a
// session headlessly and prints every stage (JSON) or their shapes and ranges.

namespace al::cli {

// argv[0] is the program name, argv[1] is "trace", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_trace(int argc, char** argv);

}  // namespace al::cli
