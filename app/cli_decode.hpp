#pragma once
// `attention-lab decode <preset | session.json> --json`: a causal self-attention
// session run token by token with a KV cache (numerics/decode.hpp).

namespace al::cli {

// argv[0] is the program name, argv[1] is "decode", then the arguments.
// Returns the process exit code (0 on success; errors go to stderr).
int run_decode(int argc, char** argv);

}  // namespace al::cli
