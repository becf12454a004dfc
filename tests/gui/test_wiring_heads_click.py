"""Clicking a head's heatmap switches the inputs row to that head (heatmap_rows.cpp), as a learner
does with the mouse; tests had reached the row's head only through --pin. On llama-block (8 query
heads, 2 K/V heads, d_k 4: W_K and W_V are 32 x 8) a K or V heatmap is a K/V head, and clicking it
must show its first query head (K/V head n -> query head n * 4), not query head n:
1. step Q, K, V: click Q of head 3 -> the inputs row titles read W_Q[:, head 3] and
   W_K / W_V[:, K/V head 0 · q heads 0–3]; K of K/V head 1 -> W_Q[:, head 4] and
   W_K / W_V[:, K/V head 1 · q heads 4–7]; scrolled down to the V row, V of K/V head 0 -> head 0;
2. step weights: click head 5's weights -> the inputs row shows head 5's masked scores;
   back at Q, K, V the row reads W_Q[:, head 5] and W_K[:, K/V head 1 · q heads 4–7];
3. the W_Q and W_K slices, each enlarged (32 x 4 cells are too small to sample in the row), are,
   cell by cell, the colours of the session file's W_Q[:, 20:24] and W_K[:, 4:8] (written by
   Ctrl+S, sliced with numpy), so the titles name what is drawn."""
import json
import os
import sys
import time

import wiring_util as wu
from gui_test_util import DIVERGING, Failures, output_dir

np = wu.np
binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
out = output_dir("wiring-heads-click")
session = json.load(open(os.path.join(source_dir, "assets", "presets", "llama-block.json")))
D_K = 4  # the preset's weights are seeded random specs: their values come from the saved file


def kv_title(n):
    return f"K/V head {n} · q heads {4 * n}–{4 * n + 3}"


def titles(state):
    return {name: state.get(f"heatmap.input.{name}.title") for name in ("w_q", "w_k", "w_v")}


def expected_titles(head):
    kv = kv_title(head // 4)
    return {"w_q": f"W_Q[:, head {head}]", "w_k": f"W_K[:, {kv}]", "w_v": f"W_V[:, {kv}]"}


def saved_weights(app):
    """Ctrl+S on the unmodified preset writes its weights out as numbers: (W_Q, W_K) from the file."""
    app.away()
    wu.hold_keys("ctrl", "s")
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            weights = json.load(open(app.path))["weights"]
            if isinstance(weights["w_q"], list):
                return np.array(weights["w_q"]), np.array(weights["w_k"])
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    failures.check(False, "Ctrl+S writes the weights out")
    return np.zeros((32, 32)), np.zeros((32, 8))


def into_view(app, name):
    """Scrolls the heatmaps panel with the wheel (over its empty right side) until `name` is wholly
    inside it, as a learner scrolls to the V row of a 1400 x 900 window."""
    for _ in range(30):
        state = app.settled()
        rect, text = state["widgets"].get(name), state["widgets"]["explanation.text"]
        top, bottom = text["y"] + text["h"] + 10, state["widgets"]["tab.config"]["y"] + state["widgets"]["tab.config"]["h"]
        if rect and top <= rect["y"] and rect["y"] + rect["h"] <= bottom:
            return
        wu.xdotool("mousemove", "--window", app.window, 1320, 600)
        time.sleep(0.1)
        wu.xdotool("click", 5 if rect is None or rect["y"] + rect["h"] > bottom else 4)
        time.sleep(0.15)
    failures.check(False, f"{name} scrolled into view")


def click_head(app, heatmap, head, want):
    """Clicks heatmap `heatmap` until the inputs row's titles are `want` (a click held over frames)."""
    into_view(app, "heatmap." + heatmap)
    app.click_widget("heatmap." + heatmap)
    return app.wait_for(lambda s: titles(s) == want, f"clicking {heatmap} shows head {head}'s inputs")


app = wu.Wiring(binary, session, out, "heads-click", failures, ["--stage", "qkv"])
try:
    state = app.wait_for(lambda s: s["step"] == "qkv" and "heatmap.k.h1" in s["widgets"], "the Q, K, V step")
    failures.check(titles(state) == expected_titles(0), f"[start] head 0's inputs: {titles(state)}")
    for heatmap, head in (("q.h3", 3), ("k.h1", 4), ("v.h0", 0)):
        state = click_head(app, heatmap, head, expected_titles(head))
        failures.check(titles(state) == expected_titles(head), f"[{heatmap}] head {head}'s inputs: {titles(state)}")

    app.go_to_step("weights")
    app.wait_for(lambda s: "heatmap.masked.h0" in s["widgets"], "the weights step's inputs row shows head 0")
    into_view(app, "heatmap.weights.h5")
    app.click_widget("heatmap.weights.h5")
    state = app.wait_for(lambda s: "heatmap.masked.h5" in s["widgets"], "clicking head 5's weights shows its masked scores")
    failures.check("heatmap.masked.h5" in state["widgets"] and "heatmap.masked.h0" not in state["widgets"],
                   f"[weights.h5] the inputs row: {sorted(n for n in state['widgets'] if n.startswith('heatmap.masked'))}")

    app.go_to_step("qkv")
    state = app.wait_for(lambda s: titles(s) == expected_titles(5), "back at Q, K, V: head 5's inputs")
    failures.check(titles(state) == expected_titles(5), f"[weights.h5 -> qkv] head 5's inputs: {titles(state)}")
    w_q, w_k = saved_weights(app)
    failures.check(w_q.shape == (32, 32) and w_k.shape == (32, 8), f"saved W_Q {w_q.shape}, W_K {w_k.shape}")
    for name, whole, columns, label in (("w_q", w_q, slice(5 * D_K, 6 * D_K), "W_Q head 5"),
                                        ("w_k", w_k, slice(1 * D_K, 2 * D_K), "W_K K/V head 1")):
        into_view(app, "enlarge.input." + name)
        app.click_widget("enlarge.input." + name)
        app.wait_for(lambda s: "zoom.back" in s["widgets"] and "heatmap.input.x" not in s["widgets"], f"{label} enlarged")
        state, pixels = app.screen()
        wu.check_heatmap(failures, label, state, pixels, "input." + name, whole[:, columns], wu.symmetric_range(whole), DIVERGING)
        wu.hold_keys("Escape")
        app.wait_for(lambda s: "zoom.back" not in s["widgets"] and "heatmap.input.x" in s["widgets"], "Esc leaves the enlarged view")
finally:
    app.kill()
failures.finish()
