"""The matrix editor on the weights, driven in the real window (xdotool), each change saved with
Ctrl+S and read back from the file, against the values it was written over (never the app's own):
1. Grouped K/V heads (d_model 16, 4 query heads, 2 K/V heads, d_k 4, W_K 16 x 8): Matrix -> W_K,
   Columns -> K/V head 1 (query heads 2-3) shows W_K's columns 4-7 and no others; typing 9.75 into
   its first cell changes W_K[0][4] alone. (The picker once listed every query head and, for
   head 3, showed and wrote columns 12-15 of an 8-column W_K: the wrong cell, and reads past it.)
2. Matrix -> W_Q keeps query head 2: columns 8-11; typing -3.25 into row 1 changes W_Q[1][9] alone.
3. Dragging a cell of W_Q changes it; one Ctrl+Z puts it back exactly (one undo step per drag);
   Ctrl+Shift+Z and Ctrl+Y redo it."""
import copy
import os
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
out = output_dir("wiring-editor")
rng = np.random.default_rng(11)
session = wu.random_session(rng, 5, 16, 4, False, num_kv_heads=2)
for name in "kv":  # W_K, W_V: (d_model, h_kv·d_k); b_K, b_V: h_kv·d_k
    session["weights"][f"w_{name}"] = wu.random_matrix(rng, 16, 8, 1.2)
    session["weights"][f"b_{name}"] = wu.random_matrix(rng, 1, 8, 0.8)[0]
original = copy.deepcopy(session["weights"])


def cell_columns(state):
    return sorted({int(name.split(".")[3]) for name in state["widgets"] if name.startswith("editor.cell.")})


def pick(app, combo, option, shows):
    """Opens a combo and clicks `option` until the editor shows the cells `shows` names."""
    for _ in range(3):
        app.click_widget(combo)
        app.wait_for(lambda s: option in s["widgets"], f"{combo} lists {option}")
        app.click(app.settled(), option)
        if app.gone(option, 3.0) and shows in app.settled()["widgets"]:
            return app.settled()
    return app.wait_for(lambda s: shows in s["widgets"], f"{option} shows {shows}")


def changed_cells(saved, expected):
    """(name, row, col) of every weight value that differs from `expected`."""
    cells = []
    for name, values in expected.items():
        if name == "layout":
            continue
        a, b = np.atleast_2d(np.array(saved["weights"][name])), np.atleast_2d(np.array(values))
        cells += [(name, int(r), int(c)) for r, c in zip(*np.nonzero(a != b))]
    return cells


app = wu.Wiring(binary, session, out, "editor", failures)
try:
    app.click_widget("tab.matrices")
    app.wait_for(lambda s: "editor.cell.0.0" in s["widgets"], "the matrix editor")

    # 1. W_K, K/V head 1.
    pick(app, "editor.matrix", "editor.matrix.w_k", "editor.slice")
    state = pick(app, "editor.slice", "editor.slice.1", "editor.cell.0.4")
    failures.check(cell_columns(state) == [4, 5, 6, 7], f"W_K, K/V head 1: columns 4-7 shown: {cell_columns(state)}")
    app.edit(lambda: app.type_into_cell("editor.cell.0.4", "9.75"), "typing into W_K[0][4]")
    saved = app.save()
    expected = copy.deepcopy(original)
    expected["w_k"][0][4] = 9.75
    failures.check(changed_cells(saved, original) == [("w_k", 0, 4)] and saved["weights"]["w_k"][0][4] == 9.75,
                   f"typing into W_K head 1's first cell changes W_K[0][4] alone: {changed_cells(saved, original)}")

    # 2. W_Q, the same slice: query head 2.
    state = pick(app, "editor.matrix", "editor.matrix.w_q", "editor.cell.0.8")
    failures.check(cell_columns(state) == [8, 9, 10, 11], f"W_Q keeps query head 2: columns 8-11: {cell_columns(state)}")
    app.edit(lambda: app.type_into_cell("editor.cell.1.9", "-3.25"), "typing into W_Q[1][9]")
    saved = app.save()
    expected["w_q"][1][9] = -3.25
    failures.check(changed_cells(saved, expected) == [] and saved["weights"]["w_q"][1][9] == -3.25,
                   f"W_Q[1][9] = -3.25 and nothing else moved: {changed_cells(saved, expected)}")

    # 3. One drag, one undo step; redo both ways.
    x, y = app.centre(app.settled(), "editor.cell.2.10")
    revision = int(app.settled()["revision"])
    wu.xdotool("mousemove", "--window", app.window, x, y)
    time.sleep(0.2)
    wu.xdotool("mousedown", 1)
    for step in range(1, 9):  # several frames of dragging: several edits merged into one
        time.sleep(0.08)
        wu.xdotool("mousemove", "--window", app.window, x + 10 * step, y)
    time.sleep(0.2)
    wu.xdotool("mouseup", 1)
    app.wait_for(lambda s: int(s["revision"]) > revision, "dragging W_Q[2][10] edits it")
    dragged = app.save()
    failures.check(changed_cells(dragged, expected) == [("w_q", 2, 10)],
                   f"the drag changes W_Q[2][10] alone: {changed_cells(dragged, expected)}")
    for keys, what, want in ((("ctrl", "z"), "one Ctrl+Z", expected["w_q"][2][10]),
                             (("ctrl", "shift", "z"), "Ctrl+Shift+Z", dragged["weights"]["w_q"][2][10]),
                             (("ctrl", "z"), "Ctrl+Z again", expected["w_q"][2][10]),
                             (("ctrl", "y"), "Ctrl+Y", dragged["weights"]["w_q"][2][10])):
        revision = app.settled()["revision"]
        app.away()
        wu.hold_keys(*keys)
        app.wait_for(lambda s: s["revision"] != revision, f"{what} moves the session")
        saved = app.save()
        failures.check(saved["weights"]["w_q"][2][10] == want and changed_cells(saved, expected) in ([], [("w_q", 2, 10)]),
                       f"after {what} W_Q[2][10] is {want}: {saved['weights']['w_q'][2][10]}")
finally:
    app.kill()
failures.finish()
