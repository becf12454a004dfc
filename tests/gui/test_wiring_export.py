"""Heatmap interactions and File > Export, driven in the real window (xdotool), checked
against a float64 PyTorch computation of the session (tests/torch/reference.py).

1. The heatmaps' batch field on item 1 (its last key padded): every head and the
   head-average map show the colours of item 1's weights and of their mean over heads.
2. A click pins a cell (the app reports it; a yellow outline is drawn around it), a
   second click unpins it, a third pins it again.
3. Hovering a cell of the average map: the tooltip gives its tokens and value.
4. File > Export (through the menu): the folder typed in; the pinned matrix as CSV and
   .npy (head 1 of item 1, and the head average); the whole trace (trace.<stage>.npy and
   .csv, all 11 stages, every batch item); the PyTorch script, run with --json."""
import json
import os
import re
import subprocess
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir, type_text

np = wu.np
binary = sys.argv[1]
out = output_dir("wiring-export")
failures = Failures()
rng = np.random.default_rng(41)
B, L, D, H = 2, 3, 4, 2
PIN_YELLOW = (255, 200, 0)
STAGES = ["q", "k", "v", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "output"]


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(2).tolist()


session = {
    "format": "attention-lab/session", "version": 1,
    "config": {"mode": "projection", "attention": "self", "d_model": D, "num_heads": H, "bias": True,
               "scale": "sqrt_dk", "mask": {"causal": False, "key_padding": [[1, 1, 1], [1, 1, 0]]},
               "mask_fill": "-inf", "dropout": {"p": 0.0, "training": False, "seed": 0}},
    "tokens": ["red", "green", "blue"],
    "x": [matrix(L, D) for _ in range(B)],
    "weights": {"layout": "math", **{f"w_{n}": matrix(D, D, 1.2) for n in "qkvo"},
                **{f"b_{n}": matrix(1, D, 0.8)[0] for n in "qkvo"}},
}
expected = wu.session_stages(session)
weights = expected["weights"][1]  # (h, Lq, Lk) of batch item 1
masked = wu.masked_cells(session, B, L, L)[1]
export_dir = os.path.join(out, "exported")
os.makedirs(export_dir, exist_ok=True)
for name in os.listdir(export_dir):
    os.remove(os.path.join(export_dir, name))


def pin_outline(pixels, rect, row, col):
    """The pixel just inside the top edge of a cell, where the pin's outline is drawn."""
    x, _ = wu.cell_centre(rect, row, col)
    y = int(rect["y"] + row * rect["h"] / rect["rows"]) + 1
    return pixels[y, x]


def wait_for_file(path, timeout=15.0):
    deadline = time.time() + timeout
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.1)
    return os.path.exists(path)


def compare(label, got, want, tolerance=1e-5):
    problem = wu.reference.compare(label, wu.torch.tensor(np.asarray(got, dtype=np.float64)),
                                   wu.torch.tensor(np.asarray(want, dtype=np.float64)), tolerance)
    failures.check(problem is None, f"[{label}] {problem}")


app = wu.Wiring(binary, session, out, "export", failures, ["--stage", "weights"])
try:
    # 1. Batch item 1, every head and the average.
    app.type_into("view.batch", "1")
    app.wait_for(lambda s: s.get("view_batch") == "1", "the heatmaps show batch item 1")
    state, pixels = app.screen()
    failures.check(not np.allclose(weights, expected["weights"][0], equal_nan=True), "(test design) item 1 differs from item 0")
    for h in range(H):
        wu.check_heatmap(failures, "item 1", state, pixels, f"weights.h{h}", weights[h], wu.probability_range(weights), masked=masked)
    wu.check_heatmap(failures, "item 1", state, pixels, "weights.avg", weights.mean(axis=0), wu.probability_range(weights), masked=masked)

    # 2. Pin, unpin, pin head 1's cell (1, 0).
    rect = state["widgets"]["heatmap.weights.h1"]
    failures.check(state.get("pinned") == "", f"nothing pinned at start: {state.get('pinned')!r}")
    for click, want in ((1, "weights.h1:1:0"), (2, ""), (3, "weights.h1:1:0")):
        app.click_at(*wu.cell_centre(rect, 1, 0))
        state = app.wait_for(lambda s: s.get("pinned") == want, f"click {click} on weights.h1 (1, 0) pins '{want}'")
        state, pixels = app.screen()
        outline = pin_outline(pixels, rect, 1, 0)
        is_yellow = np.abs(outline.astype(int) - PIN_YELLOW).max() <= 10
        failures.check(is_yellow == bool(want), f"click {click}: the pin outline is {'drawn' if want else 'gone'}, pixel {tuple(outline)}")

    # 3. The tooltip over the average map's (2, 1).
    avg_rect = state["widgets"]["heatmap.weights.avg"]
    wu.xdotool("mousemove", "--window", app.window, *wu.cell_centre(avg_rect, 2, 1))
    state = app.wait_for(lambda s: s.get("hovered") == "weights.avg:2:1" and s.get("tooltip"), "the tooltip over weights.avg (2, 1)")
    lines = state.get("tooltip", "").split("\n")
    failures.check(len(lines) == 3 and "blue" in lines[1] and "green" in lines[1],
                   f"the tooltip names the query 'blue' and the key 'green': {lines}")
    match = re.search(r" = (-?[0-9.]+)$", lines[-1] if lines else "")
    average = weights[:, 2, 1].mean()
    failures.check(match and abs(float(match.group(1)) - average) <= 5e-5,
                   f"the tooltip gives the head average {average:.4f}: {lines[-1:]}")

    # 4. File > Export.
    app.click_widget("menu.file")
    app.click_widget("export.menu", "File > Export in the menu")
    # Dragged by its title bar over the editors on the left, off the heatmaps clicked below.
    frame = app.wait_for(lambda s: "window.export" in s["widgets"], "the export window")["widgets"]["window.export"]
    wu.xdotool("mousemove", "--window", app.window, int(frame["x"] + 40), int(frame["y"] + 8))
    time.sleep(0.2)
    wu.xdotool("mousedown", 1)
    time.sleep(0.2)
    wu.xdotool("mousemove", "--window", app.window, 40, int(frame["y"] + 8))
    time.sleep(0.3)
    wu.xdotool("mouseup", 1)
    frame = app.wait_for(lambda s: s["widgets"].get("window.export", {}).get("x", 999) < 100,
                         "the export window moves left")["widgets"].get("window.export")
    app.type_into("export.folder", export_dir, select_all=True)
    app.click_widget("export.pinned_csv")
    app.click_widget("export.pinned_npy")
    csv_path, npy_path = (os.path.join(export_dir, "weights.h1.b1." + ext) for ext in ("csv", "npy"))
    if wait_for_file(csv_path) and wait_for_file(npy_path):
        compare("pinned csv", np.loadtxt(csv_path, delimiter=",", ndmin=2), weights[1])
        compare("pinned npy", np.load(npy_path), weights[1])
    else:
        failures.check(False, f"the pinned matrix was exported: {sorted(os.listdir(export_dir))}")

    # The average map's cell pinned and exported: the mean over heads.
    app.click_at(*wu.cell_centre(avg_rect, 0, 0))
    app.wait_for(lambda s: s.get("pinned") == "weights.avg:0:0", "a click pins the average map's cell")
    app.click_widget("export.pinned_csv")
    avg_path = os.path.join(export_dir, "weights.avg.b1.csv")
    if wait_for_file(avg_path):
        compare("average csv", np.loadtxt(avg_path, delimiter=",", ndmin=2), weights.mean(axis=0))
    else:
        failures.check(False, f"the average map was exported: {sorted(os.listdir(export_dir))}")

    app.click_widget("export.trace")
    for stage in STAGES:
        npy_path, csv_path = (os.path.join(export_dir, f"trace.{stage}.{ext}") for ext in ("npy", "csv"))
        if not (wait_for_file(npy_path) and wait_for_file(csv_path)):
            failures.check(False, f"trace.{stage}.npy/.csv exported")
            continue
        from_npy = np.load(npy_path)
        compare(f"trace.{stage}.npy", from_npy, expected[stage])
        from_csv = np.loadtxt(csv_path, delimiter=",", ndmin=2)
        compare(f"trace.{stage}.csv", from_csv.reshape(expected[stage].shape) if from_csv.size == expected[stage].size
                else from_csv, expected[stage])

    app.click_widget("export.torch")
    script = os.path.join(export_dir, "attention_session.py")
    if wait_for_file(script):
        run = subprocess.run(["/usr/bin/python3", script, "--json"], capture_output=True, text=True, timeout=120)
        failures.check(run.returncode == 0, f"the exported script runs: {run.returncode} {run.stderr[-500:]}")
        if run.returncode == 0:
            stages = json.loads(run.stdout)["stages"]
            for stage in STAGES:
                compare(f"script {stage}", wu.reference.as_tensor(stages[stage]).numpy(), expected[stage])
    else:
        failures.check(False, "the PyTorch script was exported")
finally:
    app.kill()
failures.finish()
