"""An example picked over unsaved work never lands in the learner's file (xdotool, real X input).
Both ways a learner picks one: Examples > causal-decoder, and Labs > Lessons (lesson 1's example).
1. Open mine.json, type 9.5 into X[0][0], pick the example: the title names the example.
2. Ctrl+S asks where (the save dialog opens); mine.json is byte for byte what it was.
3. Esc closes the dialog; Ctrl+Z brings the work back, and Save as writes it: X[0][0] = 9.5.
Before the fix Ctrl+S wrote the example over mine.json without a word."""
import os
import sys

from files_test_util import App, hold_keys, save_preset, user_dirs, x_matrix
from gui_test_util import Failures, type_text

binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
root, env = user_dirs("files-example-over-work")
mine = os.path.join(root, "mine.json")
mine_before = save_preset(binary, "default", mine, env)
x_before = x_matrix(mine)
failures.check(x_before[0][0] != 9.5, f"default's X[0][0] is not already 9.5: {x_before[0][0]}")


def pick_example(app, way):
    if way == "examples":
        app.click(app.settled(), "menu.examples")
        app.wait_for(lambda s: "examples.causal-decoder" in s["widgets"], "the Examples menu lists causal-decoder")
        app.click(app.settled(), "examples.causal-decoder")
    else:
        app.click(app.settled(), "menu.labs")
        app.wait_for(lambda s: "menu.labs.lessons" in s["widgets"], "the Labs menu lists the lessons")
        app.click(app.settled(), "menu.labs.lessons")
    return app.wait_for(lambda s: s.get("document") not in (None, mine), f"{way}: the example becomes the document")


for way in ("examples", "lessons"):
    app = App(binary, [mine], env, root, way, failures)
    try:
        app.find_window()
        app.open_matrices_tab()
        app.type_into_cell("editor.cell.0.0", "9.5")
        state = pick_example(app, way)
        example = state.get("document")
        failures.check(state.get("modified") == "yes", f"{way}: the example over unsaved work is an unsaved edit")

        app.away()
        hold_keys("ctrl", "s")
        state = app.wait_for(lambda s: "files.dialog.name" in s["widgets"], f"{way}: Ctrl+S asks where to save")
        failures.check(open(mine, "rb").read() == mine_before, f"{way}: mine.json is untouched after Ctrl+S")
        failures.check(state.get("document") == example, f"{way}: the document is still {example}: {state.get('document')}")

        hold_keys("Escape")
        app.wait_for(lambda s: "files.dialog" not in s["widgets"], f"{way}: Esc closes the save dialog")
        failures.check(open(mine, "rb").read() == mine_before, f"{way}: mine.json is untouched after Esc")

        # The work is one undo away, and Save as keeps it.
        revision = app.settled()["revision"]
        app.away()
        hold_keys("ctrl", "z")
        app.wait_for(lambda s: s["revision"] != revision, f"{way}: Ctrl+Z undoes the example")
        kept = os.path.join(root, f"kept-{way}.json")
        hold_keys("ctrl", "shift", "s")
        app.wait_for(lambda s: "files.dialog.name" in s["widgets"] and s["text_input"] == "yes",
                     f"{way}: Ctrl+Shift+S shows the save dialog")
        hold_keys("ctrl", "a")
        type_text(kept, 30)
        hold_keys("Return")
        app.wait_for(lambda s: os.path.exists(kept) and s.get("modified") == "no", f"{way}: Save as writes {kept}")
        if os.path.exists(kept):
            x_kept = x_matrix(kept)
            failures.check(x_kept[0][0] == 9.5 and x_kept[1:] == x_before[1:],
                           f"{way}: the saved work is the learner's X with 9.5 at [0][0]: {x_kept[0][:3]}")
    finally:
        app.kill()
failures.check(open(mine, "rb").read() == mine_before, "mine.json is untouched at the end")
failures.finish()
