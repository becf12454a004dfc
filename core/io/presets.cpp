// The presets: the JSON files of assets/presets, compiled into the binary.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/session_io.hpp"

namespace al {

// Generated from assets/presets/*.json by core/embed_presets.cmake: (name, JSON text).
const std::vector<std::pair<std::string, std::string>>& embedded_presets();

namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;
}  // namespace

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> list;
  for (const auto& [name, text] : embedded_presets()) {
    PresetInfo info{name, {}, {}};
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto text_of = [&](const char* key) {
      auto it = j.is_object() ? j.find(key) : j.end();
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    info.description = text_of("description");
    info.description_zh = text_of("description_zh");
    list.push_back(std::move(info));
  }
  return list;
}

const char* default_preset_name() { return "default"; }

Result<Session> load_preset(const std::string& name) {
  for (const auto& [preset, text] : embedded_presets())
    if (preset == name) return parse_session_json(text, "", "preset '" + name + "'");
  std::string names;
  for (const auto& [preset, text] : embedded_presets()) names += (names.empty() ? "" : ", ") + preset;
  return make_error(ErrorCode::UnknownPreset, "there is no preset named '" + name + "' (the presets are: " + names + ")",
                    {{"name", name}});
}

Result<Session> load_session_or_preset(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::exists(name_or_path, ec)) return load_session_file(name_or_path);
  // Anything that looks like a path is reported as a missing file, not as an unknown preset.
  if (name_or_path.find('/') != std::string::npos || fs::path(name_or_path).has_extension())
    return load_session_file(name_or_path);
  Result<Session> preset = load_preset(name_or_path);
  if (preset || preset.error().code != ErrorCode::UnknownPreset) return preset;
  Error e = preset.error();
  e.message = "'" + name_or_path + "' is neither a session file nor a preset: " + e.message +
              " (see --list-presets)";
  return e;
}

}  // namespace al
