"""Today's attention in the window (issue 14): every step of the llama-block preset (8 query heads sharing
2 K/V heads, RoPE, causal) renders in English and Chinese without a crash or a missing glyph, with K, V and
k_rot drawn per K/V head (two heatmaps, not eight); explain on a score cell of query head 5 sums
q_rot[5] · k_rot[K/V head 1] (computed here from the trace's JSON); the timeline shows the RoPE, ALiBi and
x_pos steps only for the presets that have them; the other new presets open at their new step; the lesson
from the seeds' MHA to a Llama block quotes its measured changes."""
import json
import os
import subprocess
import sys

from gui_test_util import Failures, output_dir, screenshot, screenshots

binary, source_dir = sys.argv[1], sys.argv[2]
out = output_dir("modern-steps")
failures = Failures()

LLAMA_STEPS = ["x", "qkv", "rope", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "w_o",
               "output"]

for lang in ("en", "zh"):
    shots = screenshots(binary, "llama-block", LLAMA_STEPS, out, f"llama-{lang}",
                        ["--lang", lang, "--open", "explain", "--pin", "scores:0:5:3:1"])
    for step, (_, widgets) in shots.items():
        w = widgets["widgets"]
        failures.check(widgets.get("step") == step, f"[{lang}] at step {step}, got {widgets.get('step')}")
        failures.check(widgets.get("missing_glyphs", "") == "", f"[{lang}] {step}: missing glyphs {widgets.get('missing_glyphs')}")
        timeline = sorted(k[len("timeline."):] for k in w if k.startswith("timeline."))
        failures.check(timeline == sorted(LLAMA_STEPS), f"[{lang}] the timeline has the RoPE step and no other new one: {timeline}")
        if step in ("qkv", "rope"):
            stage = "k" if step == "qkv" else "k_rot"
            kv = sorted(k for k in w if k.startswith(f"heatmap.{stage}.h"))
            failures.check(kv == [f"heatmap.{stage}.h0", f"heatmap.{stage}.h1"],
                           f"[{lang}] {stage} is drawn per K/V head (2), got {kv}")

# Explain score (head 5, query 3, key 1): q_rot of head 5 against k_rot of K/V head 5 ÷ 4 = 1.
trace = json.loads(subprocess.run([binary, "trace", "llama-block", "--json"], capture_output=True, text=True,
                                  check=True).stdout)
q_rot, k_rot = trace["stages"]["q_rot"], trace["stages"]["k_rot"]
expected = sum(a * b for a, b in zip(q_rot[0][5][3], k_rot[0][1][1]))
_, widgets = screenshot(binary, "llama-block", "scores", out, "llama-explain-score",
                        ["--open", "explain", "--pin", "scores:0:5:3:1"])
value = widgets.get("explain.value")
failures.check(value is not None and abs(float(value.replace("−", "-")) - expected) < 1e-3 * max(1.0, abs(expected)),
               f"explained score = q_rot[5][3]·k_rot[kv 1][1] = {expected:.4f}, got {value!r}")
# A K/V cell of K/V head 1 and a k_rot cell explain without error.
for pin, stage in (("k:0:1:2:3", "qkv"), ("k_rot:0:1:2:3", "rope"), ("q_rot:0:7:4:1", "rope")):
    _, widgets = screenshot(binary, "llama-block", stage, out, "llama-explain-" + pin.split(":")[0],
                            ["--open", "explain", "--pin", pin])
    failures.check(widgets.get("explain.kind", "") != "", f"{pin} is explained, got kind {widgets.get('explain.kind')!r}")

# The other presets: their new step is in the timeline, renders, and explains a cell of it.
for preset, step, pin, new in (("alibi-6-heads", "alibi", "biased:0:4:5:2", "alibi"),
                               ("longformer-global", "x_pos", "x_pos:0:0:3:5", "x_pos"),
                               ("mistral-window", "masked", "masked:0:3:6:2", "rope")):
    for lang in ("en", "zh"):
        _, widgets = screenshot(binary, preset, step, out, f"{preset}-{lang}",
                                ["--lang", lang, "--open", "explain", "--pin", pin])
        w = widgets["widgets"]
        failures.check(f"timeline.{new}" in w, f"[{lang}] {preset}: timeline has {new}")
        failures.check(widgets.get("step") == step, f"[{lang}] {preset}: at step {step}, got {widgets.get('step')}")
        failures.check(widgets.get("explain.kind", "") != "", f"[{lang}] {preset}: {pin} is explained")
        failures.check(widgets.get("missing_glyphs", "") == "", f"[{lang}] {preset}: missing glyphs {widgets.get('missing_glyphs')}")
        others = {"rope", "alibi", "x_pos"} - {new}
        failures.check(not any(f"timeline.{o}" in w for o in others), f"[{lang}] {preset}: no step of an option it lacks")

# The lesson from the seeds' MHA to a Llama block (lessons 13-16): each step's text is filled with measured
# numbers; the GQA step says the cache shrinks from 2·8·4 = 64 to 2·2·4 = 16 numbers per token (256 → 64 bytes).
for number, stage, needed in ((13, "weights", []), (14, "masked", ["224 cells"]), (15, "qkv", ["16 K/V numbers", "64", "256"]),
                              (16, "rope", [])):
    for lang in ("en", "zh"):
        _, widgets = screenshot(binary, "default", "x", out, f"lesson{number}-{lang}", ["--lang", lang, "--lesson", str(number)])
        text = widgets.get("lesson.text.lines", "")
        failures.check(text != "" and "{" not in text, f"[{lang}] lesson {number} has its numbers: {text!r}")
        failures.check(widgets.get("step") == stage, f"[{lang}] lesson {number} shows step {stage}, got {widgets.get('step')}")
        if lang == "en":
            for part in needed:
                failures.check(part in text, f"lesson {number} says {part!r}: {text!r}")

# No recovery file left behind in this test's state folder.
state = os.environ.get("XDG_STATE_HOME")
if state and os.path.exists(os.path.join(state, "attention-lab", "recovery.json")):
    os.remove(os.path.join(state, "attention-lab", "recovery.json"))
failures.finish()
