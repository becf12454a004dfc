#pragma once
// Sanitizer builds only (a no-op otherwise): keeps the OpenGL driver that Mesa
// loaded (e.g. dri/swrast_dri.so, llvmpipe) loaded until the process ends.
// Mesa unloads it at exit, before LeakSanitizer looks: the blocks it still
// held then look leaked, from a module LSan can no longer name, so no
// suppression could match them and the GUI tests ran without leak checking.
// Kept loaded, its globals still reach those blocks and the tests check leaks.
// Call once a GL context exists (the driver is loaded with the first one).
namespace al::gui {
void pin_gl_driver_for_leak_checking();
}
