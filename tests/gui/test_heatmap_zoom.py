"""One heatmap enlarged, zoomed and panned with the real mouse (xdotool), on a 160-token
causal session: "enlarge" fills the panel with weights head 0; the wheel zooms in around
the pointer (the matrix point under it stays under it); the cells then on screen have the
colours of a float64 PyTorch computation of the session (hatching where causal masks);
the tooltip names the cell under the pointer with its value; a drag moves the view without
pinning; a click that does not move pins that cell; a double-click shows the whole matrix;
Esc goes back to every head. The Chinese window is checked to show the same controls."""
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("heatmap-zoom")
failures = Failures()
rng = np.random.default_rng(31)
L, D, H = 160, 8, 2


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(3).tolist()


session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": D, "num_heads": H, "bias": False,
               "scale": "sqrt_dk", "mask": {"causal": True}, "mask_fill": "-inf",
               "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "x": [matrix(L, D)],
    "weights": {"layout": "math", **{f"w_{n}": matrix(D, D, 1.5) for n in "qkvo"}},
}
weights = wu.session_stages(session)["weights"][0, 0]  # (L, L), head 0, float64
masked = wu.masked_cells(session, 1, L, L)[0]


def heatmap(state):
    return state["widgets"].get("heatmap.weights.h0")


def shown_part(rect):
    """The rectangle of the cells on screen, as check_heatmap reads it, and their slice."""
    r0, c0, rows, cols = (int(rect[k]) for k in ("first_row", "first_col", "shown_rows", "shown_cols"))
    return {**rect, "rows": rows, "cols": cols}, (slice(r0, r0 + rows), slice(c0, c0 + cols))


def move(x, y):
    wu.xdotool("mousemove", "--window", app.window, int(x), int(y))
    time.sleep(0.25)


app = wu.Wiring(binary, session, out, "zoom", failures, ["--stage", "weights"])
try:
    app.click_widget("enlarge.weights.h0", "weights head 0 offers 'enlarge'")
    state = app.wait_for(lambda s: "zoom.back" in s["widgets"] and heatmap(s) and "heatmap.weights.h1" not in s["widgets"],
                         "enlarged: head 0 alone with the way back")
    rect = heatmap(state)
    failures.check(rect and (rect["shown_rows"], rect["shown_cols"]) == (L, L), f"the whole {L}x{L} matrix first: {rect}")
    failures.check(rect and rect["h"] > 500, f"it fills the panel (height {rect and rect['h']})")

    # Four wheel steps up over a point a third of the way in: 1.25^4 = 2.44 times closer.
    x, y = rect["x"] + 0.3 * rect["w"], rect["y"] + 0.6 * rect["h"]
    before = wu.matrix_point(rect, x, y)
    move(x, y)
    for _ in range(4):
        wu.xdotool("click", 4)
        time.sleep(0.15)
    state = app.wait_for(lambda s: heatmap(s)["shown_rows"] <= 70, "the wheel zooms in")
    app.away()
    state = app.settled()
    rect = heatmap(state)
    after = wu.matrix_point(rect, x, y)
    failures.check(abs(after[0] - before[0]) < 1.5 and abs(after[1] - before[1]) < 1.5,
                   f"the point under the pointer stays: {before} -> {after}")

    state, pixels = app.screen()
    rect = heatmap(state)
    part, (rows, cols) = shown_part(rect)
    failures.check(part["w"] / part["cols"] >= 8, f"cells are large enough to read ({part['w'] / part['cols']:.1f} px)")
    wu.check_heatmap(failures, "zoomed", {"widgets": {"heatmap.weights.h0": part}}, pixels, "weights.h0",
                     weights[rows, cols], (0.0, 1.0), masked=masked[rows, cols])

    # The tooltip of a cell below the diagonal names it, with the reference value.
    r, c = rows.start + part["rows"] - 3, cols.start + 2
    move(*wu.cell_centre(part, r - rows.start, c - cols.start))
    state = app.wait_for(lambda s: f"[{r}, {c}] =" in s.get("tooltip", ""), f"the tooltip names cell ({r}, {c})")
    got = float(state.get("tooltip", "= nan").rsplit("=", 1)[1])
    failures.check(abs(got - weights[r, c]) < 1e-4, f"tooltip value {got} vs reference {weights[r, c]:.6f}")

    # A drag of 200 pixels to the left shows columns further right, and pins nothing.
    first_col = rect["first_col"]
    move(x, y)
    wu.xdotool("mousedown", 1)
    time.sleep(0.2)
    for step in range(1, 6):
        move(x - 40 * step, y)
    wu.xdotool("mouseup", 1)
    time.sleep(0.3)
    cell = part["w"] / part["cols"]
    app.wait_for(lambda s: heatmap(s)["first_col"] > first_col, "a drag to the left moves the view right")
    state = app.settled()
    moved = heatmap(state)["first_col"] - first_col
    failures.check(abs(moved - 200 / cell) <= 2, f"moved {moved} columns for 200 px of {cell:.1f} px cells")
    failures.check(state.get("pinned", "") == "", f"a drag pins nothing: {state.get('pinned')}")

    # A click that does not move pins the cell under it, in whole-matrix indices.
    rect = heatmap(state)
    part, (rows, cols) = shown_part(rect)
    r, c = rows.start + part["rows"] // 2, cols.start + 1
    app.click_at(*wu.cell_centre(part, r - rows.start, c - cols.start))
    app.wait_for(lambda s: s.get("pinned") == f"weights.h0:{r}:{c}", f"a click pins ({r}, {c})")

    wu.xdotool("click", "--repeat", 2, "--delay", 80, 1)
    app.wait_for(lambda s: heatmap(s)["shown_rows"] == L, "a double-click shows the whole matrix again")
    app.away()
    wu.hold_keys("Escape")
    app.wait_for(lambda s: "zoom.back" not in s["widgets"] and "heatmap.weights.h1" in s["widgets"],
                 "Esc: every head again")
finally:
    app.kill()

zh = wu.Wiring(binary, session, out, "zoom-zh", failures, ["--stage", "weights"], lang="zh")
try:
    zh.click_widget("enlarge.weights.h0", "中文: 'enlarge' is there")
    zh.wait_for(lambda s: "zoom.back" in s["widgets"], "中文: enlarged")
    zh.screen()
finally:
    zh.kill()
failures.finish()
