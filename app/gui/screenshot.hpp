#pragma once
#include <optional>
#include <string>

namespace al::gui {

// Reads the current BACK buffer (call after rendering, before swapping: under
// Xvfb the front buffer reads black) and writes it as an RGB PNG.
std::optional<std::string> write_back_buffer_png(const std::string& path, int width, int height);

}  // namespace al::gui
