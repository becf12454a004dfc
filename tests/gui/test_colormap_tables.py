"""The heatmap colours against an independent source: matplotlib's published tables
(Debian's python3-matplotlib: viridis's 256 entries, ColorBrewer's 11-class RdBu),
not the shader's stop tables that gui_test_util re-states for the other tests.

1. gui_test_util's VIRIDIS stops are viridis at t = 0, 1/9, ..., 1, and its DIVERGING
   stops 0, 2, 3, 4, 6 are the RdBu entries they claim (reversed: blue for negative);
   so a wrong colour table copied into both shader and tests fails here.
2. On screen: the colour bars of seed 003's weights (viridis) and scaled scores
   (diverging) are drawn by the shader in 64 steps; step 7k is t = k/9 exactly, step 21k
   is t = k/3, so those pixels must be matplotlib's colours there."""
import os
import sys

try:
    import numpy as np
    from matplotlib import _cm, _cm_listed  # the data tables, without a plotting backend
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    print("SKIP: numpy and matplotlib are needed (Debian: python3-numpy python3-matplotlib)")
    sys.exit(77)

from gui_test_util import DIVERGING, VIRIDIS, Failures, output_dir, screenshot

binary = sys.argv[1]
out = output_dir("colormap-tables")
failures = Failures()
viridis_table = np.array(_cm_listed._viridis_data) * 255  # (256, 3)
rdbu = np.array(_cm._RdBu_data) * 255  # (11, 3), red (positive) first


def viridis(t):
    """matplotlib's viridis at t, linear between its 256 entries."""
    x = t * 255
    i = min(int(x), 254)
    return viridis_table[i] + (viridis_table[i + 1] - viridis_table[i]) * (x - i)


# RdBu reversed (blue first): the 7-class stops the shader uses that are also 11-class entries.
DIVERGING_IN_RDBU = {0: rdbu[9], 2: rdbu[6], 3: rdbu[5], 4: rdbu[4], 6: rdbu[1]}

# 1. The tables.
for k, stop in enumerate(VIRIDIS):
    want = viridis(k / 9)
    failures.check(np.abs(np.array(stop) - want).max() <= 2, f"VIRIDIS[{k}] {stop} is viridis({k}/9) = {want.round(1)}")
for k, want in DIVERGING_IN_RDBU.items():
    failures.check(np.abs(np.array(DIVERGING[k]) - want).max() <= 1, f"DIVERGING[{k}] {DIVERGING[k]} is RdBu {want.round(1)}")


# 2. The colour bars on screen.
def bar_colour(image, rect, step):
    """The pixel at the middle of colour bar step `step` (of 64)."""
    _, _, rows = image
    x = int(rect["x"] + (step + 0.5) * rect["w"] / 64)
    y = int(rect["y"] + rect["h"] / 2)
    return np.array(rows[y][x], dtype=float)


checks = (
    ("weights", "colorbar.weights.h0", {7 * k: viridis(k / 9) for k in range(10)}),
    ("scaled", "colorbar.scaled.h0", {21 * k: DIVERGING_IN_RDBU[2 * k] for k in range(4)}),
)
for stage, bar, points in checks:
    image, widgets = screenshot(binary, "seed-003-example", stage, out, stage, ["--head", "0"])
    rect = widgets["widgets"].get(bar)
    failures.check(rect is not None and rect["w"] >= 128, f"{bar} on screen, at least 2 pixels per step: {rect}")
    if not rect:
        continue
    for step, want in points.items():
        got = bar_colour(image, rect, step)
        failures.check(np.abs(got - want).max() <= 3, f"{bar} step {step}: {tuple(got)} vs matplotlib {tuple(want.round(1))}")
failures.finish()
