"""Open, edit, save, quit, with real X input (xdotool):
1. Ctrl+O and a path typed into the file dialog opens a session file.
2. Typing into a cell marks the session modified: the window title starts with "• ".
3. Ctrl+S writes the file (it parses and holds the typed value); the marker goes.
4. A second edit, then Ctrl+Q asks first; "Don't save" quits, and the file on
   disk keeps the saved value, the recovery file is gone, the settings list the
   file among the recent ones, and the folder the dialog last opened from.
5. Save as into a place that cannot be written (a folder that is a file, and a
   read-only folder when not root) shows the reason, and the session stays
   open and modified; so does Ctrl+S once its own file is read-only.
6. The next run, started without a file, opens its file dialog in that folder."""
import json
import os
import stat
import subprocess
import sys
import time

from files_test_util import App, hold_keys, recovery_path, settings_path, user_dirs, x_matrix, xdotool
from gui_test_util import Failures, type_text

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-save-open")
work = os.path.join(root, "work")
os.makedirs(work)
session_path = os.path.join(work, "lesson.json")
# The default preset as a file of its own.
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", session_path],
               check=True, timeout=60, capture_output=True, env=env)
original_x = x_matrix(session_path)

app = App(binary, ["default"], env, root, "run", failures)
try:
    app.find_window()
    failures.check(not app.title().startswith("•"), f"no marker before any edit: {app.title()!r}")

    # 1. Open through the dialog.
    app.open_file_with_dialog(session_path)
    title = app.settled_title("lesson.json — Attention Lab")
    failures.check(title == "lesson.json — Attention Lab", f"title names the file: {title!r}")

    # 2. An edit: the marker.
    app.open_matrices_tab()
    state = app.type_into_cell("editor.cell.0.0", "1.25")
    failures.check(state.get("modified") == "yes", "an edit marks the session modified")
    time.sleep(0.3)
    title = app.settled_title("• lesson.json — Attention Lab")
    failures.check(title == "• lesson.json — Attention Lab", f"unsaved marker in the title: {title!r}")

    # 3. Ctrl+S.
    app.away()
    hold_keys("ctrl", "s")
    app.wait_for(lambda s: s.get("modified") == "no", "Ctrl+S saves")
    time.sleep(0.3)
    saved_x = x_matrix(session_path)
    failures.check(abs(saved_x[0][0] - 1.25) < 1e-6, f"the file holds the typed 1.25, got {saved_x[0][0]}")
    failures.check(saved_x[1:] == original_x[1:] and saved_x[0][1:] == original_x[0][1:],
                   "every other value of X is as it was")
    title = app.settled_title("lesson.json — Attention Lab")
    failures.check(title == "lesson.json — Attention Lab", f"no marker after saving: {title!r}")
    failures.check(not [n for n in os.listdir(work) if n.startswith(".")], "no temporary file left behind")

    # 5. An unwritable place: Save as into a "folder" that is a file.
    app.type_into_cell("editor.cell.0.1", "-3.5")
    blocker = os.path.join(work, "not-a-folder.txt")
    open(blocker, "w").write("a file, not a folder\n")
    bad_targets = [os.path.join(blocker, "copy.json")]
    if os.geteuid() != 0:  # root writes anywhere
        locked = os.path.join(root, "locked")
        os.makedirs(locked)
        os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
        bad_targets.append(os.path.join(locked, "copy.json"))
    for target in bad_targets:
        app.away()
        hold_keys("ctrl", "shift", "s")
        state = app.wait_for(lambda s: "files.dialog.name" in s["widgets"] and s["text_input"] == "yes",
                             "Ctrl+Shift+S shows the save dialog")
        hold_keys("ctrl", "a")
        type_text(target, 30)
        hold_keys("Return")
        state = app.wait_for(lambda s: s.get("file_dialog_error"), f"saving to {target} shows why it failed")
        message = state.get("file_dialog_error", "")
        failures.check("not saved" in message and "cannot save" in message,
                       f"the message says the session was not saved and why: {message!r}")
        failures.check(state.get("modified") == "yes", "the session is still modified after the failed save")
        failures.check(state.get("document") == session_path, "still the same document")
        app.click(app.settled(), "files.dialog.cancel")
        app.wait_for(lambda s: "files.dialog" not in s["widgets"], "Cancel closes the dialog")
    failures.check(app.title().startswith("• "), f"still marked unsaved: {app.title()!r}")

    # The session's own file made read-only (a handout): Ctrl+S says so and leaves it as it was.
    on_disk = open(session_path, "rb").read()
    os.chmod(session_path, 0o444)
    app.away()
    hold_keys("ctrl", "s")
    state = app.wait_for(lambda s: "files.message.ok" in s["widgets"], "Ctrl+S onto a read-only file shows why")
    message = state.get("file_message", "")
    failures.check("not saved" in message and "read-only" in message and session_path in message,
                   f"the message names the file and says it is read-only: {message!r}")
    failures.check(open(session_path, "rb").read() == on_disk, "the read-only file is unchanged")
    failures.check(state.get("modified") == "yes", "the session is still modified after the refused save")
    app.click(state, "files.message.ok")
    app.wait_for(lambda s: "files.message.ok" not in s["widgets"], "OK closes the message")
    os.chmod(session_path, 0o644)

    # 4. Quit asks first; Don't save.
    app.away()
    hold_keys("ctrl", "q")
    state = app.wait_for(lambda s: "files.confirm.discard" in s["widgets"], "Ctrl+Q asks about unsaved changes")
    state = app.settled()
    failures.check(app.process.poll() is None, "the app waits for the answer")
    app.click(state, "files.confirm.discard")
    failures.check(app.wait_exit() == 0, f"Don't save quits cleanly ({app.process.returncode})")
finally:
    app.kill()

after_x = x_matrix(session_path)
failures.check(abs(after_x[0][0] - 1.25) < 1e-6 and after_x[0][1] == original_x[0][1],
               f"the file keeps the saved edit, not the discarded one: {after_x[0][:2]}")
failures.check(not os.path.exists(recovery_path(env)), "a clean exit removes the recovery file")
settings = json.load(open(settings_path(env)))
failures.check(settings.get("recent_files", [None])[0] == session_path,
               f"the file is the most recent one in the settings: {settings.get('recent_files')}")
failures.check(settings.get("language") == "en", f"the language is remembered: {settings.get('language')}")
failures.check(settings.get("last_folder") == work,
               f"the dialog's last folder (that of the opened file) is remembered: {settings.get('last_folder')!r}")

# 6. A new run on a preset (its own folder would be the working directory): the dialog starts in the remembered one.
app = App(binary, ["default"], env, root, "rerun", failures)
try:
    app.find_window()
    app.away()
    hold_keys("ctrl", "o")
    state = app.wait_for(lambda s: "files.dialog.name" in s["widgets"], "Ctrl+O shows the file dialog")
    failures.check(state.get("file_dialog_folder") == work,
                   f"the dialog opens in the last folder {work!r}: {state.get('file_dialog_folder')!r}")
finally:
    app.kill()
failures.check(not os.path.exists(recovery_path(env)), "no recovery file left: nothing was edited")
failures.finish()
