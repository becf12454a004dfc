"""Seed 002's fill of −1e-20 leaks weight onto masked keys: the mask and softmax
steps warn with the numbers, one masked key's weight and a row's masked share (EN and 中文), the default example does not, and a
leaked cell shows the colour of its weight (computed here from Q and K by a
plain Python softmax) inside a hatched frame instead of being hidden."""
import json
import math
import subprocess
import sys

from gui_test_util import VIRIDIS, Failures, close, colormap, mean_colour, output_dir, screenshot

binary = sys.argv[1]
out = output_dir("mask-leak")
failures = Failures()
HATCH = [(158, 158, 158), (102, 102, 102)]  # the shader's kMaskedLight / kMaskedDark

# The session's Q and K as given (direct mode), and its mask, from the trace's inputs.
trace = json.loads(subprocess.run([binary, "trace", "seed-002-mask-bug", "--json"], capture_output=True,
                                  text=True, check=True, timeout=60).stdout)
q, k = trace["stages"]["q"][0][0], trace["stages"]["k"][0][0]  # (Lq, d), (Lk, d)
keep = trace["mask"][0]                                       # (Lq, Lk) 1 = attend
fill = -1e-20
weights = []
for i, qi in enumerate(q):
    row = [sum(a * b for a, b in zip(qi, kj)) / math.sqrt(len(qi)) if keep[i][j] else fill
           for j, kj in enumerate(k)]
    top = max(row)
    e = [math.exp(v - top) for v in row]
    weights.append([x / sum(e) for x in e])
leak = max(weights[i][j] for i in range(len(q)) for j in range(len(k)) if not keep[i][j])
failures.check(leak > 0.01, f"seed 002 leaks a visible weight: {leak}")
failures.check(abs(trace["checks"]["masked_weight_max"] - leak) < 1e-5,
               f"trace --json checks.masked_weight_max {trace['checks']['masked_weight_max']} == {leak}")

# One masked key's weight understates the leak: a row's eight masked keys take most of it together.
share = max(sum(w for w, kept in zip(weights[i], keep[i]) if not kept) for i in range(len(q)))
failures.check(share > 5 * leak, f"a row's masked keys together take far more than one: {share} vs {leak}")
for lang, words in (("en", "together a row's masked keys keep up to"), ("zh", "一行中被掩码的键合起来最多占")):
    for stage in ("masked", "weights"):
        _, widgets = screenshot(binary, "seed-002-mask-bug", stage, out, f"seed002-{stage}-{lang}",
                                ["--lang", lang])
        failures.check("checks.masked_leak" in widgets["widgets"], f"[{lang}/{stage}] the leak warning is shown")
        if stage == "masked":  # the step's explanation gives both numbers, as lab_number writes them
            text = widgets.get("explanation.text.lines", "").replace("\n", " ")
            failures.check(words in text and f"{leak:.4g}" in text and f"{share:.4g}" in text,
                           f"[{lang}] the mask step gives one key's {leak:.4g} and a row's {share:.4g}: {text!r}")
for stage in ("masked", "weights"):
    _, widgets = screenshot(binary, "default", stage, out, f"default-{stage}")
    failures.check("checks.masked_leak" not in widgets["widgets"], f"[default/{stage}] no leak warning")
_, widgets = screenshot(binary, "seed-002-mask-bug", "scores", out, "seed002-scores")
failures.check("checks.masked_leak" not in widgets["widgets"], "[seed 002/scores] the warning stays on its steps")

# The leaked cell with the largest weight: its colour inside, hatching on its frame.
image, widgets = screenshot(binary, "seed-002-mask-bug", "weights", out, "seed002-cells")
rect = widgets["widgets"].get("heatmap.weights.h0")
failures.check(rect is not None, "the weights heatmap is on screen")
if rect:
    i, j = max(((i, j) for i in range(len(q)) for j in range(len(k)) if not keep[i][j]),
               key=lambda c: weights[c[0]][c[1]])
    cell_w, cell_h = rect["w"] / rect["cols"], rect["h"] / rect["rows"]
    failures.check(cell_h >= 20, f"cells are big enough to sample: {cell_h}")
    x0, y0 = rect["x"] + j * cell_w, rect["y"] + i * cell_h
    expected = colormap(VIRIDIS, weights[i][j])  # the weights' range is [0, 1]
    inside = mean_colour(image, int(x0 + 0.5 * cell_w), int(y0 + 0.22 * cell_h))
    failures.check(close(inside, expected, 4),
                   f"leaked cell ({i}, {j}) = {weights[i][j]:.4f} shows its colour {expected}, got {inside}")
    frame = image[2][int(y0 + 0.5 * cell_h)][int(x0 + 2)]
    failures.check(any(close(frame, h, 3) for h in HATCH), f"its frame is hatched, got {frame}")
# A hatched (masked, no leak) cell's number is black: white on the mid-grey stripes was hard to read.
image, widgets = screenshot(binary, "causal-decoder", "weights", out, "hatched-text")
rect = widgets["widgets"]["heatmap.weights.h0"]
cell_w, cell_h = rect["w"] / rect["cols"], rect["h"] / rect["rows"]
cx, cy = rect["x"] + 1.5 * cell_w, rect["y"] + 0.5 * cell_h  # row 0, column 1: a future key, masked
rows = image[2]
box = [rows[y][x] for y in range(int(cy - 0.2 * cell_h), int(cy + 0.2 * cell_h))
       for x in range(int(cx - 0.3 * cell_w), int(cx + 0.3 * cell_w))]
white = sum(1 for p in box if min(p) > 235)
black = sum(1 for p in box if max(p) < 40)
failures.check(white == 0 and black >= 5, f"the masked cell's '0.00' is drawn in black ({black} black, {white} white pixels)")

# padded-batch opens on item 0, which has no padding: the mask step says which items show it;
# on item 2 (pinned there) the note goes.
_, widgets = screenshot(binary, "padded-batch", "masked", out, "padded-item0")
text = widgets.get("explanation.text.lines", "").replace("\n", " ")
failures.check("Batch item 0 on screen has no masked cell" in text and "batch items 1, 2 have" in text,
               f"padded-batch item 0: the note names the padded items: {text!r}")
_, widgets = screenshot(binary, "padded-batch", "masked", out, "padded-item2", ["--pin", "masked:2:0:0:0"])
text = widgets.get("explanation.text.lines", "")
failures.check("hatched cells are masked" in text and "on screen has no masked cell" not in text,
               f"padded-batch item 2: no note: {text!r}")
failures.finish()
