"""The Training lab's Reset and task choice while a run is training (xdotool): the worker is stopped and
dropped, not left writing into freed memory (the sanitizer run of this test watches that), and a new
run starts from step 0.
1. Train, wait for steps; Reset while running: no run shown (no step count), the app keeps drawing.
2. Train again: it counts up from step 0 (the first count seen is far below the steps reached before).
3. While that runs, choose another task: the run is dropped the same way; One step then gives step 1."""
import sys
import time

from files_test_util import App, user_dirs, xdotool
from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("training-reset")


def steps(state):
    return int(state["training.steps"]) if "training.steps" in state else None


app = App(binary, ["default", "--open", "training"], env, root, "run", failures)
try:
    app.find_window()
    state = app.wait_for(lambda s: "training.toggle" in s["widgets"], "the training lab")
    app.click(state, "training.toggle")
    state = app.wait_for(lambda s: s.get("training.running") == "yes" and (steps(s) or 0) >= 30, "training runs", 60)
    reached = steps(state) or 0
    app.click(app.settled(), "training.reset")
    state = app.wait_for(lambda s: steps(s) is None, "Reset while running drops the run")
    time.sleep(0.5)
    failures.check(app.process.poll() is None and steps(app.state()) is None, "the app runs on, no run shown")

    app.click(app.settled(), "training.toggle")
    state = app.wait_for(lambda s: steps(s) is not None, "Train again starts a run")
    failures.check(steps(state) < reached, f"it starts over from step 0: {steps(state)} after {reached}")
    app.wait_for(lambda s: s.get("training.running") == "yes", "and trains")

    app.click(app.settled(), "training.task")
    time.sleep(0.4)
    # The combo's popup lists the tasks under it: the second entry is about 1.5 lines below the combo.
    rect = app.settled()["widgets"]["training.task"]
    xdotool("mousemove", "--window", app.window, int(rect["x"] + 40), int(rect["y"] + 2.5 * rect["h"]))
    time.sleep(0.2)
    xdotool("mousedown", 1)
    time.sleep(0.15)
    xdotool("mouseup", 1)
    state = app.wait_for(lambda s: steps(s) is None, "another task drops the running model")
    app.click(app.settled(), "training.step")
    state = app.wait_for(lambda s: steps(s) == 1, "One step on the new task: step 1")
    failures.check(state.get("training.running") == "no", "One step does not start a run")
finally:
    app.kill()
failures.check(app.process.returncode is not None, "the app was still running until killed")
failures.finish()
