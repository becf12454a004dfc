"""The diff window as a learner uses it (xdotool): take a snapshot, edit, read how far the edit travelled.
Seed 003 (direct mode: Q, K, V of 5 x 2 given, one head). With the diff window open:
1. Take snapshot: every stage reads 0 changed cells.
2. V[1][1] typed as 2.5 in the matrix editor: V has 1 changed cell, the context 5 (column 1 of every
   row: each row's context sums α_i1·v_1), Q, K and the scores to the weights none, as by hand.
3. A second edit (V[0][0]) is compared with the same snapshot: V 2 cells, the context all 10 (every α_i0 > 0).
4. Clear: the window says there is no snapshot again."""
import sys

from files_test_util import App, user_dirs
from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("diff-snapshot")


def changed(state, stage):
    return state.get(f"diff.changed.{stage}")


app = App(binary, ["seed-003-example", "--open", "diff"], env, root, "run", failures)
try:
    app.find_window()
    state = app.wait_for(lambda s: "diff.snapshot" in s["widgets"], "the diff window")
    failures.check("diff.changed.v" not in state, "no snapshot yet: no counts")
    app.click(state, "diff.snapshot")
    state = app.wait_for(lambda s: changed(s, "v") is not None, "Take snapshot shows the counts")
    failures.check(all(changed(state, stage) == "0" for stage in ("q", "k", "v", "scores", "weights", "context")),
                   f"right after the snapshot nothing changed: {[changed(state, s) for s in ('q', 'k', 'v', 'context')]}")

    app.open_matrices_tab()
    app.click(app.settled(), "editor.matrix")
    app.wait_for(lambda s: "editor.matrix.v" in s["widgets"], "the Matrix list offers V")
    app.click(app.settled(), "editor.matrix.v")
    app.wait_for(lambda s: "editor.cell.1.1" in s["widgets"] and "editor.matrix.v" not in s["widgets"], "V in the editor")
    app.type_into_cell("editor.cell.1.1", "2.5")
    state = app.wait_for(lambda s: changed(s, "v") == "1", "one cell of V changed")
    for stage in ("q", "k", "scores", "scaled", "masked", "weights"):
        failures.check(changed(state, stage) == "0", f"{stage}: unchanged by an edit of V, got {changed(state, stage)}")
    failures.check(changed(state, "context") == "5", f"column 1 of every context row changed: {changed(state, 'context')}")

    app.type_into_cell("editor.cell.0.0", "-1.25")
    state = app.wait_for(lambda s: changed(s, "v") == "2", "a second edit: two cells of V differ from the snapshot")
    # Every α_i0 is at least 0.12 here (softmax of seed 003's scores, no mask): column 0 moves in every row too.
    failures.check(changed(state, "context") == "10" and changed(state, "weights") == "0",
                   f"both context columns changed in every row, the weights in none: {changed(state, 'context')}")

    app.click(app.settled(), "diff.clear")
    state = app.wait_for(lambda s: changed(s, "v") is None, "Clear drops the snapshot and its counts")
    failures.check("diff.clear" not in state["widgets"] and "diff.snapshot" in state["widgets"],
                   "after Clear only Take snapshot is offered")
finally:
    app.kill()
failures.finish()
