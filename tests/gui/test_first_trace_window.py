"""A large first trace does not keep the window from showing (issue 16: 4096 tokens must be
usable). The app opens a session of B = 2 sequences of 4096 tokens (d_model 512, 8 heads: a
3.1 GiB trace that takes seconds to compute) in the real window: the window is drawn while the
trace is still computing, with the progress bar, and says what is going on:

- the heatmaps' place says the trace is being computed, not "the session has an error";
- the status line says a trace is being computed, not that "the previous result stays on
  screen" (there is none);
- the step's text quotes the session's own sizes (d_model = 512), with no "{d_model}"
  placeholder left unfilled;
- its pixels, grabbed from the X screen, are the window's, not a black rectangle, and the
  progress bar's box is drawn.

Then the trace arrives: the heatmaps show and the status reports the computed trace. The same in
中文. A small session still opens on its trace (the first frame shows it)."""
import json
import os
import sys
import time

import wiring_util as wu  # first: it runs this test again under /usr/bin/python3 if this python lacks numpy
from files_test_util import App, user_dirs
from gui_test_util import Failures, app_window, output_dir

np = wu.np

binary = sys.argv[1]
failures = Failures()
out = output_dir("first-trace-window")
root, env = user_dirs("first-trace-window")


def session(batch, length):
    """Seeded random X and weights (std 1/√512), self attention, eval: no numbers in the file."""
    def normal(shape, seed, std):
        return {"random": {"shape": shape, "seed": seed, "std": std}}
    weights = {"layout": "math"}
    for i, name in enumerate(["w_q", "w_k", "w_v", "w_o"]):
        weights[name] = normal([512, 512], 2 + i, 0.0442)
    for i, name in enumerate(["b_q", "b_k", "b_v", "b_o"]):
        weights[name] = normal([512], 6 + i, 0.0442)
    return {"format": "attention-lab/session", "version": 1,
            "config": {"mode": "projection", "attention": "self", "d_model": 512, "num_heads": 8, "bias": True,
                       "scale": "sqrt_dk"},
            "x": normal([batch, length, 512], 1, 1.0), "weights": weights}


def write(name, data):
    path = os.path.join(out, name + ".json")
    json.dump(data, open(path, "w"))
    return path


def heatmaps_shown(state):
    return any(name.startswith("heatmap.") for name in state["widgets"])


def check_while_computing(lang):
    label = f"[{lang}] "
    app = App(binary, [write("large", session(2, 4096))], env, out, f"large-{lang}", failures, lang=lang)
    try:
        # The first frame is drawn while the worker computes: the widget file says so.
        state = app.wait_for(lambda s: "stepper.next" in s["widgets"], "the window's first frame", 60)
        widgets = state["widgets"]
        failures.check("heatmaps.computing" in widgets and "status.computing_first" in widgets,
                       label + f"the first frame shows a trace on its way (widgets: {sorted(widgets)[:40]})")
        failures.check("heatmaps.no_trace" not in widgets and "status.computing" not in widgets,
                       label + "no 'the session has an error' and no 'previous result' while the first trace computes")
        failures.check("status.progress" in widgets, label + "the progress bar is drawn")
        failures.check(not heatmaps_shown(state), label + "no heatmap before the trace exists")
        lines = state.get("explanation.text.lines", "")
        failures.check("{" not in lines, label + f"the step's text has no unfilled placeholder: {lines!r}")
        failures.check("d_model = 512" in lines, label + f"the step's text quotes d_model = 512: {lines!r}")

        # The pixels of that state, grabbed from the screen, and the state once more after the
        # grab: the picture is of the computing window only if it was still computing then.
        # The X server draws a swapped frame when it gets to it: on a busy machine the first grab
        # may still find the window black, so look again for a moment (still while computing).
        window = app_window()
        for _ in range(20):
            pixels = wu.grab(window)
            if pixels.max() > 100:
                break
            time.sleep(0.1)
        after = app.state() or {"widgets": {}}
        if "status.computing_first" in after["widgets"]:
            from PIL import Image
            Image.fromarray(pixels).save(os.path.join(out, f"computing-{lang}.png"))
            failures.check(pixels.max() > 100, label + "the window grabbed while computing is drawn, not black")
            rect = after["widgets"]["status.progress"]
            box = pixels[int(rect["y"]) + 2:int(rect["y"] + rect["h"]) - 2, int(rect["x"]) + 2:int(rect["x"] + rect["w"]) - 2]
            background = np.median(pixels[int(rect["y"] + rect["h"] / 2), -20:].reshape(-1, 3), axis=0)
            differs = np.abs(box.reshape(-1, 3).astype(int) - background).sum(axis=1) > 30
            failures.check(differs.mean() > 0.9, label + f"the progress bar's box is drawn over the status bar "
                                                          f"({differs.mean():.0%} of its pixels differ from the bar)")
        else:
            failures.check(False, label + "the trace was done before the window could be grabbed while computing")

        # Then the trace: the heatmaps show, and the status reports it.
        done = app.wait_for(lambda s: heatmaps_shown(s) and "status.progress" not in s["widgets"],
                            "the first trace's heatmaps", 600)
        failures.check("heatmaps.computing" not in done["widgets"] and done.get("error") == "",
                       label + "once computed, the trace replaces the 'computing' text, with no error")
    finally:
        app.process.terminate()
        app.process.wait(timeout=60)


def check_small_session_opens_on_its_trace():
    app = App(binary, [write("small", session(1, 16))], env, out, "small", failures)
    try:
        state = app.wait_for(lambda s: "stepper.next" in s["widgets"], "the window's first frame", 60)
        failures.check(heatmaps_shown(state) and "status.progress" not in state["widgets"],
                       "a small session's first frame shows its trace, not a progress bar")
    finally:
        app.process.terminate()
        app.process.wait(timeout=60)


check_small_session_opens_on_its_trace()
for language in ("en", "zh"):
    check_while_computing(language)
failures.finish()
