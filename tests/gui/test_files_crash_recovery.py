"""A crash in the middle of a save loses nothing.
Run 1: open a session file, type a value into a cell, wait for the autosave
(the recovery file appears), press Ctrl+S with the atomic writer paused between
the complete temporary file and the rename (ATTENTION_LAB_TEST_SAVE_PAUSE_MS),
and SIGKILL the app while it waits there.
Expected: the session file is byte for byte the one before the save.
Run 2, same XDG folders: the app offers the recovery; Restore brings the edit
back (marked unsaved, from the same file); the session written on exit holds
the edit; a clean exit removes the recovery file.
Run 3: the same recovery file with a lesson or a lab open at start: the app
runs and asks.
Run 4: a recovery file whose session has heads not dividing d_model (a learner
in the middle of fixing sizes): Restore brings it back as it was, with the
heads error on screen, editable and saved as it is."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

from files_test_util import App, hold_keys, recovery_path, user_dirs, x_matrix
from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-crash")
work = os.path.join(root, "work")
os.makedirs(work)
session_path = os.path.join(work, "crash.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", session_path],
               check=True, timeout=60, capture_output=True, env=env)
before = open(session_path, "rb").read()
original_x = x_matrix(session_path)

paused_env = dict(env, ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME=session_path)
app = App(binary, [session_path], paused_env, root, "run1", failures)
try:
    app.find_window()
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "7.5")
    # The autosave writes the recovery file a few seconds after the edit.
    deadline = time.time() + 20
    while time.time() < deadline and not os.path.exists(recovery_path(env)):
        time.sleep(0.1)
    failures.check(os.path.exists(recovery_path(env)), "the autosave writes the recovery file after an edit")
    recovery = json.load(open(recovery_path(env)))
    failures.check(recovery.get("original_path") == session_path, "the recovery file names the session's file")

    # Ctrl+S, and a kill while the new version sits complete in its temporary file.
    app.away()
    hold_keys("ctrl", "s")
    deadline = time.time() + 20
    temporary = []
    while time.time() < deadline and not temporary:
        temporary = glob.glob(os.path.join(work, ".crash.json.tmp-*"))
        time.sleep(0.05)
    failures.check(temporary, "the save writes a temporary file next to the session")
    if temporary:
        failures.check(b"7.5" in open(temporary[0], "rb").read(), "the temporary file holds the new version")
    os.kill(app.process.pid, signal.SIGKILL)
    app.process.wait(timeout=10)
    failures.check(app.process.returncode == -signal.SIGKILL, f"killed: {app.process.returncode}")
finally:
    app.kill()

failures.check(open(session_path, "rb").read() == before, "the session file is exactly the one before the save")
json.load(open(session_path))  # and it parses
failures.check(os.path.exists(recovery_path(env)), "the recovery file survives the crash")
crashed_recovery = open(recovery_path(env), "rb").read()

# Run 2: the recovery prompt.
saved_on_exit = os.path.join(root, "on-exit.json")
app = App(binary, [session_path, "--save-on-exit", saved_on_exit], env, root, "run2", failures)
try:
    state = app.wait_for(lambda s: "files.recovery.restore" in s["widgets"], "the start offers to restore", 30)
    app.find_window()
    state = app.settled()
    failures.check(state.get("modified") == "no", "nothing restored before the answer")
    app.click(state, "files.recovery.restore")
    state = app.wait_for(lambda s: s.get("modified") == "yes" and "files.recovery" not in s["widgets"],
                         "Restore brings the edits back as unsaved changes")
    failures.check(state.get("document") == session_path, "restored into the file it came from")
    time.sleep(0.3)
    title = app.settled_title("• crash.json — Attention Lab")
    failures.check(title == "• crash.json — Attention Lab", f"marked unsaved: {title!r}")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, f"quits cleanly ({app.process.returncode})")
finally:
    app.kill()

restored_x = x_matrix(saved_on_exit)
failures.check(abs(restored_x[0][0] - 7.5) < 1e-6, f"the restored session has the typed 7.5: {restored_x[0][0]}")
failures.check(restored_x[0][1:] == original_x[0][1:] and restored_x[1:] == original_x[1:],
               "the rest of X is the file's")
failures.check(open(session_path, "rb").read() == before, "restoring does not write the session file by itself")
failures.check(not os.path.exists(recovery_path(env)), "a clean exit removes the recovery file")

# Run 3: the recovery question at start-up with a lesson or a lab open too
# (ImGui 1.86 asserted when a window appeared after a modal begun that frame).
for window_args, window_widget in ((["--lesson", "1"], "lesson.window"), (["--open", "flash"], "flash_lab.window")):
    with open(recovery_path(env), "wb") as recovery_file:
        recovery_file.write(crashed_recovery)
    widgets_path = os.path.join(root, "run3-" + window_widget + ".json")
    result = subprocess.run([binary, *window_args, "--frames", "8", "--widgets-out", widgets_path],
                            capture_output=True, text=True, timeout=60, env=env)
    failures.check(result.returncode == 0, f"{window_args}: runs under the recovery question "
                                           f"(exit {result.returncode}): {result.stderr}")
    widgets = json.load(open(widgets_path))["widgets"] if os.path.exists(widgets_path) else {}
    failures.check("files.recovery.restore" in widgets and window_widget in widgets,
                   f"{window_args}: the recovery question and {window_widget} are both shown")
    failures.check(open(recovery_path(env), "rb").read() == crashed_recovery,
                   f"{window_args}: the unanswered recovery file is kept")

# Run 4: an unfit session in the recovery file.
unfit_recovery = json.loads(crashed_recovery)
d_model = unfit_recovery["session"]["config"]["d_model"]
heads = next(h for h in range(2, d_model) if d_model % h)
unfit_recovery["session"]["config"]["num_heads"] = heads
with open(recovery_path(env), "w") as recovery_file:
    json.dump(unfit_recovery, recovery_file)
saved_unfit = os.path.join(root, "unfit-on-exit.json")
app = App(binary, [session_path, "--save-on-exit", saved_unfit], env, root, "run4", failures)
try:
    app.wait_for(lambda s: "files.recovery.restore" in s["widgets"], "the start offers the unfit session", 30)
    app.find_window()
    state = app.settled()
    failures.check(state.get("error") == "", f"the file opened first fits: {state.get('error')!r}")
    app.click(state, "files.recovery.restore")
    state = app.wait_for(lambda s: s.get("modified") == "yes" and "files.recovery" not in s["widgets"],
                         "Restore brings the unfit session back")
    failures.check(state.get("error") == "heads_do_not_divide",
                   f"the heads error is shown after restoring: {state.get('error')!r}")
    failures.check(state.get("document") == session_path, "restored into the file it came from")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, f"quits cleanly ({app.process.returncode})")
finally:
    app.kill()
if os.path.exists(saved_unfit):
    kept = json.load(open(saved_unfit))
    failures.check(kept["config"]["num_heads"] == heads, f"the restored head count {heads} is kept, editable")
    failures.check(abs(x_matrix(saved_unfit)[0][0] - 7.5) < 1e-6, "with the edit of the crashed run")
else:
    failures.check(False, "the restored session is saved on exit")

# Run 5: Discard drops the recovered edits for good: the recovery file goes, the session file is
# untouched, and the next start asks nothing.
with open(recovery_path(env), "wb") as recovery_file:
    recovery_file.write(crashed_recovery)
session_before = open(session_path, "rb").read()
app = App(binary, [session_path], env, root, "run5", failures)
try:
    state = app.wait_for(lambda s: "files.recovery.discard" in s["widgets"], "the start offers the recovery", 30)
    app.find_window()
    app.click(app.settled(), "files.recovery.discard")
    state = app.wait_for(lambda s: "files.recovery" not in s["widgets"], "Discard closes the question")
    failures.check(state.get("modified") == "no" and state.get("document") == session_path,
                   f"after Discard the file is open as it was: modified {state.get('modified')}")
    failures.check(not os.path.exists(recovery_path(env)), "Discard removes the recovery file")
finally:
    app.kill()
failures.check(open(session_path, "rb").read() == session_before, "Discard leaves the session file as it was")
widgets_path = os.path.join(root, "run5-again.json")
subprocess.run([binary, session_path, "--frames", "6", "--widgets-out", widgets_path], capture_output=True,
               timeout=60, env=env)
failures.check("files.recovery.restore" not in json.load(open(widgets_path))["widgets"],
               "the next start asks nothing")
failures.finish()
