"""The autosave writes the recovery file off the UI thread.
Every write of the recovery file is held for PAUSE seconds between its
complete temporary file and the rename (ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME /
_SECONDS, as a stuck disk would). While one is held:
1. a new edit goes through at once (the frames keep coming);
2. once the held write lands, the newest edit follows it into the recovery file;
3. Ctrl+Q during a held write waits for it (joined cleanly), exits 0, and the
   clean exit leaves neither the recovery file nor a temporary file.
4. A write that fails (the state folder is a file) is shown in the status bar;
   once the folder can be written, the retry succeeds and the notice goes."""
import glob
import json
import os
import subprocess
import sys
import time

from files_test_util import App, hold_keys, recovery_path, user_dirs, x_matrix
from gui_test_util import Failures

PAUSE = 8
binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-autosave-thread")
work = os.path.join(root, "work")
os.makedirs(work)
session_path = os.path.join(work, "slow.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", session_path],
               check=True, timeout=60, capture_output=True, env=env)
recovery = recovery_path(env)
held_env = dict(env, ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME=recovery, ATTENTION_LAB_TEST_PAUSE_SECONDS=str(PAUSE))


def held_writes():
    return glob.glob(os.path.join(os.path.dirname(recovery), ".recovery.json.tmp-*"))


def wait_for_held_write(what):
    deadline = time.time() + 20
    while time.time() < deadline and not held_writes():
        time.sleep(0.05)
    failures.check(held_writes(), what)
    return time.time()


def recovery_x():
    try:
        session = json.load(open(recovery))["session"]
    except (OSError, ValueError, KeyError):
        return None
    x = session["x"]
    return x[0] if isinstance(x[0][0], list) else x


saved_on_exit = os.path.join(root, "on-exit.json")
app = App(binary, [session_path, "--save-on-exit", saved_on_exit], held_env, root, "run", failures)
try:
    app.find_window()
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "7.5")
    held_since = wait_for_held_write("the autosave starts writing a few seconds after the edit")

    # 1. An edit while the write is held.
    state = app.type_into_cell("editor.cell.0.1", "2.25")
    edited_after = time.time() - held_since
    failures.check(state.get("modified") == "yes", "the edit went through")
    failures.check(edited_after < PAUSE - 1, f"while the write was still held ({edited_after:.1f} s of {PAUSE})")
    failures.check(not os.path.exists(recovery), "the held write had not landed yet")

    # 2. The held write lands, then the newest edit follows.
    deadline = time.time() + 3 * PAUSE + 20
    while time.time() < deadline and not (recovery_x() and abs(recovery_x()[0][1] - 2.25) < 1e-6):
        time.sleep(0.2)
    x = recovery_x()
    failures.check(x is not None and abs(x[0][0] - 7.5) < 1e-6 and abs(x[0][1] - 2.25) < 1e-6,
                   f"the recovery file ends with both edits: {x[0][:2] if x else None}")
    deadline = time.time() + 10
    while time.time() < deadline and held_writes():
        time.sleep(0.1)

    # 3. Quit in the middle of a held write.
    app.type_into_cell("editor.cell.0.2", "-6.0")
    wait_for_held_write("another autosave starts after the third edit")
    app.away()
    quit_at = time.time()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit(timeout=PAUSE + 20) == 0, f"quits cleanly ({app.process.returncode})")
    failures.check(time.time() - quit_at < PAUSE + 10, "after the held write finished")
finally:
    app.kill()

failures.check(not os.path.exists(recovery), "a clean exit removes the recovery file")
failures.check(not held_writes(), f"no temporary file is left: {held_writes()}")
kept = x_matrix(saved_on_exit)
failures.check(abs(kept[0][2] + 6.0) < 1e-6, f"the session on exit has the third edit: {kept[0][:3]}")

# 4. A failing write, reported, then retried.
blocked_state = os.path.join(root, "blocked-state")
open(blocked_state, "w").write("a file where the state folder should be\n")
blocked_env = dict(env, XDG_STATE_HOME=blocked_state)
app = App(binary, [session_path, "--save-on-exit", saved_on_exit], blocked_env, root, "blocked", failures)
try:
    app.find_window()
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "3.5")
    state = app.wait_for(lambda s: "Autosave failed" in s.get("notices", ""), "the failed autosave is shown", 20)
    failures.check("cannot create the folder" in state.get("notices", ""), f"with its reason: {state.get('notices')!r}")
    os.remove(blocked_state)
    state = app.wait_for(lambda s: "Autosave failed" not in s.get("notices", ""),
                         "the retry succeeds and the notice goes", 20)
    failures.check(os.path.exists(os.path.join(blocked_state, "attention-lab", "recovery.json")),
                   "the recovery file is written by the retry")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, f"quits cleanly ({app.process.returncode})")
finally:
    app.kill()
failures.finish()
