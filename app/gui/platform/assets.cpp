#include "platform/assets.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace al::gui {

namespace fs = std::filesystem;

namespace {

// The folder holding the running executable; empty if /proc is unavailable.
fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return !a.empty() && fs::equivalent(a, b, ec) && !ec;
}

}  // namespace

std::string asset_root() {
  const char* root = std::getenv("ATTENTION_LAB_ASSET_DIR");
  if (root && *root) return root;
  const fs::path exe_dir = executable_dir();
  // Only the binary still sitting in its build folder reads the source tree (edit and
  // restart); a copy anywhere else, installed or not, never depends on it.
  if (same_folder(exe_dir, ATTENTION_LAB_BUILD_BIN_DIR)) return ATTENTION_LAB_SOURCE_DIR;
  return (exe_dir / ATTENTION_LAB_DATA_FROM_BIN).lexically_normal().string();
}

std::optional<std::string> read_asset(const std::string& name, bool* from_embedded) {
  if (from_embedded) *from_embedded = false;
  std::ifstream file(asset_root() + "/" + name, std::ios::binary);
  if (file) {
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }
  const auto& embedded = embedded_assets();
  auto it = embedded.find(name);
  if (it == embedded.end()) return std::nullopt;
  if (from_embedded) *from_embedded = true;
  return it->second;
}

}  // namespace al::gui
