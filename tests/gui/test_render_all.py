"""Every built-in preset (and a 1x1 session) x every left tab x the first, the
mask, the softmax and the last stage renders with exit 0, and every window
--open knows opens on every one of them (a lab once read past W_K on the grouped-K/V
examples only; the sanitizer run of this test reads every window on every example). A failure names
the command; an abort (ImGui's 64-column table limit was one) is exit 134.

Each session's twelve pictures come from one window (`--stage a,b --tab c,d`):
one process each took 2-3 s under the sanitizers, 575 s for this test. The
pictures of such a run equal one-picture runs' (checked here on one session),
and a failing run is taken apart picture by picture to name the failing one."""
import json
import os
import re
import subprocess
import sys
import time

from gui_test_util import Failures, output_dir, read_png

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


def run(label, args, pictures=("",), record=True):
    """Runs the app once; records a failure unless it exits 0 with every picture written
    (`pictures`: the suffixes the app adds to --out for several stages or tabs)."""
    png = os.path.join(out, re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".png")
    command = [binary, "screenshot", *args, "--out", png, "--size", "1280x800"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        code, stderr = result.returncode, result.stderr
    except subprocess.TimeoutExpired:
        code, stderr = "timeout", ""
    written = [png[:-4] + suffix + ".png" for suffix in pictures]
    missing = [p for p in written if not os.path.exists(p) or os.path.getsize(p) == 0]
    ok = code == 0 and not missing
    if record:
        failures.check(ok, f"{label}: exit {code}, missing {missing}: {' '.join(command)}\n{stderr[-600:]}")
    return ok


def same_pictures(batch_png, single_png):
    """Equal but for the status line at the bottom (it shows the trace's milliseconds)."""
    batch, single = read_png(batch_png), read_png(single_png)
    status_top = single[1] - 40
    differ = [y for y in range(single[1]) if batch[2][y] != single[2][y]]
    return batch[:2] == single[:2] and all(y >= status_top for y in differ), differ[:5]


def window_names():
    """The windows --open knows, as its error message for an unknown one lists them."""
    result = subprocess.run([binary, "screenshot", "default", "--stage", "x", "--out", os.path.join(out, "x.png"),
                             "--open", "no-such-window"], capture_output=True, text=True, timeout=30)
    listed = re.search(r"--open takes a window name: (.*)", result.stderr)
    return [w.strip() for w in listed.group(1).split(",") if w.strip()] if listed else []


TABS = ["config", "matrices", "mask"]
start = time.time()
for source in sources:
    name = os.path.basename(source)
    direct = '"direct"' in open(source if source.endswith(".json") else
                                os.path.join(source_dir, "assets", "presets", source + ".json")).read()
    # The first stage of a direct session is Q, K, V given; of a projection session X.
    stages = ["qkv" if direct else "x", "masked", "weights", "output"]
    suffixes = [f"-{stage}-{tab}" for stage in stages for tab in TABS]
    args = [source, "--stage", ",".join(stages), "--tab", ",".join(TABS)]
    if not run(name, args, suffixes, record=False):
        for stage in stages:  # name the picture that fails
            for tab in TABS:
                run(f"{name}-{stage}-{tab}", [source, "--stage", stage, "--tab", tab])
print(f"presets x stages x tabs: {time.time() - start:.1f} s")

# A picture of a several-picture run is the one a run of its own takes, later in the list too.
run("default-alone", ["default", "--stage", "weights", "--tab", "mask"])
ok, differ = same_pictures(os.path.join(out, "default-weights-mask.png"), os.path.join(out, "default-alone.png"))
failures.check(ok, f"default's weights + mask tab, taken ninth of twelve, equals it taken alone (rows {differ})")
listed = subprocess.run([binary, "default", "--stage", "x,weights"], capture_output=True, text=True, timeout=30)
failures.check(listed.returncode == 2 and "is for screenshot" in listed.stderr,
               f"a list of stages outside screenshot is a usage error: {listed.returncode} {listed.stderr[:200]!r}")

windows = window_names()
failures.check(len(windows) >= 13, f"--help lists the windows --open knows: {windows}")
start = time.time()
for source in sources:
    name = os.path.basename(source)
    opens = [arg for w in windows for arg in ("--open", w)]
    if not run(f"{name}-all-windows", [source, "--stage", "weights", *opens]):
        for w in windows:  # name the window that fails
            run(f"{name}-window-{w}", [source, "--stage", "weights", "--open", w])
print(f"windows: {time.time() - start:.1f} s")
failures.finish()
