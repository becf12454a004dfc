"""The FlashAttention lab, the linear-attention lab and the guided lessons, in
the real app under Xvfb, in English and Chinese.

- FlashAttention lab (--open flash): the tiled result differs from the plain
  one by < 1e-5; the memory it reports is the formula 4·(Lq·d_k + 2·Lq + Tq·Tk)
  bytes against 4·Lq·Lk; the current tile is outlined inside the scores heatmap.
- Linear lab (--open linear): the multiply-add counts are 2·B·h·Lq·Lk·d_k and
  2·B·h·n·d_k·(d_k + 1), computed here from the preset's sizes; its largest
  |linear − softmax| is the shown batch item's, against a loop here.
- Lessons (--lesson N): each step puts the stepper on its step, and the
  highlight rectangle surrounds the widget the registry names as the target,
  with the highlight colour on its border.
- xdotool: clicking the lesson's Next moves the stepper (widget JSON), and the
  flash lab's "to the end" shows the result line.
No missing glyphs in either language."""
import json
import math
import os
import subprocess
import sys
import time

from gui_test_util import app_window, wait_for_widgets, xdotool, Failures, mean_colour, output_dir, screenshot, temporary_dir

binary = sys.argv[1]
out = output_dir("flash-lessons")
# Settings and crash-recovery files of our own: a lesson edits the session, and
# a recovery file left by one run would open a dialog in the next.
for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[variable] = temporary_dir("xdg")
failures = Failures()

# The default preset's sizes (assets/presets/default.json): B = 1, 6 tokens, d_model 8, 2 heads.
B, L, D_MODEL, HEADS = 1, 6, 8, 2
D_K = D_MODEL // HEADS
FLASH_TILES = (2, 2)  # the lab's default tile sizes
HIGHLIGHT = (64, 224, 255)
TILE_OUTLINE = (255, 200, 0)

# Each lesson's step id and the widget it points at, as the lessons are written.
LESSONS = [("qkv", "heatmap.q.h0"), ("scores", "heatmap.scores.h0"), ("scaled", "heatmap.scaled.h0"),
           ("weights", "heatmap.weights.h0"), ("context", "heatmap.context.h0"), ("concat", "heatmap.concat"),
           ("masked", "heatmap.masked.h0"), ("weights", "heatmap.weights.h0")]


def contains(outer, inner):
    return (outer["x"] <= inner["x"] and outer["y"] <= inner["y"] and
            outer["x"] + outer["w"] >= inner["x"] + inner["w"] and
            outer["y"] + outer["h"] >= inner["y"] + inner["h"])


def border_has(image, rect, colour, tolerance=40):
    """The colour on the top and left edges of rect (a stroke a few pixels thick)."""
    x_mid = int(rect["x"] + rect["w"] / 2)
    y_mid = int(rect["y"] + rect["h"] / 2)
    top = [mean_colour(image, x_mid, int(rect["y"]) + dy, 0) for dy in range(-2, 3)]
    left = [mean_colour(image, int(rect["x"]) + dx, y_mid, 0) for dx in range(-2, 3)]
    near = lambda samples: any(all(abs(a - b) <= tolerance for a, b in zip(s, colour)) for s in samples)
    return near(top) and near(left)


for lang in ("en", "zh"):
    # FlashAttention lab.
    image, state = screenshot(binary, "default", "x", out, f"flash-{lang}", ["--lang", lang, "--open", "flash"])
    failures.check(state["missing_glyphs"] == "", f"{lang}: missing glyphs {state['missing_glyphs']}")
    failures.check("flash_lab.max_difference" in state, f"{lang}: the flash lab reports its difference")
    if "flash_lab.max_difference" in state:
        difference = float(state["flash_lab.max_difference"])
        failures.check(difference < 1e-5, f"{lang}: tiled vs plain differ by {difference}")
        tq, tk = FLASH_TILES
        failures.check(int(state["flash_lab.held_bytes"]) == 4 * (L * D_K + 2 * L + tq * tk),
                       f"{lang}: held bytes {state['flash_lab.held_bytes']}")
        failures.check(int(state["flash_lab.full_matrix_bytes"]) == 4 * L * L,
                       f"{lang}: full matrix bytes {state['flash_lab.full_matrix_bytes']}")
        failures.check(int(state["flash_lab.steps"]) == (L // tq) * (L // tk),
                       f"{lang}: {state['flash_lab.steps']} tile steps")
        widgets = state["widgets"]
        grid, tile = widgets.get("heatmap.flash_lab.scores"), widgets.get("flash_lab.tile_outline")
        failures.check(grid is not None and tile is not None, f"{lang}: scores heatmap and tile outline drawn")
        if grid and tile:
            failures.check(contains(grid, tile), f"{lang}: the tile outline lies inside the scores")
            failures.check(abs(tile["w"] - grid["w"] * tk / L) < 1.5 and abs(tile["h"] - grid["h"] * tq / L) < 1.5,
                           f"{lang}: the first tile covers {tq} x {tk} cells")
            failures.check(border_has(image, tile, TILE_OUTLINE), f"{lang}: the tile outline is drawn")

    # Linear-attention lab.
    image, state = screenshot(binary, "default", "x", out, f"linear-{lang}", ["--lang", lang, "--open", "linear"])
    failures.check(state["missing_glyphs"] == "", f"{lang}: missing glyphs (linear) {state['missing_glyphs']}")
    failures.check(int(state.get("linear_lab.softmax_multiply_adds", -1)) == 2 * B * HEADS * L * L * D_K,
                   f"{lang}: softmax multiply-adds {state.get('linear_lab.softmax_multiply_adds')}")
    failures.check(int(state.get("linear_lab.linear_multiply_adds", -1)) == 2 * B * HEADS * L * D_K * (D_K + 1),
                   f"{lang}: linear multiply-adds {state.get('linear_lab.linear_multiply_adds')}")
    for name in ("heatmap.linear_lab.softmax_weights", "heatmap.linear_lab.linear_weights",
                 "heatmap.linear_lab.difference", "linear_lab.plot"):
        failures.check(name in state["widgets"], f"{lang}: {name} drawn")

    # Linear lab on padded-batch's item 2 (padded): its largest |linear − softmax| is that item's, computed
    # here from the trace's Q, K, V and mask, φ = elu + 1, and the saved session's W_O (it once gave all items').
    if lang == "en":
        trace = json.loads(subprocess.run([binary, "trace", "padded-batch", "--json"], capture_output=True,
                                          text=True, check=True, timeout=60).stdout)
        saved = os.path.join(out, "padded-batch.json")
        subprocess.run(["xvfb-run", "-a", binary, "padded-batch", "--frames", "2", "--save-on-exit", saved],
                       check=True, timeout=60, capture_output=True)
        weights = json.load(open(saved))["weights"]
        w_o, b_o = weights["w_o"], weights["b_o"]
        phi = lambda x: x + 1 if x > 0 else math.exp(x)  # noqa: E731
        stages, mask = trace["stages"], trace["mask"]
        def linear_output(b):
            rows = []
            for i in range(len(stages["q"][b][0])):
                concat = []
                for h in range(len(stages["q"][b])):
                    q, k, v = stages["q"][b][h], stages["k"][b][h], stages["v"][b][h]
                    a = [sum(phi(x) * phi(y) for x, y in zip(q[i], k[j])) if mask[b][i][j] else 0.0
                         for j in range(len(k))]
                    concat += [sum(a[j] * v[j][c] for j in range(len(k))) / sum(a) for c in range(len(v[0]))]
                rows.append([sum(concat[r] * w_o[r][c] for r in range(len(concat))) + b_o[c] for c in range(len(b_o))])
            return rows
        expected = {b: max(abs(x - y) for row, ref in zip(linear_output(b), stages["output"][b]) for x, y in zip(row, ref))
                    for b in range(len(mask))}
        failures.check(len(set(round(e, 4) for e in expected.values())) > 1, f"the items' differences differ: {expected}")
        _, state = screenshot(binary, "padded-batch", "weights", out, "linear-item2", ["--open", "linear", "--pin", "weights:2:0:0:0"])
        shown = float(state.get("linear_lab.max_difference", "nan"))
        failures.check(abs(shown - expected[2]) <= 1e-3 * expected[2],
                       f"the linear lab's difference is item 2's {expected[2]:.4g}, not all items' max: {shown}")

    # Every lesson step.
    for number, (step, target) in enumerate(LESSONS, start=1):
        image, state = screenshot(binary, "default", "x", out, f"lesson{number}-{lang}",
                                  ["--lang", lang, "--lesson", str(number)])
        failures.check(state["missing_glyphs"] == "", f"{lang} lesson {number}: missing glyphs")
        failures.check(state["step"] == step, f"{lang} lesson {number}: stepper at {state['step']}, expected {step}")
        failures.check(state.get("lesson.target") == target,
                       f"{lang} lesson {number}: points at {state.get('lesson.target')}, expected {target}")
        widgets = state["widgets"]
        highlight, widget = widgets.get("lesson.highlight"), widgets.get(target)
        failures.check(highlight is not None and widget is not None, f"{lang} lesson {number}: highlight and target drawn")
        if highlight and widget:
            failures.check(contains(highlight, widget), f"{lang} lesson {number}: the highlight surrounds {target}")
            failures.check(highlight["w"] - widget["w"] < 40 and highlight["h"] - widget["h"] < 40,
                           f"{lang} lesson {number}: the highlight hugs the target")
            failures.check(border_has(image, highlight, HIGHLIGHT),
                           f"{lang} lesson {number}: the highlight colour is on the rectangle's border")
        failures.check(state["error"] == "", f"{lang} lesson {number}: no error ({state['error']})")


# xdotool: lesson Next moves the stepper; the flash lab's "to the end" shows the result.
widgets_path = os.path.join(out, "live.json")
if os.path.exists(widgets_path):
    os.remove(widgets_path)


def wait_for(predicate, what, timeout=15.0):
    state, ok = wait_for_widgets(widgets_path, predicate, timeout)
    failures.check(ok, f"timed out waiting for: {what}")
    return state


def click(window, rect):
    xdotool("mousemove", "--window", window, int(rect["x"] + rect["w"] / 2), int(rect["y"] + rect["h"] / 2))
    time.sleep(0.2)
    xdotool("click", 1)
    time.sleep(0.2)


app = subprocess.Popen([binary, "default", "--lang", "en", "--size", "1600x1000", "--lesson", "1",
                        "--open", "flash", "--widgets-out", widgets_path, "--out", os.path.join(out, "live.png")])
try:
    state = wait_for(lambda s: "lesson.next" in s["widgets"] and "flash_lab.to_end" in s["widgets"],
                     "the lesson and the flash lab", 30)
    window = app_window()
    if state:
        failures.check(state["step"] == "qkv", f"lesson 1 starts at qkv, got {state['step']}")
        click(window, state["widgets"]["lesson.next"])
        state = wait_for(lambda s: s["step"] == "scores" and s.get("lesson.index") == "1",
                         "lesson Next moves the stepper to the scores")
        click(window, state["widgets"]["flash_lab.to_end"])
        state = wait_for(lambda s: "flash_lab.result" in s["widgets"], "the flash lab's result line")
        if state:
            failures.check(state["flash_lab.step"] == str(int(state["flash_lab.steps"]) - 1),
                           "to the end shows the last tile step")
finally:
    app.terminate()
    try:
        app.wait(timeout=20)
    except subprocess.TimeoutExpired:
        app.kill()

failures.finish()
