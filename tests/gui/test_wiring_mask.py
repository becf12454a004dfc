"""The Mask tab, driven in the real window (xdotool): causal, padding by length (on
batch item 1, chosen with the painter's batch field), painting a cell, unpainting it,
a stroke over two cells (which masks a whole row: NaN with the −∞ fill), "all on", and a
stroke whose last move and release come in one frame.
After each, Ctrl+S: the saved file must hold exactly that mask, the painter grid must
show it (green = attends, grey hatching = masked), and the weights heatmap of that
batch item must show the colours of a float64 PyTorch computation of the saved file."""
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("wiring-mask")
failures = Failures()
rng = np.random.default_rng(29)
B, L, D = 2, 4, 4


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(2).tolist()


session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": D, "num_heads": 1, "bias": False,
               "scale": "sqrt_dk", "mask": {"causal": False}, "mask_fill": "-inf",
               "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "tokens": ["a", "b", "c", "d"],
    "x": [matrix(L, D) for _ in range(B)],
    "weights": {"layout": "math", **{f"w_{n}": matrix(D, D, 1.2) for n in "qkvo"}},
}


def check_screen(label, saved, batch):
    """The painter (batch item shown in it) and the weights heatmap of the same item."""
    masked = wu.masked_cells(saved, B, L, L)[batch]
    state, pixels = app.screen()
    rect = state["widgets"].get("heatmap.mask_painter")
    failures.check(rect is not None and (rect["rows"], rect["cols"]) == (L, L), f"[{label}] the painter is {L}x{L}: {rect}")
    if rect:
        bad = wu.painter_mismatches(pixels, rect, masked)
        failures.check(not bad, f"[{label}] painter cells: " + "; ".join(bad))
    weights = wu.session_stages(saved)["weights"][batch, 0]
    wu.check_heatmap(failures, label, state, pixels, "weights.h0", weights, wu.probability_range(weights), masked=masked)
    return weights


def painter_cell(row, col):
    return wu.cell_centre(app.settled()["widgets"]["heatmap.mask_painter"], row, col)


def stroke_over(row, label, quick):
    """Presses on (row, 0) of the painter, drags to (row, 1) and lets go (with `quick`, the move
    and the release back to back), saves, and checks both cells of item 1 and only they are
    painted; returns the weights shown for item 1."""
    def stroke():
        wu.xdotool("mousemove", "--window", app.window, *painter_cell(row, 0))
        time.sleep(0.2)
        wu.xdotool("mousedown", 1)
        time.sleep(0.3)
        if quick:
            wu.xdotool("mousemove", "--window", app.window, *painter_cell(row, 1), "mouseup", 1)
        else:
            wu.xdotool("mousemove", "--window", app.window, *painter_cell(row, 1))
            time.sleep(0.3)
            wu.xdotool("mouseup", 1)
        time.sleep(0.2)
    app.edit(stroke, f"a {label} over two cells")
    saved = app.save()
    custom = wu.saved_mask(saved, "custom")
    want = np.ones((B, L, L))
    want[1, row, 0] = want[1, row, 1] = 0
    failures.check(custom is not None and np.array_equal(custom, want),
                   f"[{label}] ({row}, 0) and ({row}, 1) of item 1 painted: {custom}")
    return check_screen(label, saved, 1)


app = wu.Wiring(binary, session, out, "mask", failures, ["--stage", "weights", "--tab", "mask"])
try:
    app.wait_for(lambda s: "mask.causal" in s["widgets"], "the mask tab")
    app.edit(lambda: app.click(app.settled(), "mask.causal"), "causal on")
    saved = app.save()
    failures.check(saved["config"]["mask"]["causal"] is True, f"[causal] saved {saved['config']['mask']}")
    check_screen("causal", saved, 0)

    # Batch item 1 in the painter and in the heatmaps; its keys 2, 3 padded.
    app.type_into("mask.batch", "1")
    app.type_into("view.batch", "1")
    app.wait_for(lambda s: s.get("view_batch") == "1", "the heatmaps show batch item 1")
    app.edit(lambda: app.type_into("mask.padding", "2"), "padding length 2 on item 1")
    saved = app.save()
    padding = wu.saved_mask(saved, "key_padding")
    failures.check(padding is not None and padding.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]],
                   f"[padding] item 1 attends to its first 2 keys: {padding}")
    check_screen("padding", saved, 1)

    # Paint (3, 1) of item 1, then unpaint it.
    app.edit(lambda: app.click_at(*painter_cell(3, 1)), "painting (3, 1)")
    saved = app.save()
    custom = wu.saved_mask(saved, "custom")
    want = np.ones((B, L, L))
    want[1, 3, 1] = 0
    failures.check(custom is not None and custom.shape == (B, L, L) and np.array_equal(custom, want),
                   f"[paint] only item 1's (3, 1) is painted: {custom}")
    check_screen("paint", saved, 1)
    app.edit(lambda: app.click_at(*painter_cell(3, 1)), "unpainting (3, 1)")
    saved = app.save()
    custom = wu.saved_mask(saved, "custom")
    failures.check(custom is None or np.all(custom == 1), f"[unpaint] no cell painted any more: {custom}")
    check_screen("unpaint", saved, 1)

    # One stroke over (2, 0) and (2, 1): row 2 of item 1 loses its last two keys.
    weights = stroke_over(2, "stroke", quick=False)
    failures.check(np.isnan(weights[2]).all(), "(test design) row 2 of item 1 is fully masked: NaN, shown magenta")

    app.edit(lambda: app.click(app.settled(), "mask.all_on"), "all on")
    saved = app.save()
    mask = saved["config"].get("mask") or {}
    failures.check(not mask.get("causal") and mask.get("key_padding") is None and mask.get("custom") is None,
                   f"[all on] the saved mask is empty: {mask}")
    check_screen("all on", saved, 1)

    # A quick stroke: the move to (0, 1) and the release sent back to back, so one frame sees
    # both (as on a busy machine, where a frame can take longer than a learner's drag): the
    # cell let go on is painted too.
    stroke_over(0, "quick stroke", quick=True)
finally:
    app.kill()
failures.finish()
