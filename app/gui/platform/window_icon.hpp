#pragma once
// The window's icon (assets/icons/attention-lab-<size>.png, drawn by
// tools/make_icon.py): a causal attention heatmap, so the app is findable in a
// task bar among other windows.
struct GLFWwindow;

namespace al::gui {

// Gives `window` every icon size the assets hold. Returns false (and the window
// keeps the desktop's default icon) when none could be decoded.
bool set_window_icon(GLFWwindow* window);

}  // namespace al::gui
