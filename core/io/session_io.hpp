#pragma once
// The session file: JSON, format "attention-lab/session", version 1.
// Documented in docs/session-format.md.
#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/session.hpp"

namespace al {

// `base_dir` resolves {"npy": "relative/path.npy"} references; a path that
// escapes it is an error.
Result<Session> parse_session_json(const std::string& text, const std::string& base_dir,
                                   const std::string& name_for_errors = "session");
Result<Session> load_session_file(const std::string& path);
// For the app: a file whose sizes do not fit together (heads not dividing
// d_model, a mask of the wrong shape: what validate() checks) still loads, with
// that error in `unfit`, so the learner can fix it in the editor. Anything
// else wrong with the file is an error as for load_session_file.
struct LoadedSession {
  Session session;
  std::optional<Error> unfit;
};
Result<LoadedSession> load_session_file_for_editing(const std::string& path);
// The same from text (the recovery file embeds a session that may be unfit);
// `name_for_errors` starts the unfit message as the path does above.
Result<LoadedSession> parse_session_json_for_editing(const std::string& text, const std::string& base_dir,
                                                     const std::string& name_for_errors);

// Weights are written in math layout, matrices as nested arrays (non-finite
// values as "NaN", "Infinity", "-Infinity").
std::string session_to_json(const Session& session);
std::optional<Error> save_session_file(const std::string& path, const Session& session);

// Nested arrays of a tensor, with non-finite values as strings (shared by
// `trace --json` and the session writer).
std::string tensor_to_json(const Tensor& t);

struct PresetInfo {
  std::string name;
  std::string description;
  std::string description_zh;  // the same in Simplified Chinese
};
// Presets are the JSON files of assets/presets, compiled into the binary.
std::vector<PresetInfo> list_presets();
Result<Session> load_preset(const std::string& name);
const char* default_preset_name();

// A preset name, or a path to a session file.
Result<Session> load_session_or_preset(const std::string& name_or_path);

}  // namespace al
