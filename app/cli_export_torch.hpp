#pragma once
// `attention-lab export-torch <preset | session.json> --out script.py`:
// writes a self-contained PyTorch script that rebuilds the session's computation
// stage by stage, so a learner can check every number against PyTorch.
// The script itself is al::torch_script (core/io/export_torch.hpp).

namespace al::cli {

// argv[0] is the program name, argv[1] is "export-torch", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_export_torch(int argc, char** argv);

}  // namespace al::cli
