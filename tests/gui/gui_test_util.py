"""Helpers shared by the GUI tests: run the real app, read its PNG and the
widget rectangles it writes, and the colormaps of shaders/heatmap.frag
(re-stated here from the shader's stop tables, so a test computes the colour
it expects from a value it computed itself)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

VIRIDIS = [(68, 1, 84), (72, 40, 120), (62, 73, 137), (49, 104, 142), (38, 130, 142),
           (31, 158, 137), (53, 183, 121), (110, 206, 88), (181, 222, 43), (253, 231, 37)]
DIVERGING = [(33, 102, 172), (103, 169, 207), (209, 229, 240), (247, 247, 247),
             (253, 219, 199), (239, 138, 98), (178, 24, 43)]
NAN_COLOUR = (255, 0, 255)


def colormap(stops, t):
    """Piecewise-linear through equally spaced stops, t clamped to [0, 1]."""
    x = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(x), len(stops) - 2)
    f = x - i
    return tuple(a + (b - a) * f for a, b in zip(stops[i], stops[i + 1]))


class PixelRow:
    """One row of a picture: row[x] is (r, g, b), made when asked (a screenshot has 1.6 million)."""
    __slots__ = ("rgb",)

    def __init__(self, rgb):
        self.rgb = rgb  # bytes, three a pixel

    def __len__(self):
        return len(self.rgb) // 3

    def __getitem__(self, x):
        if isinstance(x, slice):
            return [self[i] for i in range(*x.indices(len(self)))]
        if x < 0:
            x += len(self)
        if not 0 <= x < len(self):
            raise IndexError(x)
        return tuple(self.rgb[3 * x:3 * x + 3])

    def __eq__(self, other):
        return isinstance(other, PixelRow) and self.rgb == other.rgb


def read_png(path):
    """An 8-bit RGB or RGBA PNG as (width, height, rows of pixels), decoded by Pillow: the
    pure-Python decoder it replaces took 1-3 s for a 1600x1000 screenshot."""
    from PIL import Image  # python3-pil (tools/deps.sh); the GUI tests run on Debian's python3

    with Image.open(path) as image:
        assert image.format == "PNG" and image.mode in ("RGB", "RGBA"), f"not an 8-bit RGB(A) PNG: {path}"
        width, height = image.size
        data = image.convert("RGB").tobytes()
    stride = width * 3
    return width, height, [PixelRow(data[y:y + stride]) for y in range(0, height * stride, stride)]


def mean_colour(image, x, y, radius=1):
    _, _, rows = image
    pixels = [rows[y + dy][x + dx] for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)]
    return tuple(sum(p[i] for p in pixels) / len(pixels) for i in range(3))


def close(a, b, tolerance):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


# The folders temporary_dir made in this test.
_temporary_dirs = []


def temporary_dir(label):
    """A fresh folder in the system's temporary directory, removed when the test passes
    (Failures.finish) and kept when it fails, so that its screenshots can be looked at."""
    path = tempfile.mkdtemp(prefix="attention-lab-" + label + "-")
    _temporary_dirs.append(path)
    return path


class Failures:
    def __init__(self):
        self.messages = []

    def check(self, condition, message):
        if not condition:
            self.messages.append(message)
            print("FAIL:", message)

    def finish(self):
        if self.messages:
            print(f"{len(self.messages)} check(s) failed")
            if _temporary_dirs:
                print("kept to look at:", " ".join(_temporary_dirs))
            sys.exit(1)
        for path in _temporary_dirs:
            shutil.rmtree(path, ignore_errors=True)
        print("all checks passed")


def screenshot(binary, source, stage, out_dir, name, extra=()):
    """Runs `attention-lab screenshot` and returns (image, widgets json)."""
    return screenshots(binary, source, [stage], out_dir, name, extra)[stage]


def screenshots(binary, source, stages, out_dir, name, extra=()):
    """One `attention-lab screenshot --stage a,b,...` run, one window stepped through the stages:
    {stage: (image, widgets json)}, the files named name-STAGE.png/.json (name.png/.json for one)."""
    png = os.path.join(out_dir, name + ".png")
    widgets = os.path.join(out_dir, name + ".json")
    size = [] if "--size" in extra else ["--size", "1600x1000"]  # an option is given once
    command = [binary, "screenshot", source, "--stage", ",".join(stages), "--out", png,
               *size, "--widgets-out", widgets, *extra]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")

    def named(path, stage):  # where the app wrote a stage's file: the stage before the extension
        stem, extension = os.path.splitext(path)
        return path if len(stages) == 1 else f"{stem}-{stage}{extension}"

    return {stage: (read_png(named(png, stage)), json.load(open(named(widgets, stage)))) for stage in stages}


def cell_sample_point(rect, row, col):
    """A point inside cell (row, col) of a heatmap rectangle, above the number
    drawn at the cell's centre and away from the grid line."""
    cell_w = rect["w"] / rect["cols"]
    cell_h = rect["h"] / rect["rows"]
    x = rect["x"] + (col + 0.5) * cell_w
    y = rect["y"] + row * cell_h + max(3.0, 0.15 * cell_h)
    return int(round(x)), int(round(y))


def output_dir(label):
    base = os.environ.get("ATTENTION_LAB_TEST_OUT")
    if base:
        path = os.path.join(base, label)
        os.makedirs(path, exist_ok=True)
        return path
    return temporary_dir(label)


XDOTOOL = os.environ.get("XDOTOOL") or "xdotool"


def xdotool(*args):
    """Runs xdotool; returns what it printed."""
    return subprocess.run([XDOTOOL, *map(str, args)], check=True, timeout=20,
                          capture_output=True, text=True).stdout


def app_window():
    """The X window id of the app (waits until it is mapped)."""
    return xdotool("search", "--sync", "--onlyvisible", "--name", "Attention Lab").split()[0]


def ctrl_click(window, x, y):
    """Ctrl+click at (x, y) of the window: starts typing into an ImGui field, like a
    double-click, but does not depend on how instant press/release pairs fall into frames."""
    xdotool("mousemove", "--window", window, x, y)
    time.sleep(0.15)
    xdotool("keydown", "ctrl")
    time.sleep(0.1)
    xdotool("click", 1)
    time.sleep(0.2)
    xdotool("keyup", "ctrl")
    time.sleep(0.2)


def type_text(text, delay_ms=60):
    """Types text as key presses; "--" first, so a negative number is not read as an option."""
    xdotool("type", "--delay", delay_ms, "--", text)


def hold_keys(*keys):
    """Held ~0.15 s: ImGui 1.86 loses a key pressed and released within one frame."""
    for key in keys:
        xdotool("keydown", key)
    time.sleep(0.15)
    for key in reversed(keys):
        xdotool("keyup", key)
    time.sleep(0.2)


def wait_for_widgets(widgets_path, predicate, timeout=15.0):
    """Polls the app's --widgets-out JSON until predicate(state) holds; returns
    (state, True), or the last state read and False on time-out."""
    deadline, state = time.time() + timeout, None
    while time.time() < deadline:
        try:
            state = json.load(open(widgets_path))
            if predicate(state):
                return state, True
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return state, False
