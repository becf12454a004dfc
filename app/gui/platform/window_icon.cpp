#include "platform/window_icon.hpp"

#include <GLFW/glfw3.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>

#include <memory>
#include <vector>

#include "platform/assets.hpp"

namespace al::gui {

bool set_window_icon(GLFWwindow* window) {
  struct Decoded {
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels{nullptr, stbi_image_free};
    int width = 0, height = 0;
  };
  std::vector<Decoded> decoded;
  for (int size : {16, 32, 48, 64, 128}) {
    auto png = read_asset("assets/icons/attention-lab-" + std::to_string(size) + ".png");
    if (!png) continue;
    Decoded icon;
    int channels = 0;
    icon.pixels.reset(stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(png->data()),
                                            static_cast<int>(png->size()), &icon.width,
                                            &icon.height, &channels, 4));
    if (icon.pixels) decoded.push_back(std::move(icon));
  }
  if (decoded.empty()) return false;
  std::vector<GLFWimage> images;
  for (auto& icon : decoded) images.push_back({icon.width, icon.height, icon.pixels.get()});
  // GLFW copies the pixels, so they may be freed on return.
  glfwSetWindowIcon(window, static_cast<int>(images.size()), images.data());
  return true;
}

}  // namespace al::gui
