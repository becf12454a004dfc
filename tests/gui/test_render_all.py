"""Every built-in preset (and a 1x1 session) x every left tab x the first, the
mask, the softmax and the last stage renders with exit 0, and every window
--open knows opens on a self, a cross and the largest preset. A failure names
the command; an abort (ImGui's 64-column table limit was one) is exit 134."""
import json
import os
import re
import subprocess
import sys
import time

from gui_test_util import Failures, output_dir

binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
out = output_dir("render-all")

presets = sorted(f[:-5] for f in os.listdir(os.path.join(source_dir, "assets", "presets")) if f.endswith(".json"))
failures.check("seed-000-usage" in presets and len(presets) >= 8, f"the built-in presets are found: {presets}")

# The smallest session there is: one token, d_model 1, one head.
tiny = os.path.join(out, "tiny-1x1.json")
with open(tiny, "w") as f:
    json.dump({"format": "attention-lab/session", "version": 1,
               "config": {"mode": "projection", "attention": "self", "d_model": 1, "num_heads": 1,
                          "bias": True, "scale": "sqrt_dk", "mask": {"causal": True}, "mask_fill": "-inf",
                          "dropout": {"p": 0, "training": False, "seed": 0}},
               "tokens": ["a"], "x": [[0.5]],
               "weights": {"layout": "math", "w_q": [[1]], "b_q": [0], "w_k": [[1]], "b_k": [0],
                           "w_v": [[1]], "b_v": [0], "w_o": [[1]], "b_o": [0]}}, f)
sources = presets + [tiny]


def run(label, args):
    """Runs the app once; records a failure unless it exits 0."""
    png = os.path.join(out, re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".png")
    command = [binary, "screenshot", *args, "--out", png, "--size", "1280x800"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        code, stderr = result.returncode, result.stderr
    except subprocess.TimeoutExpired:
        code, stderr = "timeout", ""
    ok = code == 0 and os.path.getsize(png) > 0
    failures.check(ok, f"{label}: exit {code}: {' '.join(command)}\n{stderr[-600:]}")
    return ok


def window_names():
    """The windows --open knows, as its error message for an unknown one lists them."""
    result = subprocess.run([binary, "screenshot", "default", "--stage", "x", "--out", os.path.join(out, "x.png"),
                             "--open", "no-such-window"], capture_output=True, text=True, timeout=30)
    listed = re.search(r"--open takes a window name: (.*)", result.stderr)
    return [w.strip() for w in listed.group(1).split(",") if w.strip()] if listed else []


start = time.time()
for source in sources:
    name = os.path.basename(source)
    direct = '"direct"' in open(source if source.endswith(".json") else
                                os.path.join(source_dir, "assets", "presets", source + ".json")).read()
    # The first stage of a direct session is Q, K, V given; of a projection session X.
    for stage in ["qkv" if direct else "x", "masked", "weights", "output"]:
        for tab in ["config", "matrices", "mask"]:
            run(f"{name}-{stage}-{tab}", [source, "--stage", stage, "--tab", tab])
print(f"presets x stages x tabs: {time.time() - start:.1f} s")

windows = window_names()
failures.check(len(windows) >= 13, f"--help lists the windows --open knows: {windows}")
start = time.time()
for source in ["default", "cross-attention", "seed-000-usage", tiny]:
    name = os.path.basename(source)
    opens = [arg for w in windows for arg in ("--open", w)]
    if not run(f"{name}-all-windows", [source, "--stage", "weights", *opens]):
        for w in windows:  # name the window that fails
            run(f"{name}-window-{w}", [source, "--stage", "weights", "--open", w])
print(f"windows: {time.time() - start:.1f} s")
failures.finish()
