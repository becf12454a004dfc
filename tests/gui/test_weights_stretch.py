"""Stretching the weights' colours, in the real window (xdotool). Over 24 keys with small W_Q and W_K
every weight is near 1/24, so on the usual 0-to-1 scale each head is one flat dark colour. The
checkbox over the weights heatmaps ("Colours up to the largest weight shown, not to 1") colours them
from 0 to the largest weight of the heads shown: then every cell of both heads and of their average
is the colour of a float64 PyTorch computation of the saved session (tests/torch/reference.py) on
that range, and the colour bar ends at that weight; a head enlarged keeps that scale. At the output
step the heads' average in the inputs row follows it; unticked, the weights are on [0, 1] again,
cell by cell."""
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("weights-stretch")
failures = Failures()
rng = np.random.default_rng(20261207)

L, D, H = 24, 8, 2
SESSION = wu.random_session(rng, L, D, H, causal=False)
for name in ("w_q", "w_k"):  # small scores: weights close to uniform
    SESSION["weights"][name] = wu.random_matrix(rng, D, D, 0.15)
SESSION["weights"]["b_q"] = [0.0] * D
SESSION["weights"]["b_k"] = [0.0] * D


def check_weights(app, label, names, weights, value_range):
    state, pixels = app.screen()
    for name in names:
        values = weights.mean(axis=0) if name == "weights.avg" else weights[int(name[-1])]
        wu.check_heatmap(failures, label, state, pixels, name, values, value_range)
    return state


def scale_is(state, high):
    rects = [r for n, r in state["widgets"].items() if n.startswith("heatmap.weights.")]
    return rects and all(abs(r["high"] - high) < 1e-5 for r in rects)


def set_stretch(app, want_high):
    """Clicks the checkbox (again if a click was lost) until every weights heatmap's scale ends at want_high."""
    for _ in range(3):
        if scale_is(app.settled(), want_high):  # a click that took effect late: not clicked again
            return
        app.click_widget("heatmap.stretch_weights", "the stretch checkbox over the weights")
        deadline = time.time() + 5.0
        while time.time() < deadline:
            state = app.state()
            if state and scale_is(state, want_high):
                return
            time.sleep(0.05)
    failures.check(False, f"clicking the checkbox moves the weights' scale to [0, {want_high:.4g}]")


app = wu.Wiring(binary, SESSION, out, "weights-stretch", failures, ["--stage", "weights"])
try:
    app.wait_for(lambda s: s["step"] == "weights" and "heatmap.weights.avg" in s["widgets"], "the softmax step")
    weights = wu.session_stages(app.save())["weights"][0]  # (h, L, L), float64
    largest = float(weights.max())
    failures.check(0.5 / L < largest < 0.2, f"the weights are small, as the test means them: largest {largest:.4f}")
    heads_and_mean = ["weights.h0", "weights.h1", "weights.avg"]
    check_weights(app, "0 to 1", heads_and_mean, weights, (0.0, 1.0))

    set_stretch(app, largest)
    check_weights(app, "stretched", heads_and_mean, weights, (0.0, largest))
    app.click_widget("enlarge.weights.h1")
    app.wait_for(lambda s: "zoom.back" in s["widgets"] and "heatmap.weights.h0" not in s["widgets"], "head 1 enlarged")
    check_weights(app, "stretched, enlarged", ["weights.h1"], weights, (0.0, largest))
    wu.hold_keys("Escape")
    app.wait_for(lambda s: "zoom.back" not in s["widgets"], "Esc leaves the enlarged view")
    app.go_to_step("output")
    check_weights(app, "stretched, output step", ["weights.avg"], weights, (0.0, largest))

    app.go_to_step("weights")
    set_stretch(app, 1.0)
    check_weights(app, "0 to 1 again", heads_and_mean, weights, (0.0, 1.0))
finally:
    app.kill()
failures.finish()
