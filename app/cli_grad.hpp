#pragma once
// `attention-lab grad <preset | session.json> [--upstream G.npy] --json`: the
// gradient of L = Σ output ⊙ G with respect to every input, weight and stage.

namespace al::cli {

// argv[0] is the program name, argv[1] is "grad", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_grad(int argc, char** argv);

}  // namespace al::cli
