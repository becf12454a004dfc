"""Quick taps: keys pressed and released with nothing in between (`xdotool key`)
while the app draws frame after frame (--frames, as when a slow machine is busy),
so press and release often reach it between the same two frames. ImGui 1.86 would
never see such a key down, and reads a second tap of a key before any frame saw it
up as the key held on (the build before key_trickle.cpp lost 2 of 6 → taps here);
the app lets key events through so that a frame sees each. Checks, each with taps:
1. → five times moves the stepper five steps, ← five times back.
2. Enter ends typing 4.5 into X[0][0] (the revision moves: an edit).
3. Ctrl+Z (Ctrl and Z tapped together) undoes that edit: X[0][0] is back.
4. Ctrl+Q quits; the saved session holds the undone X."""
import os
import subprocess
import sys
import time

from files_test_util import App, ctrl_click, user_dirs, x_matrix, xdotool
from gui_test_util import Failures, type_text

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("quick-keys")
baseline_path, saved_path = os.path.join(root, "baseline.json"), os.path.join(root, "saved.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", baseline_path],
               check=True, timeout=60, capture_output=True, env=env)
original_x = x_matrix(baseline_path)


def tap(*keys):
    """Each key pressed and released at once (xdotool's --delay also parts a press
    from its release, by half), 0.3 s between keys (GLFW reads a release and a
    press of one key closer than 20 ms as the key held: auto-repeat)."""
    for key in keys:
        xdotool("key", "--delay", 0, key)
        time.sleep(0.3)


STEPS = ["x", "qkv", "scores", "scaled", "masked", "weights"]  # core/teaching/stage_text.cpp
# --frames: a frame is always being drawn when a key comes (the count outlasts the test).
app = App(binary, ["default", "--save-on-exit", saved_path, "--frames", "1000000"], env, root, "run", failures)
try:
    app.find_window()
    # 1. Five taps of →, five of ←.
    state = app.wait_for(lambda s: True, "the widget file")
    failures.check(state["step"] == STEPS[0], f"starts at step {STEPS[0]}, got {state['step']}")
    app.away()
    tap(*["Right"] * 5)
    app.wait_for(lambda s: s["step"] == STEPS[5], f"five taps of → reach step {STEPS[5]}")
    time.sleep(0.5)
    step = app.state()["step"]
    failures.check(step == STEPS[5], f"and stop there, at {step}")

    # 2. Type into X[0][0]; a tapped Enter ends typing.
    app.away()
    tap(*["Left"] * 5)
    app.wait_for(lambda s: s["step"] == STEPS[0], "five taps of ← go back to the first step")
    app.open_matrices_tab()
    state = app.state()
    revision = int(state["revision"])
    ctrl_click(app.window, *app.centre(state, "editor.cell.0.0"))
    app.wait_for(lambda s: s["text_input"] == "yes", "Ctrl+click on X[0][0] starts typing")
    type_text("4.5")
    tap("Return")
    state = app.wait_for(lambda s: s["text_input"] == "no" and int(s["revision"]) > revision,
                         "a tapped Enter ends typing 4.5 into X[0][0]")

    # 3. A tapped Ctrl+Z undoes it.
    revision = int(app.state()["revision"])
    app.away()
    tap("ctrl+z")
    app.wait_for(lambda s: int(s["revision"]) > revision, "a tapped Ctrl+Z undoes")

    # 4. A tapped Ctrl+Q quits (no question: nothing unsaved, the session saves on exit).
    app.away()
    tap("ctrl+q")
    failures.check(app.wait_exit() == 0, f"a tapped Ctrl+Q quits cleanly ({app.process.returncode})")
finally:
    if app.process.poll() is None:
        app.process.terminate()
        app.process.wait(timeout=10)

if os.path.exists(saved_path):
    failures.check(x_matrix(saved_path) == original_x,
                   f"X after the undo is the preset's: X[0][0] {x_matrix(saved_path)[0][0]} vs {original_x[0][0]}")
else:
    failures.check(False, "the app saved on exit")
failures.finish()
