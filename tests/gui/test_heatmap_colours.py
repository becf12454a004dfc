"""Screenshot test: the heatmaps of seed 003's example show, in each cell, the
colour of the colormap at the value computed here independently (a plain
Python softmax(QKᵀ/√d_k)), and a fully masked row with a −∞ fill shows NaN."""
import json
import math
import os
import sys

from gui_test_util import (DIVERGING, NAN_COLOUR, VIRIDIS, Failures, cell_sample_point, close,
                           colormap, mean_colour, output_dir, screenshot)

binary = sys.argv[1]
out = output_dir("heatmap-colours")
failures = Failures()
TOLERANCE = 4  # 8-bit rounding and the shader's float interpolation

# Seed 003 section 6's inputs (Q, K given directly, d_k = 2).
Q = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [1.0, 1.0], [0.3, 0.7]]
K = [[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]


def scaled_scores(q, k):
    return [[sum(a * b for a, b in zip(qi, kj)) / math.sqrt(len(qi)) for kj in k] for qi in q]


def softmax_rows(m):
    result = []
    for row in m:
        finite = [v for v in row if v != -math.inf]
        if not finite:
            result.append([math.nan] * len(row))
            continue
        top = max(finite)
        e = [math.exp(v - top) if v != -math.inf else 0.0 for v in row]
        result.append([x / sum(e) for x in e])
    return result


scaled = scaled_scores(Q, K)
weights = softmax_rows(scaled)
# Invariant of the expected values themselves.
for row in weights:
    assert abs(sum(row) - 1.0) < 1e-12

# 1. Weights: viridis over [0, 1].
image, widgets = screenshot(binary, "seed-003-example", "weights", out, "weights", ["--head", "0"])
rect = widgets["widgets"].get("heatmap.weights.h0")
failures.check(rect is not None, "the weights heatmap of head 0 is on screen")
if rect:
    failures.check((rect["rows"], rect["cols"]) == (5, 5), f"weights are 5x5, got {rect['rows']}x{rect['cols']}")
    failures.check((rect["low"], rect["high"]) == (0.0, 1.0), f"weights range is [0, 1], got [{rect['low']}, {rect['high']}]")
    for i in range(5):
        for j in range(5):
            expected = colormap(VIRIDIS, weights[i][j])
            got = mean_colour(image, *cell_sample_point(rect, i, j))
            failures.check(close(got, expected, TOLERANCE),
                           f"weights[{i}][{j}] = {weights[i][j]:.4f}: expected colour {expected}, got {got}")

# 2. Scaled scores: diverging, symmetric around 0 at the largest |value|.
image, widgets = screenshot(binary, "seed-003-example", "scaled", out, "scaled", ["--head", "0"])
rect = widgets["widgets"].get("heatmap.scaled.h0")
failures.check(rect is not None, "the scaled-scores heatmap of head 0 is on screen")
if rect:
    largest = max(abs(v) for row in scaled for v in row)
    failures.check(abs(rect["high"] - largest) < 1e-5 and abs(rect["low"] + largest) < 1e-5,
                   f"scaled range is ±{largest:.5f}, got [{rect['low']}, {rect['high']}]")
    for i in range(5):
        for j in range(5):
            expected = colormap(DIVERGING, (scaled[i][j] + largest) / (2 * largest))
            got = mean_colour(image, *cell_sample_point(rect, i, j))
            failures.check(close(got, expected, TOLERANCE),
                           f"scaled[{i}][{j}] = {scaled[i][j]:.4f}: expected colour {expected}, got {got}")

# 3. A fully masked row (row 1; cell (2, 1) masked too). With a −∞ fill its weights
#    are NaN (magenta) and so is its context row. With −1e9 its weights are uniform,
#    1/3 each: masked cells that still get weight (> 1e-3) show it inside a hatched
#    frame, so the row's centres are the colour of 1/3; the uniform weights show in its
#    context row too, the plain mean of V's rows. Rows 0 and 2: ordinary softmax colours.
MASK = [[1, 1, 1], [0, 0, 0], [1, 0, 1]]
V = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
HATCH_GREYS = (102, 158)  # the shader's stripes, 0.40 and 0.62 of 255
LEAK_VISIBLE = 1e-3  # a masked weight above this is drawn, not hidden (the trace's leak warning)


def session_with_masked_row(fill):
    return {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": "direct", "attention": "self", "d_model": 2, "num_heads": 1,
                   "bias": False, "scale": "sqrt_dk", "mask_fill": fill, "mask": {"custom": MASK}},
        "tokens": ["a", "b", "c"],
        "q": Q[:3], "k": K[:3], "v": V,
    }


def is_hatching(colour):
    return max(colour) - min(colour) < 3 and HATCH_GREYS[0] - 2 <= colour[0] <= HATCH_GREYS[1] + 2


for fill, label in (("-inf", "minus-inf"), (-1e9, "minus-1e9")):
    fill_value = -math.inf if fill == "-inf" else fill
    masked = [[s if MASK[i][j] else fill_value for j, s in enumerate(row)] for i, row in enumerate(scaled_scores(Q[:3], K[:3]))]
    w = softmax_rows(masked)
    if fill != "-inf":
        assert all(abs(v - 1 / 3) < 1e-12 for v in w[1])  # the promise: uniform
    context = [[sum(w[i][k] * V[k][c] for k in range(3)) for c in range(2)] for i in range(3)]
    path = os.path.join(out, f"session-masked-row-{label}.json")  # screenshot() writes <name>.json
    json.dump(session_with_masked_row(fill), open(path, "w"))
    image, widgets = screenshot(binary, path, "weights", out, f"masked-row-{label}")
    rect = widgets["widgets"].get("heatmap.weights.h0")
    failures.check(rect is not None, f"[{label}] the weights heatmap is on screen")
    if rect:
        for i in range(3):
            for j in range(3):
                got = mean_colour(image, *cell_sample_point(rect, i, j))
                if math.isnan(w[i][j]):
                    failures.check(close(got, NAN_COLOUR, 2), f"[{label}] weights ({i},{j}) is NaN magenta, got {got}")
                elif not MASK[i][j] and w[i][j] <= LEAK_VISIBLE:
                    failures.check(is_hatching(got), f"[{label}] weights ({i},{j}) = {w[i][j]:.4f} is masked: hatched grey, got {got}")
                else:
                    want = colormap(VIRIDIS, w[i][j])
                    failures.check(close(got, want, TOLERANCE), f"[{label}] weights ({i},{j}) = {w[i][j]:.4f}: {want}, got {got}")
    image, widgets = screenshot(binary, path, "context", out, f"masked-row-{label}-context")
    rect = widgets["widgets"].get("heatmap.context.h0")
    failures.check(rect is not None, f"[{label}] the context heatmap is on screen")
    if rect:
        top = max(abs(v) for row in context for v in row if not math.isnan(v))
        for i in range(3):
            for c in range(2):
                got = mean_colour(image, *cell_sample_point(rect, i, c))
                want = NAN_COLOUR if math.isnan(context[i][c]) else colormap(DIVERGING, (context[i][c] + top) / (2 * top))
                failures.check(close(got, want, TOLERANCE), f"[{label}] context ({i},{c}) = {context[i][c]:.4f}: {want}, got {got}")

# A colour bar is one ramp: no grid line between its 64 steps (wide heatmaps drew them as squares).
image, widgets = screenshot(binary, "default", "output", out, "colour-bar")
bar = widgets["widgets"]["colorbar.output"]
y = int(bar["y"] + bar["h"] / 2)
row = [image[2][y][x] for x in range(int(bar["x"]) + 1, int(bar["x"] + bar["w"]) - 1)]
jumps = [x for x, (a, b) in enumerate(zip(row, row[1:])) if max(abs(p - q) for p, q in zip(a, b)) > 40]
failures.check(len(row) > 200 and not jumps, f"the output's colour bar ({len(row)} px) runs without breaks: jumps at {jumps[:5]}")

failures.finish()
