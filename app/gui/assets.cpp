#include "assets.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace al::gui {

std::string asset_root() {
  const char* root = std::getenv("ATTENTION_LAB_ASSET_DIR");
  return root && *root ? root : ATTENTION_LAB_SOURCE_DIR;
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
