"""Helpers of the wiring tests (test_wiring_*.py): drive one control of the real
window, save, and compare the saved session and the heatmaps on screen with an
independent float64 PyTorch computation of that saved session
(tests/torch/reference.py), never with the app's own numbers.

Needs numpy and torch (Debian's python3-numpy and python3-torch install them for
/usr/bin/python3): the test re-runs itself with that interpreter when the one
CMake found lacks them, and exits 77 (ctest shows "skipped") if neither has them."""
import json
import os
import sys
import time

SKIP = 77


def require_numpy_and_torch():
    """Imports numpy and torch, re-running the test under /usr/bin/python3 if needed."""
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
        print("SKIP: numpy and torch are needed (Debian: python3-numpy python3-torch)")
        sys.exit(SKIP)


require_numpy_and_torch()
import numpy as np  # noqa: E402
import torch  # noqa: E402

from files_test_util import App, hold_keys, xdotool  # noqa: E402
from gui_test_util import DIVERGING, NAN_COLOUR, VIRIDIS, cell_sample_point, colormap, ctrl_click, type_text  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch"))
import reference  # noqa: E402  (tests/torch/reference.py: float64, einsum, its own softmax)

TOLERANCE = 4  # 8-bit rounding and the shader's float interpolation
HATCH_GREYS = (102, 158)  # the shader's masked-cell stripes, 0.40 and 0.62 of 255
ATTEND_GREEN = (77, 176, 125)  # the mask painter's "attends" colour, (0.30, 0.69, 0.49) of 255


def grab(window):
    """The window's pixels as they are on the X screen now: (H, W, 3) uint8, window coordinates."""
    from PIL import ImageGrab
    geometry = dict(line.split("=") for line in xdotool("getwindowgeometry", "--shell", window).split())
    x, y, w, h = (int(geometry[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
    image = ImageGrab.grab(bbox=(x, y, x + w, y + h), xdisplay=os.environ.get("DISPLAY"))
    return np.asarray(image.convert("RGB"))


def sample(pixels, rect, row, col):
    """Mean colour of 3x3 pixels inside cell (row, col), away from its number and grid line."""
    x, y = cell_sample_point(rect, row, col)
    return pixels[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(axis=0)


def saved_mask(saved, key):
    """A saved session's mask layer `key` ("custom", "key_padding") as an array, None when absent."""
    value = (saved["config"].get("mask") or {}).get(key)
    return None if value is None else np.array(value, dtype=float)


def matrix_point(rect, x, y):
    """The matrix point (row, col), in cells, under window pixel (x, y) of a heatmap's rectangle."""
    return (rect["first_row"] + (y - rect["y"]) * rect["shown_rows"] / rect["h"],
            rect["first_col"] + (x - rect["x"]) * rect["shown_cols"] / rect["w"])


def cell_centre(rect, row, col):
    return (int(rect["x"] + (col + 0.5) * rect["w"] / rect["cols"]),
            int(rect["y"] + (row + 0.5) * rect["h"] / rect["rows"]))


class Wiring(App):
    """The app on a session file of its own: every change is saved with Ctrl+S and read back."""

    def __init__(self, binary, session, folder, name, failures, extra=(), lang="en"):
        self.path = os.path.join(folder, name + ".json")
        json.dump(session, open(self.path, "w"), indent=1)
        env = dict(os.environ)
        env.update(HOME=folder, XDG_CONFIG_HOME=os.path.join(folder, "config"),
                   XDG_STATE_HOME=os.path.join(folder, "state"))
        super().__init__(binary, [self.path, *extra], env, folder, name, failures, lang)
        self.find_window()

    def state_now(self):
        return self.settled()

    def away(self):
        """The pointer on the status bar, off every widget and heatmap, and a frame drawn without a tooltip."""
        xdotool("mousemove", "--window", self.window, 700, 890)
        time.sleep(0.1)
        deadline = time.time() + 3.0
        while time.time() < deadline:
            state = self.state()
            if state and "tooltip" not in state:
                return
            time.sleep(0.05)

    def click_widget(self, name, what=None, timeout=15.0):
        state = self.wait_for(lambda s: name in s["widgets"], what or f"{name} on screen", timeout)
        if name in state["widgets"]:
            self.click(self.settled(), name)

    def click_at(self, x, y):
        xdotool("mousemove", "--window", self.window, x, y)
        time.sleep(0.2)
        xdotool("mousedown", 1)
        time.sleep(0.15)
        xdotool("mouseup", 1)
        time.sleep(0.2)

    def edit(self, action, what):
        """Runs action(), waits for the session's revision to move, returns the new state."""
        revision = int(self.settled()["revision"])
        action()
        return self.wait_for(lambda s: int(s["revision"]) > revision, what)

    def type_into(self, name, text, select_all=False):
        """Ctrl+click a field's left end (a slider or number field starts typing; the
        middle of a number field's rectangle may be its -/+ buttons), type, Enter."""
        state = self.wait_for(lambda s: name in s["widgets"], f"{name} on screen")
        rect = state["widgets"][name]
        ctrl_click(self.window, int(rect["x"] + 12), int(rect["y"] + rect["h"] / 2))
        self.wait_for(lambda s: s["text_input"] == "yes", f"Ctrl+click on {name} starts typing")
        if select_all:
            hold_keys("ctrl", "a")
        type_text(text)
        hold_keys("Return")
        self.wait_for(lambda s: s["text_input"] == "no", f"Enter ends typing into {name}")

    def choose(self, combo, option):
        """Opens a combo box and clicks one of its entries (an entry other than the current one:
        the session's revision must move), again while the combo stays open, and from the start
        when it closed without choosing: with sanitizers on a loaded machine a frame can outlast
        the held click, or the popup still move while the widget file looks settled, so a click
        lands beside the entry (a sanitizer CI run lost one here, a release CI run another)."""
        revision = int(self.settled()["revision"])
        for _ in range(3):
            self.click(self.settled(), combo)
            self.wait_for(lambda s: option in s["widgets"], f"{combo} opens with {option}")
            for _ in range(3):
                self.click(self.settled(), option)
                if self.gone(option, timeout=3.0):
                    break
            deadline = time.time() + 5.0
            while time.time() < deadline:
                state = self.state()
                if state and int(state["revision"]) > revision:
                    return
                time.sleep(0.05)

    def gone(self, name, timeout):
        """True once `name` is off screen, False if it is still there after `timeout` seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.state()
            if state and name not in state["widgets"]:
                return True
            time.sleep(0.05)
        return False

    def save(self):
        """Ctrl+S; returns the saved session (JSON)."""
        self.away()
        hold_keys("ctrl", "s")
        self.wait_for(lambda s: s.get("modified") == "no", "Ctrl+S saves")
        return json.load(open(self.path))

    def go_to_step(self, step):
        self.click_widget("timeline." + step)
        self.wait_for(lambda s: s["step"] == step, f"the timeline goes to {step}")

    def screen(self):
        """(widgets state, window pixels) once the window has settled, pointer away.
        The picture is kept as <name>-screen-N.png beside the widget file, to look at."""
        self.away()
        state = self.settled()
        # Two grabs alike: a grab while the X server copies in a new frame mixes two frames (a release CI
        # run saw one row of cells still tinted by the tooltip of the frame before the pointer left).
        pixels = grab(self.window)
        for _ in range(20):
            time.sleep(0.1)
            again = grab(self.window)
            if np.array_equal(again, pixels):
                break
            pixels = again
        self.screens = getattr(self, "screens", 0) + 1
        from PIL import Image
        Image.fromarray(pixels).save(self.widgets_path.replace("-widgets.json", f"-screen-{self.screens}.png"))
        return state, pixels


def random_matrix(rng, rows, cols, scale=1.0):
    """(rows, cols) normal numbers rounded to 2 decimals, as a session file holds them."""
    return (rng.normal(size=(rows, cols)) * scale).round(2).tolist()


def random_session(rng, length, d_model, heads, causal, **config):
    """A projection-mode self-attention session, one batch item, random X, weights and biases."""
    s = {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": "projection", "attention": "self", "d_model": d_model, "num_heads": heads,
                   "bias": True, "scale": "sqrt_dk", "mask": {"causal": causal}, "mask_fill": "-inf",
                   "dropout": {"p": 0.0, "training": False, "seed": 0}},
        "tokens": [f"t{i}" for i in range(length)],
        "x": [random_matrix(rng, length, d_model)],
        "weights": {"layout": "math",
                    **{f"w_{n}": random_matrix(rng, d_model, d_model, 1.2) for n in "qkvo"},
                    **{f"b_{n}": random_matrix(rng, 1, d_model, 0.8)[0] for n in "qkvo"}},
    }
    s["config"].update(config)
    return s


def session_stages(session):
    """Every stage of a saved session, float64 numpy arrays in trace shapes."""
    return {k: v.numpy() for k, v in reference.stages(session).items()}


def probability_range(values):
    """The weights heatmaps' colour range: [0, the largest of 1 and every value shown]."""
    finite = values[np.isfinite(values)]
    return 0.0, max(1.0, float(finite.max()) if finite.size else 1.0)


def symmetric_range(values):
    """The diverging heatmaps' range: ±(largest |value|), 1 for all zeros."""
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    return (-top, top) if top > 0 else (-1.0, 1.0)


LEAK_VISIBLE = 1e-3  # as the shader and the trace's masked_weight_max warning


def expected_colour(value, low, high, stops):
    if np.isnan(value):
        return NAN_COLOUR
    t = (value - low) / (high - low) if high > low else 0.5
    return colormap(stops, t)


def check_heatmap(failures, label, state, pixels, name, values, value_range, stops=VIRIDIS, masked=None):
    """Heatmap `name` on screen: its size and colour range, and every cell the colour of
    `values` (masked cells: the hatching's greys, unless a probability map's masked cell
    still gets more than LEAK_VISIBLE of the weight: then its centre shows that weight)."""
    rect = state["widgets"].get("heatmap." + name)
    failures.check(rect is not None, f"[{label}] heatmap {name} is on screen")
    if rect is None:
        return
    rows, cols = values.shape
    failures.check((rect["rows"], rect["cols"]) == (rows, cols),
                   f"[{label}] {name} is {rows}x{cols}, shown {rect['rows']}x{rect['cols']}")
    if (rect["rows"], rect["cols"]) != (rows, cols):
        return
    low, high = value_range
    failures.check(abs(rect["low"] - low) <= 1e-5 * max(1, abs(low)) and abs(rect["high"] - high) <= 1e-5 * max(1, abs(high)),
                   f"[{label}] {name} colour range [{low:.6g}, {high:.6g}], shown [{rect['low']}, {rect['high']}]")
    bad = []
    for i in range(rows):
        for j in range(cols):
            got = sample(pixels, rect, i, j)
            leaked = stops is VIRIDIS and values[i, j] > LEAK_VISIBLE
            if masked is not None and masked[i, j] and not np.isnan(values[i, j]) and not leaked:
                grey = abs(got[0] - got[1]) < 3 and abs(got[1] - got[2]) < 3 and \
                    HATCH_GREYS[0] - 2 <= got[0] <= HATCH_GREYS[1] + 2
                if not grey:
                    bad.append(f"({i},{j}) masked: hatching grey expected, got {tuple(got.round())}")
                continue
            want = expected_colour(values[i, j], low, high, stops)
            if np.abs(got - np.array(want)).max() > TOLERANCE:
                bad.append(f"({i},{j}) = {values[i, j]:.5f}: {tuple(round(c) for c in want)} expected, got {tuple(got.round())}")
    failures.check(not bad, f"[{label}] {name} cells: " + "; ".join(bad[:6]))


def painter_mismatches(pixels, rect, masked):
    """The mask painter's cells whose colour disagrees with `masked` (Lq, Lk) bool: a masked cell
    is mid grey, an attended one the painter's green. A list of "(i,j) ...: got colour"."""
    bad = []
    for i in range(masked.shape[0]):
        for j in range(masked.shape[1]):
            got = sample(pixels, rect, i, j)
            grey = abs(got[0] - got[1]) < 3 and abs(got[1] - got[2]) < 3 and 100 <= got[0] <= 160
            green = np.abs(got - np.array(ATTEND_GREEN)).max() <= TOLERANCE
            if (masked[i, j] and not grey) or (not masked[i, j] and not green):
                bad.append(f"({i},{j}) {'masked' if masked[i, j] else 'attends'}: got {tuple(got.round())}")
    return bad


def masked_cells(session, batch, len_q, len_kv):
    """(B, Lq, Lk) bool, True where the saved session's config masks a score."""
    spec = session["config"].get("mask") or {}
    attend = np.ones((batch, len_q, len_kv), dtype=bool)
    if spec.get("causal"):
        attend &= np.arange(len_kv)[None, :] <= np.arange(len_q)[:, None]
    if spec.get("key_padding") is not None:
        attend &= np.array(spec["key_padding"], dtype=float).reshape(-1, 1, len_kv) != 0
    if spec.get("custom") is not None:
        attend &= np.array(spec["custom"], dtype=float).reshape(-1, len_q, len_kv) != 0
    if spec.get("window"):
        attend &= reference.window_attends(len_q, len_kv, spec["window"], spec.get("global_tokens") or []).numpy()
    return ~attend
