"""Save a heatmap as PNG (--export-heatmap / right-click menu), under Xvfb.

Every block of the exported picture must be the colour of the colormap at a
value computed here independently (numpy: softmax(QKᵀ/√d_k) of seed 003's
numbers, the shader's stop tables re-stated in gui_test_util), and the same
colour the on-screen heatmap shows in a screenshot of the same run. Also:
masked cells hatched, a fully masked row NaN magenta, one pixel per cell for
large matrices, a translated error for a missing folder, an error for a heatmap
not on screen, and the right-click menu and File > Export's PNG button (real
xdotool clicks) writing the same picture.

Needs numpy: if the interpreter CMake found lacks it, the test re-runs itself
with Debian's /usr/bin/python3 (python3-numpy); without it anywhere it exits 77,
which ctest reports as skipped (SKIP_RETURN_CODE), never as passed."""
import json
import os
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    print("SKIP: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

from gui_test_util import (app_window, DIVERGING, NAN_COLOUR, VIRIDIS, Failures, cell_sample_point, close, colormap,
                           mean_colour, output_dir, read_png, screenshot, wait_for_widgets, xdotool)

binary = sys.argv[1]
out = output_dir("heatmap-png")
failures = Failures()
TOLERANCE = 4  # 8-bit rounding and the shader's float interpolation

# Seed 003 section 6's inputs (Q, K given directly, d_k = 2, one head).
Q = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [1.0, 1.0], [0.3, 0.7]])
K = np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])


def softmax_rows(m):
    """Row softmax; −inf entries get 0, a row of only −inf is NaN (as PyTorch gives)."""
    result = np.full(m.shape, np.nan)
    for i, row in enumerate(m):
        if np.all(np.isneginf(row)):
            continue
        e = np.exp(row - row[np.isfinite(row)].max())
        result[i] = e / e.sum()
    return result


scaled = Q @ K.T / np.sqrt(Q.shape[1])
weights = softmax_rows(scaled)
assert np.allclose(weights.sum(axis=1), 1.0)


def pixels_per_cell(rows, cols):
    """Small matrices are scaled up until the longer side reaches 256 pixels."""
    return max(1, -(-256 // max(rows, cols)))


def export(source, stage, name, heatmap, extra=()):
    """One `screenshot` run that also exports `heatmap`: (screen, widgets, picture)."""
    png = os.path.join(out, name + ".heatmap.png")
    if os.path.exists(png):
        os.remove(png)
    screen, widgets = screenshot(binary, source, stage, out, name,
                                 ["--export-heatmap", heatmap, "--heatmap-out", png, *extra])
    failures.check(os.path.exists(png), f"[{name}] {png} was written")
    return screen, widgets, read_png(png) if os.path.exists(png) else None


def check_blocks(name, picture, expected_colour, rows, cols, skip=()):
    """Every pixel of every cell's block has the expected colour."""
    width, height, pixels = picture
    k = pixels_per_cell(rows, cols)
    failures.check((width, height) == (cols * k, rows * k),
                   f"[{name}] picture is {cols * k}x{rows * k} ({k} px per cell), got {width}x{height}")
    if (width, height) != (cols * k, rows * k):
        return
    for i in range(rows):
        for j in range(cols):
            if (i, j) in skip:
                continue
            want = expected_colour(i, j)
            block = np.array([pixels[y][x] for y in range(i * k, (i + 1) * k) for x in range(j * k, (j + 1) * k)])
            worst = np.abs(block - np.array(want)).max()
            failures.check(worst <= TOLERANCE, f"[{name}] cell ({i},{j}): every pixel near {want}, worst off by {worst}")


def check_matches_screen(name, picture, screen, rect, skip=()):
    """The picture's block colour equals the on-screen cell colour (same shader, same range)."""
    width, _, pixels = picture
    k = width // int(rect["cols"])
    for i in range(int(rect["rows"])):
        for j in range(int(rect["cols"])):
            if (i, j) in skip:
                continue
            on_screen = mean_colour(screen, *cell_sample_point(rect, i, j))
            exported = pixels[i * k + k // 2][j * k + k // 2]
            failures.check(close(on_screen, exported, 2),
                           f"[{name}] cell ({i},{j}): exported {exported} vs on screen {on_screen}")


# 1. Weights (viridis over [0, 1]).
screen, widgets, picture = export("seed-003-example", "weights", "weights", "weights.h0", ["--head", "0"])
rect = widgets["widgets"].get("heatmap.weights.h0")
failures.check(rect is not None and (rect["low"], rect["high"]) == (0.0, 1.0), f"weights on screen over [0, 1]: {rect}")
if picture and rect:
    check_blocks("weights", picture, lambda i, j: colormap(VIRIDIS, weights[i][j]), 5, 5)
    check_matches_screen("weights", picture, screen, rect)

# 2. Scaled scores (diverging, symmetric around 0 at the largest |value|).
screen, widgets, picture = export("seed-003-example", "scaled", "scaled", "scaled.h0", ["--head", "0"])
rect = widgets["widgets"].get("heatmap.scaled.h0")
largest = np.abs(scaled).max()
if picture and rect:
    failures.check(abs(rect["high"] - largest) < 1e-5, f"scaled range ±{largest}: {rect}")
    check_blocks("scaled", picture, lambda i, j: colormap(DIVERGING, (scaled[i][j] + largest) / (2 * largest)), 5, 5)
    check_matches_screen("scaled", picture, screen, rect)

# 3. A mask: row 1 fully masked (−∞ fill: NaN magenta), cell (2, 1) masked (hatched).
mask = [[1, 1, 1], [0, 0, 0], [1, 0, 1]]
masked_session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "direct", "attention": "self", "d_model": 2, "num_heads": 1, "bias": False,
               "scale": "sqrt_dk", "mask_fill": "-inf", "mask": {"custom": mask}},
    "tokens": ["a", "b", "c"], "q": Q[:3].tolist(), "k": K[:3].tolist(), "v": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
}
path = os.path.join(out, "masked-session.json")  # not masked.json: the screenshot's widgets go there
json.dump(masked_session, open(path, "w"))
s = Q[:3] @ K[:3].T / np.sqrt(2)
s[np.array(mask) == 0] = -np.inf
masked_weights = softmax_rows(s)
screen, widgets, picture = export(path, "weights", "masked", "weights.h0")
hatched = {(2, 1)}
if picture:
    def expected(i, j):
        return NAN_COLOUR if np.isnan(masked_weights[i][j]) else colormap(VIRIDIS, masked_weights[i][j])
    check_blocks("masked", picture, expected, 3, 3, skip=hatched)
    # Hatching: the shader's two greys (0.40 and 0.62 of 255), both present, nothing else.
    _, _, pixels = picture
    k = pixels_per_cell(3, 3)
    greys = {pixels[y][x] for y in range(2 * k, 3 * k) for x in range(k, 2 * k)}
    failures.check(all(close(g, (102, 102, 102), 1) or close(g, (158, 158, 158), 1) for g in greys) and len(greys) >= 2,
                   f"[masked] cell (2,1) is hatched in two greys, got {sorted(greys)[:4]}")

# 4. A large matrix: one pixel per cell (300 keys), values checked at a few cells.
rng = np.random.default_rng(7)
n = 300
q, k, v = (rng.normal(size=(n, 2)).round(3) for _ in range(3))
big = {"format": "attention-lab/session", "version": 1,
       "config": {"mode": "direct", "attention": "self", "d_model": 2, "num_heads": 1, "bias": False,
                  "scale": "sqrt_dk", "mask_fill": "-inf"},
       "tokens": [f"t{i}" for i in range(n)], "q": q.tolist(), "k": k.tolist(), "v": v.tolist()}
path = os.path.join(out, "big-session.json")
json.dump(big, open(path, "w"))
big_scaled = q @ k.T / np.sqrt(2)
screen, widgets, picture = export(path, "scaled", "big", "scaled.h0", ["--head", "0"])
if picture:
    width, height, pixels = picture
    failures.check((width, height) == (n, n), f"[big] one pixel per cell: {n}x{n}, got {width}x{height}")
    top = np.abs(big_scaled).max()
    for i, j in [(0, 0), (17, 250), (299, 299), (150, 3), (260, 120)]:
        want = colormap(DIVERGING, (big_scaled[i][j] + top) / (2 * top))
        failures.check(close(pixels[i][j], want, TOLERANCE), f"[big] cell ({i},{j}): {pixels[i][j]} vs {want}")

# 5. Errors: a folder that does not exist (translated), a heatmap not at the step shown.
for lang, words in (("en", "does not exist"), ("zh", "不存在")):
    missing = os.path.join(out, "no-such-folder", "x.png")
    result = subprocess.run([binary, "screenshot", "seed-003-example", "--stage", "weights", "--lang", lang,
                             "--out", os.path.join(out, f"error-{lang}.png"), "--size", "1200x800",
                             "--export-heatmap", "weights.h0", "--heatmap-out", missing],
                            capture_output=True, text=True, timeout=120)
    failures.check(result.returncode == 1, f"[{lang}] a missing folder fails the run, got {result.returncode}")
    failures.check(words in result.stderr and missing in result.stderr,
                   f"[{lang}] the message names the folder problem: {result.stderr.strip()}")
    failures.check(not os.path.exists(missing), f"[{lang}] nothing written")
result = subprocess.run([binary, "screenshot", "seed-003-example", "--stage", "scores", "--size", "1200x800",
                         "--out", os.path.join(out, "not-on-screen.png"),
                         "--export-heatmap", "weights.h0", "--heatmap-out", os.path.join(out, "never.png")],
                        capture_output=True, text=True, timeout=120)
failures.check(result.returncode == 1 and "not on screen" in result.stderr,
               f"a heatmap not at the step fails with a reason: {result.returncode} {result.stderr.strip()}")

# 6. Real clicks: the right-click menu, and File > Export's PNG button for the pinned heatmap,
# save into the export folder (the app's working folder) the same picture.
def click_at(window, rect):
    xdotool("mousemove", "--window", window, int(rect["x"] + 0.5 * rect["w"]), int(rect["y"] + 0.5 * rect["h"]))
    time.sleep(0.2)


def run_and_click(label, extra, clicks):
    """Starts the app in its own folder, lets `clicks(window, widgets_path)` act, and checks the saved picture."""
    folder = os.path.join(out, label)
    os.makedirs(folder, exist_ok=True)
    saved = os.path.join(folder, "weights.h0.b0.png")
    if os.path.exists(saved):
        os.remove(saved)
    widgets_path = os.path.join(folder, "widgets.json")
    if os.path.exists(widgets_path):
        os.remove(widgets_path)
    app = subprocess.Popen([os.path.abspath(binary), "seed-003-example", "--stage", "weights", "--head", "0",
                            "--size", "1400x900", "--lang", "en", "--widgets-out", widgets_path, *extra], cwd=folder)
    try:
        state, ok = wait_for_widgets(widgets_path, lambda s: "heatmap.weights.h0" in s["widgets"], 30)
        failures.check(ok, f"[{label}] the app shows the weights heatmap")
        window = app_window()
        if ok and clicks(window, state, widgets_path):
            deadline = time.time() + 10
            while not os.path.exists(saved) and time.time() < deadline:
                time.sleep(0.1)
            failures.check(os.path.exists(saved), f"[{label}] wrote {saved}")
            if os.path.exists(saved):
                check_blocks(label, read_png(saved), lambda i, j: colormap(VIRIDIS, weights[i][j]), 5, 5)
        app.terminate()
        app.wait(timeout=20)
    finally:
        if app.poll() is None:
            app.terminate()
            app.wait(timeout=10)


def right_click_menu(window, state, widgets_path):
    click_at(window, state["widgets"]["heatmap.weights.h0"])
    xdotool("click", 3)
    state, ok = wait_for_widgets(widgets_path, lambda s: "png.menu_save" in s["widgets"])
    failures.check(ok, "right-click opens the menu with 'Save this heatmap as PNG'")
    if ok:
        click_at(window, state["widgets"]["png.menu_save"])
        xdotool("click", 1)
    return ok


def export_button(window, state, widgets_path):
    state, ok = wait_for_widgets(widgets_path, lambda s: "export.pinned_png" in s["widgets"])
    failures.check(ok, "File > Export shows a PNG button for the pinned heatmap")
    if ok:
        click_at(window, state["widgets"]["export.pinned_png"])
        xdotool("click", 1)
    return ok


run_and_click("menu", [], right_click_menu)
run_and_click("export-window", ["--open", "export", "--pin", "weights:0:0:1:1"], export_button)
failures.finish()
