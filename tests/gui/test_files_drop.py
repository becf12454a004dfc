"""Drag and drop onto the window, with real XDND messages (xdnd_source.py,
python3-xlib) as a file manager sends them:
1. a session file dropped onto the app opens (it becomes the document, the
   title names it);
2. a .npy dropped onto it opens the import dialog on that file; Import puts
   its values into X (checked in the session written on exit).
Needs numpy and python3-xlib (tools/deps.sh): if the interpreter CMake found
lacks them, the test re-runs itself with Debian's /usr/bin/python3."""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import Xlib  # noqa: F401
except ImportError as missing:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    sys.exit(f"FAIL: {missing} (tools/deps.sh installs python3-numpy and python3-xlib)")

from files_test_util import App, hold_keys, user_dirs, x_matrix
from gui_test_util import Failures
from xdnd_source import DropFailed, drop_files

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-drop")
work = os.path.join(root, "work with spaces")  # URIs escape them
os.makedirs(work)
dropped_session = os.path.join(work, "dropped session.json")
subprocess.run([binary, "causal-decoder", "--frames", "2", "--save-on-exit", dropped_session],
               check=True, timeout=60, capture_output=True, env=env)
x_shape = np.array(json.load(open(dropped_session))["x"], dtype=np.float32).shape
values = (np.arange(np.prod(x_shape), dtype=np.float32).reshape(x_shape) * 0.25 - 1.0)
dropped_npy = os.path.join(work, "hidden states.npy")
np.save(dropped_npy, values)

saved_on_exit = os.path.join(root, "on-exit.json")
app = App(binary, ["default", "--save-on-exit", saved_on_exit], env, root, "run", failures)
try:
    window = int(app.find_window())

    # 1. A session file.
    try:
        log = drop_files(window, [dropped_session])
        print("session drop:", log)
    except DropFailed as error:
        failures.check(False, f"dropping the session: {error}")
    state = app.wait_for(lambda s: s.get("document") == dropped_session, "the dropped session opens")
    failures.check(state.get("modified") == "no", "opened, not modified")
    title = app.settled_title("dropped session.json — Attention Lab")
    failures.check(title == "dropped session.json — Attention Lab", f"the title names it: {title!r}")

    # 2. A .npy: the import dialog on it, then Import into X.
    try:
        log = drop_files(window, [dropped_npy])
        print("npy drop:", log)
    except DropFailed as error:
        failures.check(False, f"dropping the .npy: {error}")
    app.wait_for(lambda s: "files.dialog.import_target" in s["widgets"], "the dropped .npy opens the import dialog")
    state = app.settled()
    app.click(state, "files.dialog.accept")
    state = app.wait_for(lambda s: s.get("modified") == "yes" and "files.dialog" not in s["widgets"],
                         "Import puts the dropped matrix into the session")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, f"quits cleanly ({app.process.returncode})")
finally:
    app.kill()

if os.path.exists(saved_on_exit):
    kept = np.array(json.load(open(saved_on_exit))["x"], dtype=np.float32)
    failures.check(kept.shape == values.shape and np.array_equal(kept, values),
                   f"X holds the dropped .npy's values exactly ({kept.shape} vs {values.shape})")
else:
    failures.check(False, "the session is written on exit")
failures.finish()
