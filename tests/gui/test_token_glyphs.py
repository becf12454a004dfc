"""Token labels in characters no UI text uses are drawn, not shown as '?' (a real window).

The font atlas held the glyphs of the UI's own strings and the common Chinese set: a rare
hanzi (龘), Hangul (고양이) or accented Greek (έ) in a token label was a '?'. The atlas is now
built with the session's token labels too, again when a label typed in the window needs a
glyph it lacks. An emoji (past Debian ImGui's 16-bit glyph codes) stays a '?', and serves as
the measure: a label drawn as '?' has a few dozen lit pixels, 龘 several times more.
1. Opened with the labels: 龘's label has at least 3 times the ink of the emoji's '?',
   고양이's and Ωμέγα's more than one '?', and the app reports no token glyph it lacks.
2. 鱻 typed into a token field (xdotool): saved as typed, and drawn with the same ink test."""
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("token-glyphs")
failures = Failures()
rng = np.random.default_rng(5)

tokens = ["龘", "고양이", "Ωμέγα", "t3", "🐱"]
length, d_model = len(tokens), 4
session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": d_model, "num_heads": 1, "bias": False,
               "scale": "sqrt_dk", "mask": {"causal": False}, "mask_fill": "-inf",
               "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "tokens": tokens,
    "x": [rng.normal(size=(length, d_model)).round(2).tolist()],
    "weights": {"layout": "math", **{f"w_{n}": rng.normal(size=(d_model, d_model)).round(2).tolist() for n in "qkvo"}},
}


def label_ink(state, pixels, row):
    """Lit pixels of row `row`'s token label, left of the weights heatmap's grid."""
    rect = state["widgets"]["heatmap.weights.h0"]
    cell = rect["h"] / rect["rows"]
    top, bottom = int(rect["y"] + row * cell + 0.2 * cell), int(rect["y"] + (row + 1) * cell - 0.2 * cell)
    left, right = max(0, int(rect["x"] - 90)), int(rect["x"] - 2)
    box = pixels[top:bottom, left:right].astype(int)
    return int((box.sum(axis=2) > 3 * 128).sum())


def check_labels(label, state, pixels, rows):
    question = label_ink(state, pixels, len(tokens) - 1)  # the emoji, drawn as '?'
    failures.check(question > 0, f"[{label}] (test design) the emoji's '?' is drawn: {question} lit pixels")
    for row, factor in rows:
        ink = label_ink(state, pixels, row)
        failures.check(ink >= factor * question,
                       f"[{label}] token {row} is drawn with {ink} lit pixels, at least {factor} times "
                       f"the {question} of a '?'")


app = wu.Wiring(binary, session, out, "glyphs", failures, ["--stage", "weights"])
try:
    state, pixels = app.screen()
    failures.check(state.get("missing_token_glyphs") == "",
                   f"no token glyph missing: {state.get('missing_token_glyphs')!r}")
    check_labels("opened", state, pixels, [(0, 3), (1, 2), (2, 2)])

    app.edit(lambda: app.type_into("config.token.3", "鱻", select_all=True), "typing 鱻 into token 3")
    saved = app.save()
    failures.check(saved["tokens"][3] == "鱻", f"(test design) the typed label is saved: {saved['tokens']}")
    state, pixels = app.screen()
    check_labels("typed", state, pixels, [(3, 3)])
finally:
    app.kill()
failures.finish()
