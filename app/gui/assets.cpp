#include "assets.hpp"

#include <fstream>
#include <sstream>

namespace al::gui {

std::optional<std::string> read_asset(const std::string& name) {
  std::ifstream file(std::string(ATTENTION_LAB_SOURCE_DIR) + "/" + name, std::ios::binary);
  if (file) {
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }
  const auto& embedded = embedded_assets();
  auto it = embedded.find(name);
  if (it == embedded.end()) return std::nullopt;
  return it->second;
}

}  // namespace al::gui
