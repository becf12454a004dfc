"""The window carries the app's icon (_NET_WM_ICON, set through GLFW from
assets/icons): every size the assets hold, and pixels that show what the icon
claims to show — the causal attention weights of 4 tokens. Row 0 sees only key
0, so its weight is softmax([s]) = 1 exactly: viridis's top colour; the cells
above the diagonal are masked: grey."""
import os
import subprocess
import sys
import time

from gui_test_util import app_window, VIRIDIS, Failures, output_dir, wait_for_widgets

binary = sys.argv[1]
out = output_dir("window-icon")
widgets_path = os.path.join(out, "widgets.json")
if os.path.exists(widgets_path):
    os.remove(widgets_path)
failures = Failures()
MASKED_GREY = (102, 102, 102)

app = subprocess.Popen([binary, "default", "--size", "1280x800", "--widgets-out", widgets_path])
try:
    _, started = wait_for_widgets(widgets_path, lambda state: "widgets" in state)
    failures.check(started, "the app did not start")
    window = app_window()
    text = subprocess.run(["xprop", "-id", window, "-notype", "-f", "_NET_WM_ICON", "32c",
                           " = $0+\n", "_NET_WM_ICON"],
                          capture_output=True, text=True, timeout=20).stdout
    numbers = [int(n) for n in text.split("=", 1)[1].replace("\n", " ").split(",") if n.strip()] \
        if "=" in text else []
    icons = {}
    while len(numbers) >= 2:
        width, height = numbers[0], numbers[1]
        icons[(width, height)] = numbers[2:2 + width * height]
        numbers = numbers[2 + width * height:]
    failures.check(sorted(icons) == [(s, s) for s in (16, 32, 48, 64, 128)],
                   f"icon sizes {sorted(icons)}, expected 16 to 128")
    if (64, 64) in icons:
        def rgb(x, y):
            argb = icons[(64, 64)][y * 64 + x]
            return ((argb >> 16) & 255, (argb >> 8) & 255, argb & 255)
        # The 4x4 grid spans 8..56 px: cell (row, col) centred at 8 + 12 * (col + 0.5).
        def cell(row, col):
            return rgb(int(8 + 12 * (col + 0.5)), int(8 + 12 * (row + 0.5)))
        failures.check(cell(0, 0) == VIRIDIS[-1], f"cell (0,0) is {cell(0, 0)}, weight 1 is {VIRIDIS[-1]}")
        for row, col in ((0, 1), (0, 3), (2, 3)):
            failures.check(cell(row, col) == MASKED_GREY, f"masked cell ({row},{col}) is {cell(row, col)}")
        failures.check(cell(3, 0) != MASKED_GREY, "cell (3,0) is visible, not masked")
finally:
    app.terminate()
    app.wait(timeout=30)
failures.finish()
