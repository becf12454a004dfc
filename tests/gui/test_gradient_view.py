"""The gradient view and one step of gradient descent, in the real window.

1. Explain-this-cell on a gradient cell of the softmax input (default preset, loss "push
   output[5, 0] up", L = -output[5, 0]): the numbers it shows (w_ij, g_ij, sum_k w_ik g_ik,
   and dL/ds_ij) equal PyTorch autograd on the independent float64 reference
   (tests/torch/reference.py); English and Chinese, no missing glyph.
2. xdotool: pin output cell [3, 2] (the loss follows it), click "One step of gradient
   descent", quit. From the saved session, an independent recomputation gives the loss
   after, equal to what the window shows and lower than before; the saved weights are
   the original ones moved by -lr * (torch's gradient); X is unchanged.
3. Step, then Ctrl+Z, quit: every weight is back bit for bit.
4. The squared-error loss, chosen in the combo: its target is the output with cell
   [3, 2] raised by 1, so L = 1/N = 1/48 by hand; one step lowers it to what the saved
   session recomputes.
5. The largest preset (seed-000-usage: B = 16, L = 100, d_model 512, dropout in training),
   whose trace and gradients are computed off the window's thread: the softmax input's
   gradient explained with the numbers of autograd, in both languages; then a descent
   step through the window lowers the loss.
"""
import json
import os
import shutil
import subprocess
import sys
import time

from files_test_util import App, hold_keys, user_dirs, xdotool
from gui_test_util import Failures, output_dir, screenshot
from wiring_util import require_numpy_and_torch

require_numpy_and_torch()
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch"))
import reference  # noqa: E402

binary = sys.argv[1]
out = output_dir("gradient-view")
failures = Failures()
root, env = user_dirs("gradient")
os.environ.update(XDG_CONFIG_HOME=env["XDG_CONFIG_HOME"], XDG_STATE_HOME=env["XDG_STATE_HOME"])
PRESET = "default"
WEIGHTS = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"]


def saved(name, args, preset=PRESET):
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([binary, preset, *args, "--frames", "2", "--save-on-exit", path],
                   check=True, timeout=60, capture_output=True, env=env)
    return json.load(open(path))


def push_up(session, b, i, c):
    """L = -output[b, i, c] by autograd: (loss, {name: leaf}, stages) with .grad filled."""
    leaves = {}

    def leaf(name, t):
        t = t.detach().clone().requires_grad_(True)
        leaves[name] = t
        return t
    stages = reference.stages(session, leaf=leaf)
    for t in stages.values():
        t.retain_grad()
    output = stages["output"]
    output = output.reshape(-1, output.shape[-2], output.shape[-1])
    loss = -output[b, i, c]
    loss.backward()
    return loss.item(), leaves, stages


def close(a, b, tol=1e-5):
    return abs(a - b) <= tol * max(1.0, abs(b))


baseline = saved("baseline", [])

def check_explained_gradient(preset, session, i, j, name):
    """Explain-this-cell on dL/d(masked)[0, 0, i, j] under L = -output[0, i, 0] (i: the last
    query, the loss's default cell), in both languages, against autograd."""
    loss, _, stages = push_up(session, 0, i, 0)
    w = stages["weights"][0, 0, i].detach()
    g = stages["weights"].grad[0, 0, i]
    if j is None:  # the largest gradient of the row
        j = int(stages["masked"].grad[0, 0, i].abs().argmax())
    for lang in ("en", "zh"):
        _, facts = screenshot(binary, preset, "masked", out, f"{name}-{lang}",
                              ["--open", "gradients", "--open", "explain", "--pin", f"grad.masked:0:0:{i}:{j}",
                               "--lang", lang])
        failures.check(facts.get("missing_glyphs", "") == "", f"[{name} {lang}] no missing glyphs: {facts.get('missing_glyphs')}")
        failures.check(facts.get("gradient.cell") == f"0:{i}:0",
                       f"[{name} {lang}] the loss's cell is the last row, column 0: {facts.get('gradient.cell')}")
        failures.check(close(float(facts.get("gradient.loss", "nan")), loss),
                       f"[{name} {lang}] L = -output[{i}, 0] = {loss:.6g}, shown {facts.get('gradient.loss')}")
        expected = {"explain.grad.w": w[j].item(), "explain.grad.g": g[j].item(),
                    "explain.grad.row_dot": (w * g).sum().item(),
                    "explain.grad.formula": stages["masked"].grad[0, 0, i, j].item(),
                    "explain.grad.value": stages["masked"].grad[0, 0, i, j].item()}
        for key, value in expected.items():
            got = facts.get(key)
            failures.check(got is not None and close(float(got), value, 1e-4),
                           f"[{name} {lang}] {key} = {value:.6g} (torch), shown {got}")
        failures.check("heatmap.grad.masked.h1" in facts["widgets"], f"[{name} {lang}] head 1's gradient is on screen")


# 1. The softmax input's gradient, explained with its real numbers.
check_explained_gradient(PRESET, baseline, 5, 1, "explain-gradient")

# 2. One step of gradient descent through the window.
stepped_path = os.path.join(out, "stepped.json")
undone_path = os.path.join(out, "undone.json")
for path in (stepped_path, undone_path):
    if os.path.exists(path):
        os.remove(path)


def choose_squared_error(app, state):
    """Opens the loss combo and picks its second item (the popup lists them under it)."""
    rect = state["widgets"]["gradient.loss"]
    for dy in (0.5, 2.6):
        xdotool("mousemove", "--window", app.window, int(rect["x"] + 20), int(rect["y"] + dy * rect["h"]))
        time.sleep(0.2)
        xdotool("mousedown", 1)
        time.sleep(0.15)
        xdotool("mouseup", 1)
        time.sleep(0.3)


def run(save_path, undo, squared_error=False):
    app = App(binary, [PRESET, "--open", "gradients", "--pin", "output:0:0:3:2", "--save-on-exit", save_path],
              env, out, "undo" if undo else "step", failures)
    try:
        app.find_window()
        state = app.wait_for(lambda s: s.get("gradient.cell") == "0:3:2" and "gradient.step" in s["widgets"],
                             "the loss takes the pinned output cell [3, 2]")
        state = app.settled()
        if squared_error:
            choose_squared_error(app, state)
            state = app.settled()
            failures.check(close(float(state["gradient.loss"]), 1 / 48),
                           f"the squared error starts at 1/N = 1/48 (one cell off by 1), shown {state['gradient.loss']}")
        revision = int(state["revision"])
        app.click(state, "gradient.step")
        state = app.wait_for(lambda s: s.get("gradient.step_after", "") != "" and int(s["revision"]) > revision,
                             "the step's loss after")
        if undo:
            app.away()
            hold_keys("ctrl", "z")
            app.wait_for(lambda s: int(s["revision"]) > revision + 1, "Ctrl+Z undoes the step")
        app.away()
        hold_keys("ctrl", "q")
        app.process.wait(timeout=30)
        failures.check(app.process.returncode == 0, f"the app exits cleanly, code {app.process.returncode}")
        return state
    finally:
        if app.process.poll() is None:
            app.process.terminate()
            app.process.wait(timeout=10)


state = run(stepped_path, undo=False)
before, after, lr = (float(state[k]) for k in ("gradient.step_before", "gradient.step_after", "gradient.lr"))
loss_before, leaves, _ = push_up(baseline, 0, 3, 2)
stepped = json.load(open(stepped_path))
loss_after, stepped_leaves, _ = push_up(stepped, 0, 3, 2)
print(f"push output[3, 2] up, lr {lr}: loss {before:.6g} -> {after:.6g} in the window; "
      f"recomputed {loss_before:.6g} -> {loss_after:.6g}")
failures.check(close(before, loss_before), f"loss before {before} = recomputed {loss_before}")
failures.check(close(after, loss_after), f"loss after {after} = recomputed from the saved session {loss_after}")
failures.check(after < before, f"the loss fell: {before} -> {after}")
for name in WEIGHTS:
    expected = leaves[name].detach() - lr * leaves[name].grad
    got = stepped_leaves[name].detach()
    error = (got - expected).abs().max().item()
    failures.check(error <= 1e-6, f"{name} moved by -lr * torch's gradient (max error {error:.3g})")
failures.check(torch.equal(stepped_leaves["x"].detach(), leaves["x"].detach()), "X is not trained")

run(undone_path, undo=True)
undone = json.load(open(undone_path))
for name in WEIGHTS:
    failures.check(undone["weights"][name] == baseline["weights"][name], f"{name} restored exactly by Ctrl+Z")
failures.check(undone["x"] == baseline["x"], "X unchanged")

mse_path = os.path.join(out, "mse.json")
if os.path.exists(mse_path):
    os.remove(mse_path)
state = run(mse_path, undo=False, squared_error=True)
before, after = float(state["gradient.step_before"]), float(state["gradient.step_after"])
def output_of(session):
    output = reference.stages(session)["output"]
    return output.reshape(-1, output.shape[-2], output.shape[-1])


target = output_of(baseline).clone()  # (B, Lq, d_model) = (1, 6, 8): N = 48
target[0, 3, 2] += 1.0
recomputed = ((output_of(json.load(open(mse_path))) - target) ** 2).mean().item()
print(f"MSE to the output with [3, 2] + 1, lr {lr}: loss {before:.6g} -> {after:.6g}; recomputed after {recomputed:.6g}")
failures.check(after < before, f"the squared error fell: {before} -> {after}")
failures.check(close(after, recomputed), f"the squared error after {after} = recomputed from the saved session {recomputed}")

# 5. The largest preset: its gradients come from the worker thread, the same numbers.
LARGE = "seed-000-usage"
large = saved("large", [], preset=LARGE)
check_explained_gradient(LARGE, large, 99, None, "large")
large_stepped = os.path.join(out, "large-stepped.json")
app = App(binary, [LARGE, "--open", "gradients", "--save-on-exit", large_stepped], env, out, "large-step", failures)
try:
    app.find_window()
    state = app.wait_for(lambda s: "gradient.step" in s["widgets"] and s.get("gradient.cell") == "0:99:0",
                         "the large session's gradients, from the worker", timeout=60)
    state = app.settled()
    revision = int(state["revision"])
    app.click(state, "gradient.step")
    state = app.wait_for(lambda s: s.get("gradient.step_after", "") != "" and int(s["revision"]) > revision,
                         "the large session's loss after the step", timeout=60)
    before, after = float(state["gradient.step_before"]), float(state["gradient.step_after"])
    print(f"seed-000-usage, push output[0, 99, 0] up: loss {before:.6g} -> {after:.6g}")
    failures.check(after < before, f"one step lowers the large session's loss: {before} -> {after}")
    state = app.wait_for(lambda s: "gradient.step" in s["widgets"], "the new trace's gradients", timeout=60)
    app.away()
    hold_keys("ctrl", "q")
    app.process.wait(timeout=30)
finally:
    if app.process.poll() is None:
        app.process.terminate()
        app.process.wait(timeout=10)

shutil.rmtree(root, ignore_errors=True)  # settings and the recovery file of these runs
failures.finish()
