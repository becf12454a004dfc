"""End-to-end: drive the real app with real X input events (xdotool) and check
what the app saved. Steps: click "Next" on the stepper, press → (held, since
ImGui 1.86 loses a key pressed and released within one frame), play and pause, paint one mask
cell, type values into two cells of X, press Ctrl+Z once, make an invalid edit
(3 heads) and undo it, quit with Ctrl+Q.
Expected: step advanced twice; the mask cell is masked; the first typed value
is kept and the second undone."""
import json
import os
import subprocess
import sys
import time

from gui_test_util import app_window, ctrl_click, hold_keys, xdotool, Failures, output_dir, type_text

binary = sys.argv[1]
out = output_dir("e2e")
failures = Failures()
widgets_path = os.path.join(out, "widgets.json")
saved_path = os.path.join(out, "saved.json")
baseline_path = os.path.join(out, "baseline.json")
PRESET = "default"
for stale in (widgets_path, saved_path, baseline_path):
    if os.path.exists(stale):
        os.remove(stale)


def widgets():
    try:
        return json.load(open(widgets_path))
    except (OSError, ValueError):
        return None


def wait_for(predicate, what, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        state = widgets()
        if state and predicate(state):
            return state
        time.sleep(0.05)
    failures.check(False, f"timed out waiting for: {what} (last state: step={state and state.get('step')}, "
                          f"revision={state and state.get('revision')})")
    return widgets()


def settled():
    """The widget file once it has stopped changing (ImGui lays tables out over two frames)."""
    previous = None
    for _ in range(100):
        time.sleep(0.1)
        current = open(widgets_path).read()
        if current == previous:
            break
        previous = current
    return json.loads(previous)


def centre(state, name, dx=0.5, dy=0.5):
    rect = state["widgets"][name]
    return int(rect["x"] + dx * rect["w"]), int(rect["y"] + dy * rect["h"])


def click(window, x, y, repeat=1):
    xdotool("mousemove", "--window", window, x, y)
    time.sleep(0.15)
    xdotool("click", "--repeat", repeat, "--delay", 80, 1)
    time.sleep(0.2)


def x_matrix(path):
    """X of batch item 0 as a list of rows, from a saved session."""
    x = json.load(open(path))["x"]
    return x[0] if isinstance(x[0][0], list) else x


# The preset's X as the app saves it, untouched.
subprocess.run([binary, PRESET, "--frames", "2", "--save-on-exit", baseline_path],
               check=True, timeout=60, capture_output=True)
x_before = x_matrix(baseline_path)

app = subprocess.Popen([binary, PRESET, "--lang", "en", "--size", "1600x1000", "--widgets-out", widgets_path,
                        "--save-on-exit", saved_path, "--out", os.path.join(out, "last-frame.png")])
try:
    state = wait_for(lambda s: "stepper.next" in s["widgets"], "the app's first frame", 30)
    window = app_window()
    failures.check(state["step"] == "x", f"starts at step x, got {state['step']}")

    # 1. The stepper: Next, then the → key.
    click(window, *centre(state, "stepper.next"))
    state = wait_for(lambda s: s["step"] == "qkv", "Next moves to Q/K/V")
    xdotool("mousemove", "--window", window, 5, 500)  # over the window, on no widget
    hold_keys("Right")
    state = wait_for(lambda s: s["step"] == "scores", "→ moves to QKᵀ")

    # Play advances on its own (one step every 1.6 s); a second click pauses.
    click(window, *centre(state, "stepper.play"))
    state = wait_for(lambda s: s["step"] == "masked", "Play walks on to the mask step", 8)
    click(window, *centre(state, "stepper.play"))
    time.sleep(2.0)
    state = settled()
    failures.check(state["step"] in ("masked", "weights"), f"Pause stops the stepper, at {state['step']}")

    # 2. Paint one mask cell: row 0, last key.
    click(window, *centre(state, "tab.mask"))
    wait_for(lambda s: "heatmap.mask_painter" in s["widgets"], "the mask painter")
    state = settled()
    grid = state["widgets"]["heatmap.mask_painter"]
    rows, cols = int(grid["rows"]), int(grid["cols"])
    revision = int(state["revision"])
    click(window, int(grid["x"] + (cols - 0.5) * grid["w"] / cols), int(grid["y"] + 0.5 * grid["h"] / rows))
    state = wait_for(lambda s: int(s["revision"]) == revision + 1, "painting a mask cell is one edit")

    # 3. Type 2.5 into X[0][0] and 0.75 into X[0][1] (Ctrl+click enters typing).
    click(window, *centre(state, "tab.matrices"))
    wait_for(lambda s: "editor.cell.0.1" in s["widgets"], "the matrix editor")
    state = settled()
    for cell, text in (("editor.cell.0.0", "2.5"), ("editor.cell.0.1", "0.75")):
        revision = int(state["revision"])
        ctrl_click(window, *centre(state, cell))
        wait_for(lambda s: s["text_input"] == "yes", f"Ctrl+clicking {cell} starts typing")
        type_text(text)  # replaces the selected old value
        hold_keys("Return")
        # Typing edits as it goes: the revision moves before Enter, which must also end typing.
        state = wait_for(lambda s: int(s["revision"]) > revision and s["text_input"] == "no",
                         f"typing {text} into {cell} edits the session, Enter ends typing")

    # 4. Undo the last edit.
    revision = int(state["revision"])
    xdotool("mousemove", "--window", window, 5, 500)
    hold_keys("ctrl", "z")
    state = wait_for(lambda s: int(s["revision"]) > revision, "Ctrl+Z undoes")

    # 5. An invalid edit: 3 heads do not divide d_model = 8. The error shows
    #    beside the heads field and the last valid trace stays; Ctrl+Z clears it.
    click(window, *centre(state, "tab.config"))
    wait_for(lambda s: "config.heads.plus" in s["widgets"], "the settings tab")
    state = settled()
    revision = int(state["revision"])
    click(window, *centre(state, "config.heads.plus"))
    state = wait_for(lambda s: s["error"] == "heads_do_not_divide", "3 heads give the heads error")
    state = settled()
    error_rect, heads_rect = state["widgets"].get("error"), state["widgets"]["config.heads"]
    failures.check(error_rect is not None and 0 <= error_rect["y"] - (heads_rect["y"] + heads_rect["h"]) < 40,
                   f"the error is shown right below the heads field ({error_rect} vs {heads_rect})")
    failures.check(f"heatmap.{state['step']}.h0" in state["widgets"], "the last valid heatmaps stay on screen")
    xdotool("mousemove", "--window", window, 5, 500)
    hold_keys("ctrl", "z")
    state = wait_for(lambda s: s["error"] == "", "Ctrl+Z removes the invalid edit")

    # 6. Quit (the app saves on exit).
    hold_keys("ctrl", "q")
    app.wait(timeout=20)
    failures.check(app.returncode == 0, f"the app exits cleanly, code {app.returncode}")
finally:
    if app.poll() is None:
        app.terminate()
        app.wait(timeout=10)

saved = json.load(open(saved_path))
x_after = x_matrix(saved_path)
failures.check(abs(x_after[0][0] - 2.5) < 1e-6, f"X[0][0] typed as 2.5, saved {x_after[0][0]}")
failures.check(abs(x_after[0][1] - x_before[0][1]) < 1e-6,
               f"X[0][1] back to {x_before[0][1]} after Ctrl+Z, saved {x_after[0][1]}")
mask = (saved.get("config", {}).get("mask") or {}).get("custom")
failures.check(mask is not None, "the saved session has a painted (custom) mask")
if mask:
    matrix = mask[0] if isinstance(mask[0][0], list) else mask
    failures.check(matrix[0][-1] == 0, f"mask[0][last] is painted 0, saved {matrix[0][-1]}")
    painted = sum(v == 0 for row in matrix for v in row)
    failures.check(painted == 1, f"exactly one cell painted, found {painted}")
failures.finish()
