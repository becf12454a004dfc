"""Save as onto an existing file asks first (xdotool, real X input):
1. An edit, then Ctrl+Shift+S and the path of another session file: the
   question "Replace the file?" appears over the dialog; the file is untouched.
2. Cancel goes back to the dialog (still open, nothing saved, same document).
3. Save again, Replace: the file now holds the session with the edit, it is
   the document, unmodified.
4. Save as to a name that does not exist saves at once, without a question.
5. Both languages have the question's strings."""
import json
import os
import subprocess
import sys
import time

from files_test_util import App, hold_keys, user_dirs, x_matrix, xdotool
from gui_test_util import Failures, type_text

binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
root, env = user_dirs("files-overwrite")
work = os.path.join(root, "work")
os.makedirs(work)
session_path = os.path.join(work, "mine.json")
existing_path = os.path.join(work, "theirs.json")
for preset, path in (("default", session_path), ("causal-decoder", existing_path)):
    subprocess.run([binary, preset, "--frames", "2", "--save-on-exit", path],
                   check=True, timeout=60, capture_output=True, env=env)
existing_before = open(existing_path, "rb").read()
original_x = x_matrix(session_path)


def save_as(app, target):
    app.away()
    hold_keys("ctrl", "shift", "s")
    app.wait_for(lambda s: "files.dialog.name" in s["widgets"] and s["text_input"] == "yes",
                 "Ctrl+Shift+S shows the save dialog")
    hold_keys("ctrl", "a")
    type_text(target, 30)
    hold_keys("Return")


app = App(binary, [session_path], env, root, "run", failures)
try:
    app.find_window()
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "4.75")

    # 1. The question.
    save_as(app, existing_path)
    state = app.wait_for(lambda s: "files.overwrite.replace" in s["widgets"], "Save as onto theirs.json asks first")
    state = app.settled()
    failures.check("files.dialog" in state["widgets"], "the dialog stays open under the question")
    time.sleep(0.5)
    failures.check(open(existing_path, "rb").read() == existing_before, "nothing is written before the answer")

    # 2. Cancel: back to the dialog.
    app.click(state, "files.overwrite.cancel")
    state = app.wait_for(lambda s: "files.overwrite" not in s["widgets"] and "files.dialog" in s["widgets"],
                         "Cancel closes the question and keeps the dialog")
    failures.check(open(existing_path, "rb").read() == existing_before, "Cancel leaves the file as it was")
    failures.check(state.get("document") == session_path and state.get("modified") == "yes",
                   "still the same document, still modified")

    # 3. Save again (the name field still holds the path), Replace.
    app.click(app.settled(), "files.dialog.accept")
    state = app.wait_for(lambda s: "files.overwrite.replace" in s["widgets"], "Save asks again")
    app.click(app.settled(), "files.overwrite.replace")
    state = app.wait_for(lambda s: s.get("document") == existing_path and "files.dialog" not in s["widgets"],
                         "Replace saves into theirs.json and closes the dialog")
    failures.check(state.get("modified") == "no", "saved: unmodified")
    replaced_x = x_matrix(existing_path)
    failures.check(abs(replaced_x[0][0] - 4.75) < 1e-6 and replaced_x[0][1:] == original_x[0][1:],
                   f"theirs.json now holds this session with the edit: {replaced_x[0][:2]}")
    failures.check(x_matrix(session_path) == original_x, "mine.json is untouched")

    # 4. A new name: no question.
    fresh_path = os.path.join(work, "fresh.json")
    app.type_into_cell("editor.cell.0.1", "-1.5")
    save_as(app, fresh_path)
    state = app.wait_for(lambda s: s.get("document") == fresh_path and "files.dialog" not in s["widgets"],
                         "Save as to a new name saves at once")
    failures.check("files.overwrite" not in state["widgets"], "no question for a new file")
    failures.check(abs(x_matrix(fresh_path)[0][1] + 1.5) < 1e-6, "fresh.json holds the second edit")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, f"quits cleanly ({app.process.returncode})")
finally:
    app.kill()

# 5. Both languages.
for language in ("en", "zh"):
    strings = json.load(open(os.path.join(source_dir, "assets", "i18n", f"files.{language}.json")))
    for key in ("files.overwrite.title", "files.overwrite.text", "files.overwrite.replace"):
        failures.check(strings.get(key), f"{language}: {key} is translated")
    failures.check("{name}" in strings.get("files.overwrite.text", "") and
                   "{folder}" in strings.get("files.overwrite.text", ""), f"{language}: the question names the file")
failures.finish()
