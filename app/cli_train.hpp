#pragma once
// `attention-lab train --task NAME [--steps N] [--seed S] [--out session.json] --json`:
// trains the toy model of the training lab headlessly (core/training.hpp).

namespace al::cli {

// argv[0] is the program name, argv[1] is "train", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_train(int argc, char** argv);

}  // namespace al::cli
