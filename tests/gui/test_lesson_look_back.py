"""Issue 13: the guided lesson "how a head learns to look back" (lessons 9-12), in the
real window, in English and Chinese.

1. Each step (--lesson 9 ... 12, at 1280x800) sets its view up and outlines its widget: the gradient
   view's loss (9), dL/dS'' of head 0 (10), the descent button (11), the Training lab's
   Train button (12, the lab open on previous_token beside the lesson); the Chinese text
   has no English words but the task's and the optimiser's names; no missing glyph; the
   lesson window grows to show its Next button below a long text.
2. Its numbers, from the session the lesson opened (saved on exit): PyTorch autograd on
   the independent float64 reference (tests/torch/reference.py) gives L = -output[7, 0],
   the weight, dL/dalpha, the row's sum and dL/ds at query 7, key 6 (the previous token),
   and the loss after one step of plain gradient descent at the learning rate shown; the
   lesson's numbers agree to the 4 digits it prints them with.
3. xdotool: in lesson 11, the gradient view turned off makes the lesson ask to set it up
   again, and "Set up again" brings it back; its outlined button pressed, the text says what the step did, with
   the loss the window measured. Next: lesson 12; Train pressed; once the lab's 300 steps
   are done the text says the off-diagonal has formed, and the head and share it names
   are those the reference recomputes from `attention-lab train --task previous_token
   --out` (the same config and seed as the lab).
"""
import json
import os
import re
import shutil
import subprocess
import sys

from files_test_util import App, recovery_path, user_dirs
from gui_test_util import Failures, output_dir, screenshot
from wiring_util import require_numpy_and_torch

require_numpy_and_torch()
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch"))
import reference  # noqa: E402

binary = sys.argv[1]
out = output_dir("lesson-look-back")
failures = Failures()
root, env = user_dirs("look-back")
os.environ.update(XDG_CONFIG_HOME=env["XDG_CONFIG_HOME"], XDG_STATE_HOME=env["XDG_STATE_HOME"])
WEIGHTS = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"]
LESSONS = {9: ("lessons.look_back_loss.text", "gradient.loss"),
           10: ("lessons.look_back_gradient.text_", "heatmap.grad.masked.h0"),
           11: ("lessons.look_back_step.text", "gradient.step"),
           12: ("lessons.look_back_train.text_start", "training.toggle")}
ENGLISH = re.compile(r"[A-Za-z_]{3,}")
ALLOWED = {"previous_token", "Adam", "d_k"}


def number(text):
    """A number as the lesson prints it ("−1.724", "2.5e-5")."""
    return float(text.replace("−", "-"))


def agrees(shown, expected):
    """4 significant digits."""
    return shown is not None and abs(number(shown) - expected) <= 1e-3 * max(abs(expected), 1e-3)


def inside(outer, inner):
    return (outer["x"] <= inner["x"] and outer["y"] <= inner["y"] and
            inner["x"] + inner["w"] <= outer["x"] + outer["w"] and inner["y"] + inner["h"] <= outer["y"] + outer["h"])


# 1. Every step in both languages.
for lang in ("en", "zh"):
    for n, (key, target) in LESSONS.items():
        _, facts = screenshot(binary, "default", "x", out, f"lesson{n}-{lang}",
                              ["--lang", lang, "--lesson", str(n), "--size", "1280x800"])
        label = f"[{lang} lesson {n}]"
        failures.check(facts.get("lesson.text.key", "").startswith(key), f"{label} text {facts.get('lesson.text.key')}")
        failures.check(facts.get("lesson.target") == target, f"{label} points at {facts.get('lesson.target')}")
        widgets = facts["widgets"]
        if "lesson.highlight" in widgets and target in widgets:
            failures.check(inside(widgets["lesson.highlight"], widgets[target]), f"{label} the outline surrounds {target}")
        else:
            failures.check(False, f"{label} the outline and {target} are drawn")
        failures.check(facts.get("missing_glyphs") == "", f"{label} no missing glyphs")
        if "lesson.next" in widgets and "lesson.window" in widgets:  # not hidden below a scrollbar
            failures.check(inside(widgets["lesson.window"], widgets["lesson.next"]), f"{label} Next is in the window")
        text = facts.get("lesson.text.lines", "")
        failures.check("{" not in text and len(text) > 40, f"{label} the text is filled in: {text!r}")
        if lang == "zh":
            english = [w for w in ENGLISH.findall(text) if w not in ALLOWED]
            failures.check(not english, f"{label} no English in the Chinese text: {english}")
        if n == 12:
            lab, lesson = widgets.get("lab.training"), widgets.get("lesson.window")
            failures.check(lab is not None and lesson is not None and lab["x"] >= lesson["x"] + lesson["w"],
                           f"{label} the Training lab opens beside the lesson, not over it")


# 2. The numbers, against autograd on the session the lesson opened.
def lesson_facts(n, lang="en"):
    path, facts_path = os.path.join(out, f"session{n}.json"), os.path.join(out, f"facts{n}.json")
    for p in (path, facts_path):
        if os.path.exists(p):
            os.remove(p)
    subprocess.run([binary, "default", "--lesson", str(n), "--lang", lang, "--frames", "4", "--size", "1400x900",
                    "--save-on-exit", path, "--widgets-out", facts_path], check=True, timeout=60, capture_output=True,
                   env=env)
    return json.load(open(path)), json.load(open(facts_path))


def push_up(session, i, c):
    """L = -output[0, i, c] by autograd: (loss, leaves, stages) with .grad filled."""
    leaves = {}

    def leaf(name, t):
        t = t.detach().clone().requires_grad_(True)
        leaves[name] = t
        return t
    stages = reference.stages(session, leaf=leaf)
    for t in stages.values():
        t.retain_grad()
    output = stages["output"].reshape(-1, stages["output"].shape[-2], stages["output"].shape[-1])
    loss = -output[0, i, c]
    loss.backward()
    return loss.item(), leaves, stages


session, facts = lesson_facts(9)
row, col = 7, 0
loss, leaves, stages = push_up(session, row, col)
failures.check(facts.get("gradient.cell") == f"0:{row}:{col}", f"the loss is on output [{row}, {col}]: {facts.get('gradient.cell')}")
failures.check(agrees(facts.get("lesson.param.loss"), loss), f"lesson 9: L = {loss:.6g}, says {facts.get('lesson.param.loss')}")
failures.check(len(session["tokens"]) == 8 and facts.get("lesson.param.lq") == "8", "lesson 9: the sequence has 8 symbols")
failures.check(agrees(facts.get("lesson.param.uniform_loss"), torch.log(torch.tensor(24.0)).item()),
               f"lesson 9: ln 24, says {facts.get('lesson.param.uniform_loss')}")

_, facts = lesson_facts(10)
w = stages["weights"][0, 0, row].detach()
g = stages["weights"].grad[0, 0, row]
expected = {"w": w[row - 1].item(), "g": g[row - 1].item(), "row_dot": (w * g).sum().item(),
            "value": stages["masked"].grad[0, 0, row, row - 1].item()}
for name, value in expected.items():
    got = facts.get("lesson.param." + name)
    failures.check(agrees(got, value), f"lesson 10: {name} = {value:.6g} (torch), says {got}")

_, facts = lesson_facts(11)
lr = number(facts["lesson.param.lr"])
moved = json.loads(json.dumps(session))
for name in WEIGHTS:
    step = (leaves[name].detach() - lr * leaves[name].grad).reshape(torch.tensor(session["weights"][name]).shape)
    moved["weights"][name] = step.tolist()
after = -reference.stages(moved)["output"].reshape(-1, 8, 32)[0, row, col].item()
failures.check(agrees(facts.get("lesson.param.before"), loss), f"lesson 11: before {loss:.6g}, says {facts.get('lesson.param.before')}")
failures.check(agrees(facts.get("lesson.param.after"), after), f"lesson 11: after {after:.6g}, says {facts.get('lesson.param.after')}")
failures.check(after < loss, f"the step lowers the loss: {loss} -> {after}")

# 3. Press the step, then train.
train_path = os.path.join(out, "trained.json")
subprocess.run([binary, "train", "--task", "previous_token", "--out", train_path, "--json"], check=True, timeout=120,
               capture_output=True)
trained = reference.stages(json.load(open(train_path)))["weights"]  # (1, h, L, L)
shares = [trained[0, h].diagonal(-1).mean().item() for h in range(trained.shape[1])]
best = max(range(len(shares)), key=lambda h: shares[h])
print(f"trained previous_token: previous-token share per head {shares}")

for lang in ("en", "zh"):
    if os.path.exists(recovery_path(env)):  # the last run was stopped with the step unsaved
        os.remove(recovery_path(env))
    picture = os.path.join(out, f"trained-{lang}.png")  # the window as it closes, to look at
    app = App(binary, ["default", "--lesson", "11", "--out", picture], env, out, f"live-{lang}", failures, lang)
    try:
        app.find_window()
        state = app.wait_for(lambda s: s.get("lesson.text.key") == "lessons.look_back_step.text", "lesson 11")
        predicted = state.get("lesson.param.after")
        # The gradient view turned off: the lesson asks to set it up again, and Set up again does.
        app.click(app.settled(), "gradient.show")
        state = app.wait_for(lambda s: s.get("lesson.text.key") == "lessons.look_back.again", "the lesson asks for the view")
        app.click(app.settled(), "lesson.again")
        state = app.wait_for(lambda s: s.get("lesson.text.key") == "lessons.look_back_step.text", "set up again")
        app.click(app.settled(), "gradient.step")
        state = app.wait_for(lambda s: s.get("lesson.text.key") == "lessons.look_back_step.text_done"
                             and s.get("gradient.step_after", "") != "" and s.get("lesson.param.after") != "…",
                             "the lesson says what the step did")
        failures.check(agrees(state.get("lesson.param.after"), float(state.get("gradient.step_after", "nan"))),
                       f"[{lang}] the lesson quotes the loss the window measured: {state.get('lesson.param.after')}")
        failures.check(state.get("lesson.param.after") == predicted,
                       f"[{lang}] as lesson 11 said it would be: {predicted}")
        app.click(state, "lesson.next")
        state = app.wait_for(lambda s: "training.toggle" in s["widgets"] and s.get("lesson.index") == "11",
                             "lesson 12 opens the Training lab")
        app.click(app.settled(), "training.toggle")
        state = app.wait_for(lambda s: s.get("training.steps") == "300" and s.get("training.running") == "no"
                             and s.get("lesson.text.key", "").startswith("lessons.look_back_train.text_form"),
                             "the lab's 300 steps", 60)
        failures.check(state.get("lesson.text.key") == "lessons.look_back_train.text_formed",
                       f"[{lang}] the off-diagonal has formed: {state.get('lesson.text.key')}")
        failures.check(state.get("lesson.param.head") == str(best), f"[{lang}] the lesson names head {best}: {state.get('lesson.param.head')}")
        failures.check(agrees(state.get("lesson.param.share"), shares[best]),
                       f"[{lang}] its share {shares[best]:.6g} (reference), says {state.get('lesson.param.share')}")
        failures.check(state.get("lesson.param.ideal") == "1.0", f"[{lang}] the ideal puts 1.0 there")
    finally:
        app.process.terminate()
        app.process.wait(timeout=20)

shutil.rmtree(root, ignore_errors=True)  # settings and the recovery file of these runs
failures.finish()
