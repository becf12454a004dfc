"""The Training lab in the real window (previous_token), in English and Chinese:
Train starts the worker, the window keeps drawing while it trains; Pause stops the
steps; One step adds exactly one; Resume runs to the task's default steps, where it
pauses by itself. In Chinese the model uses RoPE (chosen in the positions combo) instead of
learned positions. The loss falls (the mean of the last 10 steps below a third of the
first 10, and below ln 24 / 3: ln 24 is the loss of a uniform guess over the 24
letters) and the held-out accuracy reaches 98 %. The line under the patterns gives each head's
weight on the ideal keys (the token before) and the better head's in each row: the same numbers
as the same run's model saved by `attention-lab train --out`, its weights traced and summed here.
"Open the learned layer in the main window" then shows that same saved session on the softmax step
(the lab closes; the Labs menu brings it back with its run).
A picture is kept mid-training (paused), at the end and once opened, in each language."""
import json
import math
import os
import shutil
import subprocess
import time

from files_test_util import App, user_dirs
from gui_test_util import Failures, output_dir
from wiring_util import grab

binary = __import__("sys").argv[1]
out = output_dir("training-lab")
failures = Failures()
root, env = user_dirs("training")


def picture(app, name):
    from PIL import Image
    app.away()
    Image.fromarray(grab(app.window)).save(os.path.join(out, name + ".png"))


def saved_run(positions):
    """The lab's run (seed 1, previous_token, default steps) trained again from the command line and saved
    on the held-out example; its path."""
    path = os.path.join(out, f"previous-token-{positions}.json")
    subprocess.run([binary, "train", "--task", "previous_token", "--positions", positions, "--out", path, "--json"],
                   check=True, capture_output=True)
    return path


def shares_of_saved_run(path):
    """Per head and for the better head of each row, the % of weight on the token before (rows 1..L-1)."""
    weights = json.loads(subprocess.run([binary, "trace", path, "--json"], check=True, capture_output=True).stdout)
    heads = weights["stages"]["weights"][0]  # (h, L, L)
    rows = range(1, len(heads[0]))
    per_row = [[head[i][i - 1] for i in rows] for head in heads]
    mean = lambda values: 100 * sum(values) / len(values)
    return [mean(row) for row in per_row], mean([max(col) for col in zip(*per_row)])


def steps_now(app, default):
    """The lab's step count as the window last reported it (`default` while the file is being rewritten)."""
    state = app.state()
    return int(state.get("training.steps", default)) if state else default


def largest_difference(a, b):
    """The largest |a - b| over two nested lists (or dicts) of numbers of the same shape; other values
    (the weights' "layout") must be equal."""
    if isinstance(a, dict):
        return max(largest_difference(a[k], b[k]) for k in a) if a.keys() == b.keys() else math.inf
    if isinstance(a, list):
        return max(largest_difference(x, y) for x, y in zip(a, b)) if len(a) == len(b) else math.inf
    if isinstance(a, str):
        return 0.0 if a == b else math.inf
    return abs(a - b)


for lang in ("en", "zh"):
    opened_path = os.path.join(out, f"opened-{lang}.json")  # the session when the window closes
    app = App(binary, ["default", "--open", "training", "--save-on-exit", opened_path], env, out, "training-" + lang,
              failures)
    # App starts the window in English; the language button is not what this test is about.
    if lang == "zh":
        app.process.terminate()
        app.process.wait(timeout=10)
        app.process = __import__("subprocess").Popen(
            [binary, "default", "--open", "training", "--lang", "zh", "--size", "1400x900",
             "--widgets-out", app.widgets_path, "--save-on-exit", opened_path], env=env)
    try:
        app.find_window()
        state = app.wait_for(lambda s: "training.toggle" in s["widgets"], "the Training lab is open")
        failures.check(state.get("missing_glyphs", "") == "", f"[{lang}] no missing glyphs: {state.get('missing_glyphs')}")
        if lang == "zh":  # RoPE: q and k turned by position, nothing added to the embeddings
            app.click(app.settled(), "training.positions")
            app.wait_for(lambda s: "training.positions.rope" in s["widgets"], "the positions combo opens")
            app.click(app.settled(), "training.positions.rope")
            state = app.wait_for(lambda s: s.get("training.positions") == "rope", "RoPE is chosen")
        app.click(state, "training.toggle")  # Train
        state = app.wait_for(lambda s: int(s.get("training.steps", "0")) >= 30, "training runs", 60)
        app.click(app.state(), "training.toggle")  # Pause
        state = app.wait_for(lambda s: s.get("training.running") == "no", "Pause stops the worker")
        paused = int(app.settled()["training.steps"])
        target = int(state["training.target_steps"])
        failures.check(paused < target, f"[{lang}] paused mid-training at step {paused} of {target}")
        picture(app, f"mid-training-{lang}")
        failures.check(int(app.settled()["training.steps"]) == paused, f"[{lang}] no step while paused")
        # One step. ImGui 1.86 drops a click whose press and release fall in one frame (a long frame under
        # ASan): if no step came at all, the click was lost and is given again; exactly one step must follow.
        app.click(app.settled(), "training.step")
        for _ in range(3):
            deadline = time.time() + 5  # a step takes well under a second, even under ASan
            while time.time() < deadline and steps_now(app, paused) == paused:
                time.sleep(0.1)
            if steps_now(app, paused) != paused:
                break
            app.click(app.settled(), "training.step")
        state = app.wait_for(lambda s: int(s["training.steps"]) == paused + 1, "One step adds one step")
        app.click(app.settled(), "training.toggle")  # Resume
        state = app.wait_for(lambda s: int(s.get("training.steps", "0")) == target and s.get("training.running") == "no",
                             "the run reaches the task's default steps and pauses", 120)
        state = app.settled()
        first, last, accuracy = (float(state[k].replace("−", "-")) for k in
                                 ("training.loss_first", "training.loss_last", "training.accuracy"))
        print(f"[{lang}] {target} steps: loss {first} (first 10) -> {last} (last 10), held-out accuracy {accuracy}")
        failures.check(last < first / 3 and last < math.log(24) / 3, f"[{lang}] the loss falls: {first} -> {last}")
        failures.check(accuracy >= 0.98, f"[{lang}] held-out accuracy {accuracy} >= 0.98")
        failures.check("heatmap.training.ideal" in state["widgets"] and "heatmap.training.h1" in state["widgets"],
                       f"[{lang}] the learned heads and the ideal pattern are on screen")
        saved_path = saved_run("rope" if lang == "zh" else "learned")
        per_head, best = shares_of_saved_run(saved_path)
        shown = [float(state.get(f"training.share.h{h}", "nan")) for h in range(2)]
        shown_best = float(state.get("training.share.best", "nan"))
        print(f"[{lang}] on the token before: heads {shown} %, better head {shown_best} % "
              f"(the saved run: {per_head}, {best})")
        failures.check("training.shares" in state["widgets"]
                       and all(abs(a - b) <= 0.5 for a, b in zip(shown + [shown_best], per_head + [best])),
                       f"[{lang}] the shares shown {shown}, {shown_best} against the saved run's {per_head}, {best}")
        picture(app, f"trained-{lang}")
        # The learned layer opened in the main window, on its softmax step, the lab closed; Labs brings the lab
        # back with its run. The session saved when the window closes is the command line's saved run: same
        # tokens, x and weights.
        app.click(app.settled(), "training.open")
        state = app.wait_for(lambda s: s["step"] == "weights" and "training.toggle" not in s["widgets"]
                             and "heatmap.weights.h1" in s["widgets"],
                             "the learned layer opens in the main window on its softmax step, the lab closed")
        picture(app, f"opened-{lang}")
        app.click(state, "menu.labs")
        app.click(app.wait_for(lambda s: "menu.labs.training" in s["widgets"], "the Labs menu opens"), "menu.labs.training")
        app.wait_for(lambda s: "training.open" in s["widgets"] and s.get("training.steps") == str(target),
                     "Labs → Training lab reopens the lab with its run")
        app.process.terminate()  # closes as the window does: --save-on-exit writes the session
        app.process.wait(timeout=30)
        opened, saved = json.load(open(opened_path)), json.load(open(saved_path))
        difference = max(largest_difference(opened[k], saved[k]) for k in ("x", "weights") if k in saved)
        print(f"[{lang}] the opened session against the command line's: largest difference {difference}")
        failures.check(opened["tokens"] == saved["tokens"] and opened["config"] == saved["config"]
                       and set(opened) >= {"x", "weights"} and difference < 1e-4,
                       f"[{lang}] the opened session is the trained layer: tokens {opened['tokens']} / {saved['tokens']}, "
                       f"config {opened['config']} / {saved['config']}, largest difference {difference}")
    finally:
        if app.process.poll() is None:
            app.process.terminate()
            app.process.wait(timeout=10)

shutil.rmtree(root, ignore_errors=True)  # settings and the recovery file of these runs
failures.finish()
