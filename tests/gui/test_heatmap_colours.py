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

# 3. A fully masked row: NaN (magenta) with a −∞ fill, a uniform row with −1e9.
def session_with_masked_row(fill):
    return {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": "direct", "attention": "self", "d_model": 2, "num_heads": 1,
                   "bias": False, "scale": "sqrt_dk", "mask_fill": fill,
                   "mask": {"custom": [[1, 1, 1], [0, 0, 0], [1, 0, 1]]}},
        "tokens": ["a", "b", "c"],
        "q": Q[:3], "k": K[:3], "v": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
    }

for fill, label in (("-inf", "minus-inf"), (-1e9, "minus-1e9")):
    path = os.path.join(out, f"masked-row-{label}.json")
    json.dump(session_with_masked_row(fill), open(path, "w"))
    image, widgets = screenshot(binary, path, "weights", out, f"masked-row-{label}")
    rect = widgets["widgets"].get("heatmap.weights.h0")
    failures.check(rect is not None, f"[{label}] the weights heatmap is on screen")
    if not rect:
        continue
    for j in range(3):
        got = mean_colour(image, *cell_sample_point(rect, 1, j))
        if fill == "-inf":
            failures.check(close(got, NAN_COLOUR, 2), f"[{label}] row 1 col {j} is NaN magenta, got {got}")
        else:
            failures.check(not close(got, NAN_COLOUR, 60), f"[{label}] row 1 col {j} is not NaN, got {got}")
    # Row 0 attends to every key: ordinary colours, never magenta.
    for j in range(3):
        got = mean_colour(image, *cell_sample_point(rect, 0, j))
        failures.check(not close(got, NAN_COLOUR, 60), f"[{label}] row 0 col {j} is a colormap colour, got {got}")

failures.finish()
