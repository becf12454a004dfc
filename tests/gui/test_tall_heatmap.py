"""A tall, narrow matrix is drawn wide enough to see (under Xvfb).

60 tokens of d_model 2: with square cells X, Q, K, V and the output were a few pixels
wide, a hairline over their colour bars. Their columns now widen, up to half the grid's
height: still drawn taller than wide, as they are. Checked in a screenshot: each such
heatmap is at least 40 pixels and 10 times as wide as a square-celled grid would be,
and still taller than wide; every cell of X, read at its centre, has the colour of the
session's own number on the diverging map over X's range. And a matrix that is not a
hairline keeps square cells: the 8 x 8 weights, and seed-000-usage's 100 x 64 heads."""
import json
import os
import sys

import wiring_util as wu  # numpy, on Debian's python3 (or skipped)
from gui_test_util import DIVERGING, Failures, colormap, output_dir, screenshots

np = wu.np

binary = sys.argv[1]
out = output_dir("tall-heatmap")
failures = Failures()
TOLERANCE = 4  # 8-bit rounding and the shader's float interpolation

rng = np.random.default_rng(60)
length, d_model = 60, 2
x = rng.normal(size=(length, d_model)).round(3)
session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": d_model, "num_heads": 1, "bias": False,
               "scale": "sqrt_dk", "mask": {"causal": True}, "mask_fill": "-inf",
               "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "x": [x.tolist()],
    "weights": {"layout": "math", **{f"w_{n}": rng.normal(size=(d_model, d_model)).round(3).tolist() for n in "qkvo"}},
}
path = os.path.join(out, "tall.json")
json.dump(session, open(path, "w"))

shots = screenshots(binary, path, ["q", "output"], out, "tall")
for stage, names in (("q", ["input.x", "q.h0", "k.h0", "v.h0"]), ("output", ["output"])):
    image, state = shots[stage]
    for name in names:
        rect = state["widgets"].get("heatmap." + name)
        failures.check(rect is not None, f"[{stage}] heatmap {name} is on screen")
        if rect is None:
            continue
        square_width = rect["h"] / rect["rows"] * rect["cols"]
        failures.check(40 <= rect["w"] < rect["h"] and rect["w"] >= 10 * square_width,
                       f"[{stage}] {name} ({rect['rows']}x{rect['cols']}) is {rect['w']:.0f} px wide, "
                       f"{rect['h']:.0f} tall: at least 40, 10 times the {square_width:.1f} of square cells, "
                       f"and less than its height")


def check_square(label, state, names):
    for name in names:
        rect = state["widgets"].get("heatmap." + name)
        failures.check(rect is not None and abs(rect["w"] / rect["cols"] - rect["h"] / rect["rows"]) < 0.05,
                       f"[{label}] {name} keeps square cells: {rect}")


check_square("tall", shots["q"][1], ["input.w_q", "input.w_k"])
check_square("seed-000-usage", screenshots(binary, "seed-000-usage", ["q"], out, "seed-000")["q"][1],
             ["input.x", "q.h0", "k.h7", "v.h3"])

# X's cells, each read at its centre (its rows are a couple of pixels tall).
image, state = shots["q"]
_, _, rows = image
rect = state["widgets"].get("heatmap.input.x")
if rect is not None:
    low, high = rect["low"], rect["high"]
    largest = float(np.abs(x).max())
    failures.check(abs(low + largest) <= 1e-5 and abs(high - largest) <= 1e-5,
                   f"X's colour range is ±{largest} (its largest magnitude): shown [{low}, {high}]")
    cell_w, cell_h = rect["w"] / d_model, rect["h"] / length
    failures.check(cell_h >= 1.5, f"(test design) X's rows are {cell_h:.2f} px tall: each has a pixel of its own")
    bad = []
    for i in range(length):
        for j in range(d_model):
            px = int(rect["x"] + (j + 0.5) * cell_w)
            py = int(rect["y"] + (i + 0.5) * cell_h)
            got = rows[py][px]
            want = colormap(DIVERGING, (x[i, j] - low) / (high - low))
            if max(abs(a - b) for a, b in zip(got, want)) > TOLERANCE:
                bad.append(f"({i},{j}) = {x[i, j]}: {tuple(round(c) for c in want)} expected, got {tuple(got)}")
    failures.check(not bad, f"X's cells: {len(bad)} wrong: " + "; ".join(bad[:6]))
failures.finish()
