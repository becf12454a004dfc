"""Screenshot test: a heatmap with more cells than pixels (1300 tokens, causal, -inf fill) shows
each block of cells as the cell of largest magnitude, reduced here independently in NumPy from a
float64 PyTorch computation of the session: every sampled pixel has the colour of its block's
largest |score| (a block whose cells are all masked: the hatching's greys), and the texture is
at most a texel per pixel but never below 512 texels a side (app/gui/gl/gl_heatmap.hpp), here the
peaks the worker reduced with the trace (core/numerics/stage_summary.hpp)."""
import math
import sys

import wiring_util as wu
from gui_test_util import DIVERGING, Failures, output_dir, screenshot

np = wu.np
binary = sys.argv[1]
out = output_dir("heatmap-reduction")
failures = Failures()
rng = np.random.default_rng(7)
L, D = 1300, 8
TOLERANCE = 4  # 8-bit rounding and the shader's float interpolation


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(3).tolist()


session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": D, "num_heads": 1, "bias": False,
               "scale": "sqrt_dk", "mask": {"causal": True}, "mask_fill": "-inf",
               "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "x": [matrix(L, D)],
    "weights": {"layout": "math", **{f"w_{n}": matrix(D, D, 0.6) for n in "qkvo"}},
}
path = f"{out}/session.json"
with open(path, "w") as f:
    wu.json.dump(session, f)
masked = wu.masked_cells(session, 1, L, L)[0]                            # (L, L) True = masked
scores = np.where(masked, -np.inf, wu.session_stages(session)["scaled"][0, 0])  # (L, L) the masked stage
low, high = wu.symmetric_range(scores)

(width, height, rows), widgets = screenshot(binary, path, "masked", out, "masked")
image = np.array(rows, dtype=float).reshape(height, width, 3)
rect = widgets["widgets"].get("heatmap.masked.h0")
failures.check(rect is not None, "the masked scores of head 0 are on screen")
if rect is None:
    failures.finish()
failures.check((rect["rows"], rect["cols"], rect["shown_rows"]) == (L, L, L), f"the whole {L}x{L} matrix: {rect}")
failures.check(abs(rect["low"] - low) <= 1e-4 * abs(low) and abs(rect["high"] - high) <= 1e-4 * high,
               f"colour range ±{high:.5f}, shown [{rect['low']}, {rect['high']}]")

# At most a texel per pixel, at least 512: blocks of `block` cells a side.
pixels = math.ceil(max(rect["w"], rect["h"]))
block = math.ceil(L / max(512, pixels))
texels = math.ceil(L / block)
failures.check(block > 1 and (rect["texel_rows"], rect["texel_cols"]) == (texels, texels),
               f"{L} cells on {pixels} px: {texels} texels of {block} cells, got {rect['texel_rows']}x{rect['texel_cols']}")
# On at most 512 px the texture is the peaks the worker reduced with the trace (StageSummary::peaks,
# for the stage the window opened on): the pixels below check that reduction. (Zoomed, the window
# reduces the part on screen itself: test_heatmap_zoom.py.)
failures.check(pixels <= 512 and rect["peaks_ahead"] == 1,
               f"the peaks reduced with the trace, on {pixels} px: peaks_ahead {rect['peaks_ahead']}")

# The reduction: per block the largest |finite value| (both signs kept as candidates when
# float32 could rank two nearly equal magnitudes the other way), -inf where all are masked.
candidates = {}
for ti in range(texels):
    for tj in range(texels):
        cells = scores[ti * block:(ti + 1) * block, tj * block:(tj + 1) * block].ravel()
        finite = cells[np.isfinite(cells)]
        if finite.size == 0:
            candidates[ti, tj] = None  # every cell masked: hatching
            continue
        top = np.abs(finite).max()
        candidates[ti, tj] = sorted(set(finite[np.abs(finite) >= top * (1 - 1e-4)].tolist()))

# Pixel centres sample the nearest texel: u = (x + 0.5 - left) / width of the quad. Every
# third pixel each way, skipping those within 5% of a texel's edge.
bad, checked, hatched = [], 0, 0
for py in range(int(rect["y"]), int(rect["y"] + rect["h"]), 3):
    for px in range(int(rect["x"]), int(rect["x"] + rect["w"]), 3):
        u = (px + 0.5 - rect["x"]) / rect["w"] * texels
        v = (py + 0.5 - rect["y"]) / rect["h"] * texels
        if not (0 < u < texels and 0 < v < texels) or min(u % 1, 1 - u % 1, v % 1, 1 - v % 1) < 0.05:
            continue
        got = image[py, px]
        want = candidates[int(v), int(u)]
        checked += 1
        if want is None:
            hatched += 1
            grey = abs(got[0] - got[1]) < 3 and abs(got[1] - got[2]) < 3 and \
                wu.HATCH_GREYS[0] - 2 <= got[0] <= wu.HATCH_GREYS[1] + 2
            if not grey:
                bad.append(f"pixel ({px},{py}) texel ({int(v)},{int(u)}) all masked: grey expected, got {tuple(got)}")
            continue
        colours = [np.array(wu.expected_colour(value, low, high, DIVERGING)) for value in want]
        if min(np.abs(got - c).max() for c in colours) > TOLERANCE:
            bad.append(f"pixel ({px},{py}) texel ({int(v)},{int(u)}) = {want}: {tuple(colours[0].round())} expected, got {tuple(got)}")
failures.check(checked > 5000 and hatched > 1000, f"enough pixels sampled: {checked}, {hatched} of them hatched")
failures.check(not bad, f"{len(bad)} of {checked} pixels: " + "; ".join(bad[:6]))
failures.finish()
