"""The heads slider of "Heads as a reshape" edits the session like the Settings field (xdotool):
default (d_model 8, 2 heads) saved to a file, the window opened; the slider dragged from 2 heads to its
right end: the saved session has 8 heads and the same weights (heads only cut W's columns), and one Ctrl+Z
brings back 2 heads (one undo step for the whole drag, however many head counts it passed)."""
import json
import os
import sys
import time

from files_test_util import App, hold_keys, save_preset, user_dirs, xdotool
from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("heads-slider")
path = os.path.join(root, "mine.json")
save_preset(binary, "default", path, env)
original = json.load(open(path))
failures.check(original["config"]["num_heads"] == 2 and original["config"]["d_model"] == 8, "default: 2 heads of d_model 8")


def save(app):
    app.away()
    hold_keys("ctrl", "s")
    app.wait_for(lambda s: s.get("modified") == "no", "Ctrl+S saves")
    return json.load(open(path))


app = App(binary, [path, "--open", "heads"], env, root, "run", failures)
try:
    app.find_window()
    state = app.wait_for(lambda s: "heads.count" in s["widgets"], "the heads window's slider")
    rect = state["widgets"]["heads.count"]
    revision = int(state["revision"])
    # Positions 0..3 are 1, 2, 4, 8 heads: grab the knob at position 1, drag past the right end.
    y = int(rect["y"] + rect["h"] / 2)
    xdotool("mousemove", "--window", app.window, int(rect["x"] + rect["w"] * 1.5 / 4), y)
    time.sleep(0.2)
    xdotool("mousedown", 1)
    for step in range(1, 11):
        time.sleep(0.06)
        xdotool("mousemove", "--window", app.window, int(rect["x"] + rect["w"] * (1.5 / 4 + step * 0.07)), y)
    time.sleep(0.2)
    xdotool("mouseup", 1)
    app.wait_for(lambda s: int(s["revision"]) > revision, "the drag edits the session")
    saved = save(app)
    failures.check(saved["config"]["num_heads"] == 8, f"dragged to the end: 8 heads, got {saved['config']['num_heads']}")
    failures.check(saved["weights"] == original["weights"] and saved["x"] == original["x"],
                   "the weights and X are the same numbers, cut into 8 heads of d_k 1")
    revision = app.settled()["revision"]
    app.away()
    hold_keys("ctrl", "z")
    app.wait_for(lambda s: s["revision"] != revision, "Ctrl+Z")
    saved = save(app)
    failures.check(saved["config"]["num_heads"] == 2, f"one Ctrl+Z undoes the whole drag: {saved['config']['num_heads']} heads")
finally:
    app.kill()
failures.finish()
