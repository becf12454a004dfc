#include "platform/screenshot.hpp"

#include <epoxy/gl.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "io/matrix_io.hpp"

namespace al::gui {

std::string png_bytes_bottom_up(const std::vector<unsigned char>& rgb, int width, int height) {
  std::string bytes;
  stbi_flip_vertically_on_write(1);
  stbi_write_png_to_func(
      [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
      },
      &bytes, width, height, 3, rgb.data(), width * 3);
  return bytes;
}

std::optional<std::string> write_back_buffer_png(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 3);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  const std::string png = png_bytes_bottom_up(pixels, width, height);
  if (png.empty()) return "cannot encode the screenshot of " + path;
  if (auto error = write_file_atomic(path, png)) return error->message;
  return std::nullopt;
}

}  // namespace al::gui
