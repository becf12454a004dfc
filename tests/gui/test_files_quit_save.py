"""Quitting with unsaved work keeps it whichever way the learner answers (xdotool, real X input):
1. A file, an edit, Ctrl+Q: "Save changes?". Esc and then Cancel keep the app running, the edit
   unsaved and the file as it was.
2. Ctrl+Q again, Save: the edit is written to the file and the app exits 0.
3. An example (no file yet), an edit, Ctrl+Q, Save: the save dialog asks where; a name and Enter
   write the session there and the app exits 0.
4. The same with Esc in that save dialog: nothing is written and the app keeps running, the edit kept."""
import os
import sys

from files_test_util import App, hold_keys, save_preset, user_dirs, x_matrix
from gui_test_util import Failures, type_text

binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
root, env = user_dirs("files-quit-save")
mine = os.path.join(root, "mine.json")
mine_before = save_preset(binary, "default", mine, env)


def quit_asks(app, what):
    app.away()
    hold_keys("ctrl", "q")
    return app.wait_for(lambda s: "files.confirm.save" in s["widgets"], f"{what}: Ctrl+Q asks about unsaved changes")


# 1 and 2: a file.
app = App(binary, [mine], env, root, "file", failures)
try:
    app.find_window()
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "6.25")
    quit_asks(app, "file")
    hold_keys("Escape")
    app.wait_for(lambda s: "files.confirm.save" not in s["widgets"], "Esc closes the question")
    failures.check(app.process.poll() is None, "Esc: the app keeps running")
    state = quit_asks(app, "file, again")
    app.click(state, "files.confirm.cancel")
    state = app.wait_for(lambda s: "files.confirm.save" not in s["widgets"], "Cancel closes the question")
    failures.check(app.process.poll() is None and state.get("modified") == "yes",
                   f"Cancel: the app keeps running, the edit unsaved: {state.get('modified')}")
    failures.check(open(mine, "rb").read() == mine_before, "Esc and Cancel leave the file as it was")
    state = quit_asks(app, "file, a third time")
    app.click(state, "files.confirm.save")
    failures.check(app.wait_exit() == 0, "Save, then the app quits with exit 0")
    failures.check(x_matrix(mine)[0][0] == 6.25, f"Save wrote the edit: X[0][0] = {x_matrix(mine)[0][0]}")
finally:
    app.kill()

# 3 and 4: an example has no file: Save asks where.
for answer in ("escape", "name"):
    target = os.path.join(root, f"new-{answer}.json")
    app = App(binary, ["default"], env, root, f"example-{answer}", failures)
    try:
        app.find_window()
        app.open_matrices_tab()
        app.type_into_cell("editor.cell.0.1", "-2.5")
        state = quit_asks(app, f"example ({answer})")
        app.click(state, "files.confirm.save")
        # The name field takes the keyboard as the dialog opens (its text selected); opened from the
        # question, the widget file's text_input fact can lag behind it, so typing starts once it is shown.
        app.wait_for(lambda s: "files.dialog.name" in s["widgets"], f"example ({answer}): Save asks where")
        if answer == "escape":
            hold_keys("Escape")
            state = app.wait_for(lambda s: "files.dialog" not in s["widgets"], "Esc closes the save dialog")
            failures.check(app.process.poll() is None and state.get("modified") == "yes",
                           "Esc in the save dialog: the app keeps running with the edit")
            failures.check(not os.path.exists(target), "nothing was written")
        else:
            hold_keys("ctrl", "a")
            type_text(target, 30)
            hold_keys("Return")
            failures.check(app.wait_exit() == 0, "the named save quits with exit 0")
            failures.check(os.path.exists(target) and x_matrix(target)[0][1] == -2.5,
                           f"the session with its edit is in {target}")
    finally:
        app.kill()
failures.finish()
