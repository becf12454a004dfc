// See gl_driver_pin.hpp.
#include "platform/gl_driver_pin.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <string>
#include <vector>
#endif

namespace al::gui {

#if defined(__SANITIZE_ADDRESS__)
namespace {

// Mesa's drivers: dri/<name>_dri.so, and libgallium-<version>.so in newer Mesa.
bool is_gl_driver(const std::string& path) {
  const std::string name = path.substr(path.find_last_of('/') + 1);
  return (name.size() > 7 && name.compare(name.size() - 7, 7, "_dri.so") == 0) ||
         name.rfind("libgallium", 0) == 0;
}

}  // namespace

void pin_gl_driver_for_leak_checking() {
  std::vector<std::string> drivers;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* found) {
        if (info->dlpi_name && is_gl_driver(info->dlpi_name))
          static_cast<std::vector<std::string>*>(found)->emplace_back(info->dlpi_name);
        return 0;
      },
      &drivers);
  // RTLD_NOLOAD | RTLD_NODELETE marks the module already loaded as never to be
  // unloaded (glibc); the handle is not closed on purpose.
  for (const std::string& driver : drivers)
    if (!dlopen(driver.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
      std::fprintf(stderr, "attention-lab: cannot keep %s loaded for leak checking: %s\n", driver.c_str(), dlerror());
}
#else
void pin_gl_driver_for_leak_checking() {}
#endif

}  // namespace al::gui
