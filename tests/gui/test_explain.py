"""The teaching views in the real app: the explain window on a pinned cell of
seed 003 shows the score's real terms (computed here by hand), the diff view
after an edit of V shows scores and weights unchanged (the diverging colormap's
zero colour) and V changed, every view opens in English and Chinese without
missing glyphs, and on a fused W_qkv the explained Q cell names its slice and
the fused lab outlines exactly that block of W_qkv's columns; on a session without bias
no line says "plus the bias", and with ALiBi and no mask the mask step passes B."""
import json
import math
import os
import subprocess
import sys
import tempfile

from gui_test_util import DIVERGING, Failures, cell_sample_point, close, mean_colour, output_dir, screenshot

binary, source_dir = sys.argv[1], sys.argv[2]
out = output_dir("explain")
failures = Failures()


def facts(widgets):
    return widgets  # facts are top-level keys beside "widgets"


# 1. Explain: score row 0, col 0 of seed 003 = q_0·k_0 = 1.0×1.0 + 0.0×0.5 = 1.0.
for lang in ("en", "zh"):
    image, widgets = screenshot(binary, "seed-003-example", "scores", out, "explain-score-" + lang,
                                ["--open", "explain", "--pin", "scores:0:0:0:0", "--lang", lang])
    f = facts(widgets)
    failures.check(f.get("explain.sum") == "1.0×1.0 + 0.0×0.5 = 1.0",
                   f"[{lang}] explained sum is q_0·k_0 = 1.0×1.0 + 0.0×0.5 = 1.0, got {f.get('explain.sum')!r}")
    failures.check("window.explain" in widgets["widgets"], f"[{lang}] the explain window is on screen")
    failures.check(f.get("missing_glyphs", "") == "", f"[{lang}] no missing glyphs: {f.get('missing_glyphs')}")

# ÷ √2: the scaled cell is 1/√2 = 0.7071.
_, widgets = screenshot(binary, "seed-003-example", "scaled", out, "explain-scaled",
                        ["--open", "explain", "--pin", "scaled:0:0:0:0"])
failures.check(facts(widgets).get("explain.value") == f"{1 / math.sqrt(2):.4f}",
               f"scaled value 1/√2 = 0.7071, got {facts(widgets).get('explain.value')!r}")

# Context [1, 0]: Σ_j α_1j v_j[0] with v[:, 0] = [10, 0, 5, 0, 1], checked by an independent softmax.
Q = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [1.0, 1.0], [0.3, 0.7]]
K = [[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]
V0 = [10.0, 0.0, 5.0, 0.0, 1.0]
scores = [sum(a * b for a, b in zip(Q[1], k)) / math.sqrt(2) for k in K]
e = [math.exp(s - max(scores)) for s in scores]
alpha = [x / sum(e) for x in e]
expected_context = sum(a * v for a, v in zip(alpha, V0))
_, widgets = screenshot(binary, "seed-003-example", "context", out, "explain-context",
                        ["--open", "explain", "--pin", "context:0:0:1:0"])
value = facts(widgets).get("explain.value")
failures.check(value is not None and abs(float(value) - expected_context) < 1e-3,
               f"context[1][0] = {expected_context:.4f}, explained {value!r}")

# 2. Diff: the "before" is seed 003, the current session has one value of V changed.
session = json.load(open(os.path.join(source_dir, "assets/presets/seed-003-example.json")))
session["v"][1][1] = 2.5
edited = os.path.join(out, "seed-003-v-edited.json")
json.dump(session, open(edited, "w"))
for lang in ("en", "zh"):
    image, widgets = screenshot(binary, edited, "context", out, "diff-" + lang,
                                ["--snapshot", "seed-003-example", "--lang", lang])
    f = facts(widgets)
    for stage in ("q", "k", "scores", "scaled", "masked", "weights", "dropped"):
        failures.check(f.get("diff." + "changed." + stage) == "0", f"[{lang}] {stage} unchanged after editing V, got {f.get('diff.changed.' + stage)}")
    failures.check(f.get("diff.changed.v") == "1", f"[{lang}] one cell of V changed, got {f.get('diff.changed.v')}")
    failures.check(f.get("diff.changed.context") == "5", f"[{lang}] column 1 of every context row changed, got {f.get('diff.changed.context')}")
    rect = widgets["widgets"].get("heatmap.diff.v.h0")
    failures.check(rect is not None, f"[{lang}] the V difference heatmap is shown")
    if rect:
        for i in range(5):
            for j in range(2):
                got = mean_colour(image, *cell_sample_point(rect, i, j))
                # after − before: −7.5 at v[1][1] (the low end), 0 elsewhere (the middle: near-white)
                expected = DIVERGING[0] if (i, j) == (1, 1) else DIVERGING[3]
                failures.check(close(got, expected, 4), f"[{lang}] diff V[{i}][{j}]: expected {expected}, got {got}")

# 3. Every view opens, in both languages, with every glyph.
for lang in ("en", "zh"):
    _, widgets = screenshot(binary, "default", "weights", out, "views-" + lang,
                            ["--open", "token_lines", "--open", "heads", "--open", "export", "--open", "explain",
                             "--pin", "weights:0:1:2:3", "--lang", lang])
    f = facts(widgets)
    failures.check(f.get("missing_glyphs", "") == "", f"[{lang}] no missing glyphs: {f.get('missing_glyphs')}")
    failures.check("token_lines.canvas" in widgets["widgets"], f"[{lang}] token lines drawn")
    diff = f.get("heads.max_difference")
    failures.check(diff is not None and float(diff) < 1e-5, f"[{lang}] concat·W_O = Σ heads, max |difference| {diff}")
    failures.check(f.get("explain.kind") not in (None, ""), f"[{lang}] the weight cell is explained")

# 3b. Grouped K/V heads (llama-block: 8 query heads, 2 K/V heads of d_k 4): the reshape window's K/V bar
#     has h_kv·d_k = 8 columns, not d_model = 32, as the trace's K is (1, 2, 8, 4).
k_shape = subprocess.run([binary, "trace", "llama-block", "--summary"], capture_output=True, text=True, check=True).stdout
failures.check(any(line.split()[:2] == ["k", "1x2x8x4"] for line in k_shape.splitlines()), "llama-block's K is 1x2x8x4")
_, widgets = screenshot(binary, "llama-block", "qkv", out, "heads-grouped", ["--open", "heads"])
failures.check(widgets.get("heads.kv_columns") == "8", f"K/V columns in the reshape window: {widgets.get('heads.kv_columns')}")

# 4. Fused W_qkv (seed 004: d_model 8, one head): Q[1][2] comes from W_qkv[:, 0:8], column 2.
OUTLINE = (0, 230, 255)  # heatmap_widget's outline of an explained cell's sources
for lang in ("en", "zh"):
    image, widgets = screenshot(binary, "seed-004-fused", "q", out, "fused-" + lang,
                                ["--open", "explain", "--open", "fused_qkv", "--pin", "q:0:0:1:2", "--lang", lang])
    failures.check(widgets.get("explain.fused_slice") == "0:8:2",
                   f"[{lang}] Q[1][2] is W_qkv[:, 0:8] (W_Q), column 2, got {widgets.get('explain.fused_slice')!r}")
    failures.check(widgets.get("missing_glyphs") == "", f"[{lang}] fused explain: no missing glyphs")
    rect = widgets["widgets"].get("heatmap.labs.fused.W_qkv")
    failures.check(rect is not None and rect["cols"] == 24, f"[{lang}] the fused lab shows W_qkv (8 x 24)")
    if rect:
        cell_w, y = rect["w"] / rect["cols"], int(rect["y"] + 4.5 * rect["h"] / rect["rows"])
        for c in range(25):  # the vertical grid line left of column c (c = 24: the right edge)
            x = int(round(rect["x"] + c * cell_w))
            outlined = any(close(mean_colour(image, x + dx, y, 0), OUTLINE, 60) for dx in (-1, 0, 1))
            failures.check(outlined == (c <= 8), f"[{lang}] W_qkv column line {c} {'is' if c <= 8 else 'is not'} outlined")
# W_qkv's rows are X's 8 features, not tokens (they were labelled "the, cat, ..., mat, 6, 7"); X's and Q's are tokens.
_, widgets = screenshot(binary, "default", "q", out, "fused-labels", ["--open", "fused_qkv"])
for name, first in (("W_qkv", "0"), ("W_Q", "0"), ("X", "the"), ("Q", "the")):
    label = widgets.get(f"heatmap.labs.fused.{name}.first_row_label")
    failures.check(label == first, f"the fused lab's {name} names its row 0 {first!r}: {label!r}")

# 5. What the window says follows the session: cross-attention has no bias, so neither a projection nor the
#    output is "plus the bias" (and no "+ b_c" in the formula); ALiBi with no mask passes B, not S′.
stages = json.loads(subprocess.run([binary, "trace", "cross-attention", "--json"], capture_output=True, text=True,
                                   check=True).stdout)["stages"]
for lang in ("en", "zh"):
    for pin, stage in (("q:0:0:0:0", "q"), ("output:0:-1:1:2", "output")):
        _, widgets = screenshot(binary, "cross-attention", stage, out, f"no-bias-{stage}-{lang}",
                                ["--open", "explain", "--pin", pin, "--lang", lang])
        said = widgets.get("explain.text", "")
        failures.check(said and "b_c" not in said and "plus the bias" not in said and "加上偏置" not in said,
                       f"[{lang}] {pin} on a session without bias: {said!r}")
        expected = stages["q"][0][0][0][0] if stage == "q" else stages["output"][0][1][2]
        failures.check(abs(float(widgets.get("explain.value", "nan")) - expected) < 1e-3,
                       f"[{lang}] {pin} = {expected}, explained {widgets.get('explain.value')}")
alibi = json.load(open(os.path.join(source_dir, "assets", "presets", "alibi-6-heads.json")))
alibi["config"]["mask"] = {"causal": False}
path = os.path.join(tempfile.mkdtemp(), "alibi-no-mask.json")
json.dump(alibi, open(path, "w"))
_, widgets = screenshot(binary, path, "masked", out, "alibi-no-mask", ["--open", "explain", "--pin", "masked:0:0:2:0"])
said = widgets.get("explain.text", "")
failures.check("ALiBi" in said and "scaled score passes" not in said, f"ALiBi with no mask: {said!r}")

failures.finish()
