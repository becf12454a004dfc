"""Quick drags: a press, its moves and its release sent back to back (one xdotool
command), so one frame may get all of them, as on a busy machine where a frame
outlasts a learner's drag. ImGui 1.86 polls the pointer once a frame: it saw such a
drag as one click where the pointer ended. The app hands it each button change in a
frame of its own, at the place it happened (app/gui/platform/mouse_trickle.cpp).
1. Mask painter: a stroke over three cells in one burst paints all three, in the saved
   file and on screen (the build before painted only the last: the stroke started
   where it ended; with the pointer paced and no more, the middle cell, jumped over
   between two frames, was missed: a stroke now paints the cells between).
2. Padding slider: pressed on it and dragged past its right end in one burst, it
   reaches the end, every key kept (before: the press was seen past the end, off the
   slider, and nothing changed).
3. Enlarged heatmap: a 200-pixel drag in one burst (left, then right) pans the view
   by 200 pixels of cells and pins nothing (before: a click where the drag ended, which
   pinned a cell).
4. There: a click, a move and a wheel turn in one burst zoom around where the pointer
   went (the wheel is paced too; before that, it zoomed around the click).
1-3 are repeated: a burst lands in one frame often, not always."""
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("quick-mouse")
failures = Failures()
rng = np.random.default_rng(37)
ROUNDS = 3


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(2).tolist()


def session_of(length, d_model, heads, causal):
    return {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": "projection", "attention": "self", "d_model": d_model, "num_heads": heads,
                   "bias": False, "scale": "sqrt_dk", "mask": {"causal": causal}, "mask_fill": "-inf",
                   "dropout": {"p": 0.0, "training": False, "seed": 0}},
        "x": [matrix(length, d_model)],
        "weights": {"layout": "math", **{f"w_{n}": matrix(d_model, d_model, 1.2) for n in "qkvo"}},
    }


def burst(app, start, *moves):
    """Pointer to `start` and settle; then press, every move and release in one command."""
    wu.xdotool("mousemove", "--window", app.window, *start)
    time.sleep(0.3)
    command = ["mousedown", 1]
    for x, y in moves:
        command += ["mousemove", "--window", app.window, int(x), int(y)]
    wu.xdotool(*command, "mouseup", 1)
    time.sleep(0.3)


L = 4
app = wu.Wiring(binary, session_of(L, 4, 1, causal=False), out, "painter", failures,
                ["--stage", "weights", "--tab", "mask"])
try:
    app.wait_for(lambda s: "heatmap.mask_painter" in s["widgets"], "the mask painter")
    for round_ in range(ROUNDS):
        # 1. One stroke over (row, 0), (row, 1), (row, 2) of the painter.
        row = round_ % L
        painter = app.settled()["widgets"]["heatmap.mask_painter"]
        app.edit(lambda: burst(app, wu.cell_centre(painter, row, 0),
                               wu.cell_centre(painter, row, 1), wu.cell_centre(painter, row, 2)),
                 f"[{round_}] a quick stroke over three cells")
        saved = app.save()
        want = np.ones((1, L, L))
        want[0, row, :3] = 0
        got = wu.saved_mask(saved, "custom")
        failures.check(got is not None and np.array_equal(got, want),
                       f"[{round_}] the stroke painted ({row}, 0), ({row}, 1), ({row}, 2), no other: {got}")
        state, pixels = app.screen()  # and the painter shows them masked (grey), the rest green
        bad = wu.painter_mismatches(pixels, state["widgets"]["heatmap.mask_painter"], want[0] == 0)
        failures.check(not bad, f"[{round_}] painter cells: " + "; ".join(bad))
        app.edit(lambda: app.click(app.settled(), "mask.all_on"), f"[{round_}] all on")

        # 2. The padding slider, from one kept key to past its right end.
        app.type_into("mask.padding", "1")
        saved = app.save()
        padding = wu.saved_mask(saved, "key_padding")
        failures.check(padding is not None and padding.tolist() == [[1, 0, 0, 0]], f"[{round_}] (test design) one key kept: {padding}")
        slider = app.settled()["widgets"]["mask.padding"]
        y = slider["y"] + slider["h"] / 2
        app.edit(lambda: burst(app, (int(slider["x"] + 0.3 * slider["w"]), int(y)),
                               (slider["x"] + 0.7 * slider["w"], y), (slider["x"] + slider["w"] + 60, y)),
                 f"[{round_}] a quick drag of the padding slider")
        saved = app.save()
        padding = wu.saved_mask(saved, "key_padding")
        failures.check(padding is None or np.all(padding == 1),
                       f"[{round_}] dragged past its end, the slider keeps all {L} keys: {padding}")
finally:
    app.kill()

# 3. A pan on the enlarged weights of a 160-token session, zoomed in.
L = 160
zoom = wu.Wiring(binary, session_of(L, 8, 2, causal=True), out, "pan", failures, ["--stage", "weights"])
try:
    zoom.click_widget("enlarge.weights.h0", "weights head 0 offers 'enlarge'")
    state = zoom.wait_for(lambda s: "zoom.back" in s["widgets"] and "heatmap.weights.h0" in s["widgets"],
                          "enlarged: head 0 alone")
    rect = state["widgets"]["heatmap.weights.h0"]
    x, y = int(rect["x"] + 0.5 * rect["w"]), int(rect["y"] + 0.5 * rect["h"])
    wu.xdotool("mousemove", "--window", zoom.window, x, y)
    time.sleep(0.3)
    for _ in range(4):  # 1.25^4: cells about 2.4 times as wide
        wu.xdotool("click", 4)
        time.sleep(0.15)
    zoom.wait_for(lambda s: s["widgets"]["heatmap.weights.h0"]["shown_rows"] <= 70, "the wheel zooms in")
    for round_ in range(ROUNDS):
        state = zoom.settled()
        rect = state["widgets"]["heatmap.weights.h0"]
        first_col, cell = rect["first_col"], rect["w"] / rect["shown_cols"]
        left = 1 if round_ % 2 == 0 else -1  # there and back: the view stays off the matrix's edges
        burst(zoom, (x, y), (x - left * 100, y), (x - left * 200, y))
        state = zoom.wait_for(lambda s: s["widgets"]["heatmap.weights.h0"]["first_col"] != first_col,
                              f"[{round_}] a quick drag pans")
        state = zoom.settled()
        moved = left * (state["widgets"]["heatmap.weights.h0"]["first_col"] - first_col)
        failures.check(abs(moved - 200 / cell) <= 2,
                       f"[{round_}] moved {moved} columns for 200 px of {cell:.1f} px cells")
        failures.check(state.get("pinned", "") == "", f"[{round_}] a drag pins nothing: {state.get('pinned')}")

    # 4. A click, a move and a wheel turn in one burst: the view zooms around where the pointer
    # went, not where it clicked (the wheel waits for the move, as the move waits for the click).
    rect = zoom.settled()["widgets"]["heatmap.weights.h0"]
    a, b = (x + 150, y - 100), (x - 150, y + 100)
    before = wu.matrix_point(rect, *b)
    wu.xdotool("mousemove", "--window", zoom.window, *a)
    time.sleep(0.3)
    wu.xdotool("mousedown", 1, "mouseup", 1, "mousemove", "--window", zoom.window, *b, "click", 4)
    state = zoom.wait_for(lambda s: s["widgets"]["heatmap.weights.h0"]["shown_cols"] < rect["shown_cols"],
                          "a quick click, move and wheel turn zooms in")
    zoom.away()
    after = wu.matrix_point(zoom.settled()["widgets"]["heatmap.weights.h0"], *b)
    failures.check(abs(after[0] - before[0]) < 1.5 and abs(after[1] - before[1]) < 1.5,
                   f"the point under the pointer's last place stays there: {before} -> {after}")
    zoom.screen()
finally:
    zoom.kill()
failures.finish()
