#pragma once
// A session as a self-contained, runnable PyTorch script that rebuilds its
// computation stage by stage (used by `attention-lab export-torch` and the
// app's File > Export menu), so a learner can check every number against PyTorch.
#include <string>

#include "base/error.hpp"
#include "model/session.hpp"

namespace al {

// The script's text. `source_name` is only mentioned in its header comment.
// Run as `python3 script.py` it prints the output; with `--json`, every stage in
// the same names and shapes as `attention-lab trace --json`.
Result<std::string> torch_script(const Session& session, const std::string& source_name);

}  // namespace al
