"""The gradient view's fields typed into in the real window (xdotool): the loss cell's row and column,
the learning rate, the squared error's target and Retarget. Tests had reached the loss cell only
through --pin and stepped only at the default learning rate. Every number is checked against float64
PyTorch autograd (tests/torch/reference.py) on a session file read back from disk, never the app's:
1. row 2, col 1 typed: the loss cell is [2, 1] and L = -output[2, 1];
2. lr 0.5 typed, Step: the saved weights equal W - 0.5 * dL/dW of the pre-step file, X untouched;
3. loss "squared error": L = 1/N (its target is the output with cell [2, 1] raised by 1);
   Retarget: L = 0; target 3.5 typed: L = (output[2, 1] - 3.5)^2 / N; Step (lr 0.5): the saved
   weights equal W - 0.5 * dL/dW of that loss;
4. lr 0 typed: Step is disabled (a click changes nothing: revision and file stay)."""
import json
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np, torch, reference = wu.np, wu.torch, wu.reference
binary = sys.argv[1]
failures = Failures()
out = output_dir("wiring-gradient-fields")
rng = np.random.default_rng(17)
L, D = 4, 8
N = L * D  # the squared error's mean is over the whole output (B = 1)
ROW, COL, LR = 2, 1, 0.5
WEIGHTS = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"]
session = wu.random_session(rng, L, D, 2, causal=True)
for name in WEIGHTS:  # outputs of about 1, so that a step of lr 0.5 stays a small move
    session["weights"][name] = np.round(np.array(session["weights"][name]) * 0.35, 2).tolist()


def autograd(saved, target=None):
    """(loss, {name: leaf with .grad}) for L = -output[ROW, COL], or with `target` the mean squared
    error to the output with cell [ROW, COL] set to `target`, by torch on the saved session."""
    leaves = {}

    def leaf(name, t):
        t = t.detach().clone().requires_grad_(True)
        leaves[name] = t
        return t
    output = reference.stages(saved, leaf=leaf)["output"].reshape(-1, L, D)
    if target is None:
        loss = -output[0, ROW, COL]
    else:
        wanted = output.detach().clone()
        wanted[0, ROW, COL] = target
        loss = ((output - wanted) ** 2).mean()
    loss.backward()
    return loss.item(), leaves


def close(a, b, tol=1e-5):
    return abs(a - b) <= tol * max(1.0, abs(b))


def check_step(label, before, after, leaves):
    for name in WEIGHTS:
        want = leaves[name].detach().numpy() - LR * leaves[name].grad.numpy()
        got = np.array(after["weights"][name], dtype=np.float64).reshape(want.shape)
        error = np.abs(got - want).max()
        failures.check(error <= 2e-5 * max(1.0, np.abs(want).max()),
                       f"[{label}] {name} = W - {LR} * torch's dL/dW (max error {error:.3g})")
    failures.check(after["x"] == before["x"], f"[{label}] X is not trained")


def loss_shown(app, expected, what):
    state = app.wait_for(lambda s: "gradient.loss" in s and close(float(s["gradient.loss"]), expected), what)
    failures.check(close(float(state.get("gradient.loss", "nan")), expected),
                   f"[{what}] L = {expected:.9g} (torch), shown {state.get('gradient.loss')}")


def step(app, what):
    """Clicks Step; returns the saved session once the step's loss after is shown."""
    revision = int(app.settled()["revision"])
    app.click_widget("gradient.step")
    app.wait_for(lambda s: int(s["revision"]) > revision and s.get("gradient.step_after", "") != "", what)
    return app.save()


def choose_squared_error(app):
    """Opens the loss combo and clicks its second entry (ImGui::Combo's entries have no names: the
    popup lists them under the combo), until the target field shows."""
    for _ in range(3):
        rect = app.settled()["widgets"]["gradient.loss"]
        app.click_widget("gradient.loss")
        time.sleep(0.3)
        app.click_at(int(rect["x"] + 20), int(rect["y"] + 2.6 * rect["h"]))
        state = app.wait_for(lambda s: "gradient.target" in s["widgets"], "the squared error's target field", 3.0)
        if "gradient.target" in state["widgets"]:
            return


app = wu.Wiring(binary, session, out, "gradient-fields", failures, ["--open", "gradients", "--stage", "output"])
try:
    app.wait_for(lambda s: "gradient.step" in s["widgets"] and s.get("gradient.cell") == f"0:{L - 1}:0",
                 "the gradient view, loss on the last row's column 0")
    before = json.load(open(app.path))

    # 1. The loss cell typed.
    app.type_into("gradient.row", str(ROW), select_all=True)
    app.type_into("gradient.col", str(COL), select_all=True)
    app.wait_for(lambda s: s.get("gradient.cell") == f"0:{ROW}:{COL}", "the loss cell follows the typed row and column")
    loss, leaves = autograd(before)
    loss_shown(app, loss, "push output[2, 1] up")

    # 2. lr 0.5, one step.
    app.type_into("gradient.lr", str(LR), select_all=True)
    app.wait_for(lambda s: s.get("gradient.lr") == str(LR), "the learning rate typed")
    stepped = step(app, "Step with lr 0.5")
    check_step("push, lr 0.5", before, stepped, leaves)
    after, _ = autograd(stepped)
    failures.check(after < loss, f"[push, lr 0.5] the loss falls: {loss:.6g} -> {after:.6g}")

    # 3. Squared error: its target, Retarget, a typed target, a step.
    choose_squared_error(app)
    loss_shown(app, 1.0 / N, "squared error to output + 1 at [2, 1]")
    app.click_widget("gradient.retarget")
    state = app.wait_for(lambda s: "gradient.loss" in s and float(s["gradient.loss"]) == 0.0, "Retarget: L = 0")
    failures.check(float(state.get("gradient.loss", "nan")) == 0.0, f"[retarget] L = 0, shown {state.get('gradient.loss')}")
    app.type_into("gradient.target", "3.5", select_all=True)
    loss, leaves = autograd(stepped, target=3.5)
    loss_shown(app, loss, "squared error to target 3.5")
    stepped_again = step(app, "Step on the squared error")
    check_step("squared error, lr 0.5", stepped, stepped_again, leaves)
    after, _ = autograd(stepped_again, target=3.5)
    failures.check(after < loss, f"[squared error, lr 0.5] the loss falls: {loss:.6g} -> {after:.6g}")

    # 4. lr 0: no step.
    app.type_into("gradient.lr", "0", select_all=True)
    state = app.wait_for(lambda s: s.get("gradient.lr") == "0", "the learning rate 0 typed")
    revision = int(state["revision"])
    app.click_widget("gradient.step")
    time.sleep(1.0)
    state = app.settled()
    failures.check(int(state["revision"]) == revision and state["modified"] == "no",
                   f"[lr 0] Step is disabled: revision {revision} -> {state['revision']}, modified {state['modified']}")
    failures.check(json.load(open(app.path)) == stepped_again, "[lr 0] the file is as the last step left it")
finally:
    app.kill()
failures.finish()
