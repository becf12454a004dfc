"""A heatmap saved as a slide picture (--export-heatmap NAME --heatmap-out F --slide-width W,
the same code as the right-click menu and File > Export's "Slide picture"), under Xvfb.

The causal-decoder example's weights, head 0, 1280 pixels wide: the picture has that width;
every cell is the colour of a float64 PyTorch computation of the saved session (masked cells
hatched); the numbers are written in the cells (text pixels of the contrasting colour at
each centre); the title and the token labels are drawn (text pixels where they belong);
the colour bar runs from the low to the high colour. For seed 000's 100 x 100 weights the
cells still have their colours and no numbers are crammed in. A bad width is refused."""
import os
import subprocess
import sys

import wiring_util as wu
from gui_test_util import Failures, VIRIDIS, colormap, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("heatmap-slide")
failures = Failures()
BACKGROUND_TOLERANCE = 12


def export(preset, width, name):
    """Saves the session and the slide picture of weights.h0; returns (session, pixels, grid)."""
    session_path = os.path.join(out, name + ".json")
    picture = os.path.join(out, name + ".slide.png")
    widgets = os.path.join(out, name + "-widgets.json")
    command = [binary, "screenshot", preset, "--stage", "weights", "--out", os.path.join(out, name + "-screen.png"),
               "--size", "1400x900", "--widgets-out", widgets, "--export-heatmap", "weights.h0",
               "--heatmap-out", picture, "--slide-width", str(width), "--save-on-exit", session_path]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240)
    failures.check(result.returncode == 0, f"{preset}: exit {result.returncode}: {result.stderr[-400:]}")
    import json
    from PIL import Image
    grid = json.load(open(widgets)).get("png.slide_grid", "")
    x, y, w, h, numbers = grid.split(",")
    pixels = np.asarray(Image.open(picture).convert("RGB"))
    return json.load(open(session_path)), pixels, (float(x), float(y), float(w), float(h), numbers == "numbers")


def text_pixels(pixels, x0, y0, x1, y1, background):
    """How many pixels of the box differ clearly from `background` (text drawn there)."""
    box = pixels[int(y0):int(y1), int(x0):int(x1)].astype(int)
    return int((np.abs(box - np.array(background)).max(axis=2) > 60).sum())


# The small example: labels, numbers, colours.
session, pixels, (x, y, w, h, numbers) = export("causal-decoder", 1280, "causal")
weights = wu.session_stages(session)["weights"][0, 0]
L = weights.shape[0]
masked = wu.masked_cells(session, 1, L, L)[0]
failures.check(pixels.shape[1] == 1280, f"the picture is 1280 wide: {pixels.shape}")
rect = {"x": x, "y": y, "w": w, "h": h, "rows": L, "cols": L, "low": 0.0, "high": 1.0}
wu.check_heatmap(failures, "slide", {"widgets": {"heatmap.weights.h0": rect}}, pixels, "weights.h0", weights,
                 (0.0, 1.0), masked=masked)
background = pixels[3, 3].astype(int)
cell = w / L
failures.check(numbers, "the numbers fit in 6 cells of this width")
for i in range(L):
    for j in range(i + 1):  # cells the mask keeps: a number in the contrasting colour at the centre
        cx, cy = x + (j + 0.5) * cell, y + (i + 0.5) * cell
        colour = np.array(colormap(VIRIDIS, weights[i, j]))
        box = pixels[int(cy - 0.1 * cell):int(cy + 0.1 * cell), int(cx - 0.2 * cell):int(cx + 0.2 * cell)].astype(int)
        drawn = int((np.abs(box - colour).max(axis=2) > 80).sum())
        failures.check(drawn > 20, f"cell ({i}, {j}) has its number written ({drawn} text pixels)")
failures.check(text_pixels(pixels, x, 0, x + w, y - 0.05 * h, background) > 300, "a title and column labels above")
failures.check(text_pixels(pixels, 0, y, x - 2, y + h, background) > 300, "row labels on the left")
f = 1280 / 64  # the picture's text height; the bar is 0.8 f below the grid and 0.7 f high, 64 steps
bar = pixels[int(y + h + 0.8 * f + 0.35 * f)]
for k in (3, 32, 60):
    got = bar[int(x + (k + 0.5) * w / 64)]
    want = np.array(colormap(VIRIDIS, k / 63))
    failures.check(np.abs(got.astype(int) - want).max() <= wu.TOLERANCE, f"colour bar step {k}: {tuple(got)} vs {tuple(want)}")

# The largest example: 100 x 100, cells still right, no numbers.
session, pixels, (x, y, w, h, numbers) = export("seed-000-usage", 1920, "seed000")
weights = wu.session_stages(session)["weights"][0, 0]
rect = {"x": x, "y": y, "w": w, "h": h, "rows": weights.shape[0], "cols": weights.shape[1], "low": 0.0,
        "high": wu.probability_range(weights)[1]}
failures.check(not numbers, "no numbers crammed into 100 x 100 cells")
# Cells of 9 pixels: sample the centre pixel of each (away from the grid lines).
bad = []
for i in range(0, weights.shape[0], 7):
    for j in range(0, weights.shape[1], 7):
        px = pixels[int(y + (i + 0.5) * h / weights.shape[0]), int(x + (j + 0.5) * w / weights.shape[1])].astype(int)
        want = np.array(colormap(VIRIDIS, weights[i, j] / rect["high"]))
        if np.abs(px - want).max() > wu.TOLERANCE:
            bad.append(f"({i},{j}) {tuple(px)} vs {tuple(want)}")
failures.check(not bad, "seed 000 cells: " + "; ".join(bad[:5]))

result = subprocess.run([binary, "screenshot", "default", "--stage", "weights", "--out", os.path.join(out, "x.png"),
                         "--export-heatmap", "weights.h0", "--heatmap-out", os.path.join(out, "y.png"),
                         "--slide-width", "100"], capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 2 and "--slide-width takes a width" in result.stderr,
               f"a 100-pixel slide is refused: {result.returncode} {result.stderr[-200:]}")
failures.finish()
