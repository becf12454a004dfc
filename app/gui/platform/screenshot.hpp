#pragma once
#include <optional>
#include <string>
#include <vector>

namespace al::gui {

// PNG file bytes of an 8-bit RGB image whose rows run bottom-up, as
// glReadPixels returns them (the PNG's run top-down). The one PNG writer of the app.
std::string png_bytes_bottom_up(const std::vector<unsigned char>& rgb, int width, int height);

// Reads the current BACK buffer (call after rendering, before swapping: under
// Xvfb the front buffer reads black) and writes it as an RGB PNG, atomically.
std::optional<std::string> write_back_buffer_png(const std::string& path, int width, int height);

}  // namespace al::gui
