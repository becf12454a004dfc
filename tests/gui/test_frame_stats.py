"""attention-lab <session> --frame-stats out.json: the window measures itself
(idle redraw, a scripted zoom and pan of an enlarged heatmap, an edit recomputed
every frame, edit->visible latency over at least 20 edits, start-up) and writes a
JSON whose fields must be complete and consistent. No timing is asserted: speed
is judged by bench/frame_stats.sh, not by tests."""
import json
import os
import subprocess
import sys

from gui_test_util import Failures, output_dir

binary, source_dir = sys.argv[1], sys.argv[2]
failures = Failures()
out = output_dir("frame-stats")


def trace_bytes(batch, n, d_model, heads):
    """Self attention, eval, no mask: Q, K, V, context, concat and output are
    (n, d_model) each; scores, scaled (= masked) and weights (= dropped) are
    (heads, n, n); row max and sum (heads, n) floats; one flag byte per row."""
    floats = batch * (6 * n * d_model + 3 * heads * n * n + 2 * heads * n)
    return 4 * floats + batch * n


def run(name, session, frames):
    path = os.path.join(out, name + "-stats.json")  # not the session's own name.json
    command = [binary, session, "--frame-stats", path, "--size", "1600x1000", "--frames", str(frames)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=420)  # the recompute phase may take 180 s
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    failures.check("edit -> visible" in result.stdout and "idle redraw" in result.stdout,
                   f"{name}: a summary is printed: {result.stdout!r}")
    return json.load(open(path))


# The script: 12 wheel notches in, a press, 40 drag moves, a release, 7 notches out,
# a press, 40 moves, a release, 5 notches out (tests and bench read the same phase).
PAN_ZOOM_FRAMES = 12 + 1 + 40 + 1 + 7 + 1 + 40 + 1 + 5
STILL_FRAMES = 4  # the presses and releases do not move the view


def check_pan_zoom(name, pz, n):
    failures.check(pz["error"] == "" and pz["heatmap"] == "weights.h0", f"{name}: the pan/zoom script ran: {pz}")
    failures.check(pz["frames"] == PAN_ZOOM_FRAMES and pz["seconds"] > 0
                   and abs(pz["fps"] - pz["frames"] / pz["seconds"]) < 1e-6 * pz["fps"] + 1e-9
                   and 0 < pz["frame_ms_median"] <= pz["frame_ms_p90"] <= pz["frame_ms_max"],
                   f"{name}: pan/zoom frames and fps: {pz}")
    # The wheel went through ImGui to the heatmap. The zoom stops where four cells span
    # the side (heatmap_widget.cpp); below that every wheel and drag frame moves the view.
    zoom = min(1.25 ** 12, max(1.0, n / 4))
    if zoom < n / 4:
        failures.check(pz["frames_view_moved"] == PAN_ZOOM_FRAMES - STILL_FRAMES, f"{name}: the view moved: {pz}")
    else:
        failures.check(pz["frames_view_moved"] > 0, f"{name}: the view moved: {pz}")
    failures.check(abs(pz["deepest_zoom"] - zoom) < 1e-3 * zoom, f"{name}: 12 notches of 1.25: {pz['deepest_zoom']}")
    failures.check(pz["deepest_shown_cells"] == -(-n // zoom), f"{name}: cells shown at the deepest zoom: {pz}")
    # Whenever a cell covered a pixel, the texture held the cells themselves, not a reduction.
    failures.check(pz["frames_cells_cover_a_pixel"] > 0
                   and pz["of_them_one_texel_per_cell"] == pz["frames_cells_cover_a_pixel"],
                   f"{name}: one texel per cell when zoomed in: {pz}")
    failures.check(pz["back_to_every_head"], f"{name}: 'back' showed every head again: {pz}")
    failures.check(pz["upload_ms_median"] >= 0 and pz["upload_ms_max"] >= pz["upload_ms_median"], f"{name}: uploads {pz}")


def check(name, j, n, frames, background):
    failures.check(j["n"] == n and j["heads"] == 8 and j["d_model"] == 512 and j["batch"] == 1,
                   f"{name}: sizes of the session: {j}")
    failures.check(j["window"] == "1600x1000", f"{name}: window size {j['window']}")
    failures.check(j["trace_bytes"] == trace_bytes(1, n, 512, 8),
                   f"{name}: trace bytes {j['trace_bytes']} != {trace_bytes(1, n, 512, 8)}")
    failures.check(j["computes_in_background"] == background, f"{name}: computes_in_background {j['computes_in_background']}")
    failures.check(0 < j["startup_s"] < 120, f"{name}: start-up {j['startup_s']} s")
    idle = j["idle"]
    failures.check(idle["frames"] == frames and idle["fps"] > 0 and 0 < idle["frame_ms_median"] <= idle["frame_ms_p90"],
                   f"{name}: idle phase {idle}")
    rec = j["recompute"]
    failures.check(rec["frames"] >= frames and rec["seconds"] > 0 and rec["fps"] > 0, f"{name}: recompute phase {rec}")
    failures.check(rec["edits_shown"] >= 20, f"{name}: at least 20 edits were shown (a median of 20): {rec}")
    failures.check(abs(rec["fps"] - rec["frames"] / rec["seconds"]) < 1e-6 * rec["fps"] + 1e-9,
                   f"{name}: fps = frames / seconds: {rec}")
    # Each frame shows at most one new edit.
    failures.check(rec["edits_shown"] <= rec["frames"], f"{name}: no more edits shown than frames: {rec}")
    lat = j["edit_to_visible_ms"]
    failures.check(lat["samples"] == rec["edits_shown"] and 0 < lat["median"] <= lat["p90"] <= lat["max"],
                   f"{name}: latency order median <= p90 <= max: {lat}")
    check_pan_zoom(name, j["pan_zoom"], n)
    m = j["machine"]
    failures.check(m["nproc"] >= 1 and m["renderer"] != "" and len(m["load"].split()) == 3, f"{name}: machine {m}")


# n = 256 (d_model 512, 8 heads) computes inside the edit, below SessionModel's
# threshold: a computation fits in a frame, so the edit shows in that frame.
n256 = run("n256", os.path.join(source_dir, "bench/sessions/frame-n256.json"), 8)
check("n256", n256, 256, 8, False)
failures.check(n256["recompute"]["edits_shown"] == n256["recompute"]["frames"],
               f"n256: one edit shown per frame when computed in the edit: {n256['recompute']}")
new_trace = n256["new_trace_frame"]
failures.check(new_trace["samples"] == n256["recompute"]["frames"] and new_trace["compute_in_frame_ms_median"] > 0
               and new_trace["frame_ms_median"] >= new_trace["upload_ms_median"] >= 0,
               f"n256: every recompute frame drew a new trace, computed in the frame: {new_trace}")
failures.check(n256["idle"]["ui_thread_cpu_ms_median"] > 0, f"n256: UI thread CPU per idle frame: {n256['idle']}")

# n = 1024 (a 108 MiB trace) computes on the worker thread: the edit is visible
# only frames later, so latency spans several frames there.
check("n1024", run("n1024", os.path.join(source_dir, "bench/sessions/frame-n1024.json"), 8), 1024, 8, True)

# A small session written here computes inside the edit, in the same frame.
small = os.path.join(out, "small.json")
with open(os.path.join(source_dir, "bench/sessions/frame-n256.json")) as f:
    session = json.load(f)
session["x"]["random"]["shape"] = [1, 16, 512]
with open(small, "w") as f:
    json.dump(session, f)
small_stats = run("small", small, 12)
check("small", small_stats, 16, 12, False)
# Computed within the edit: every recompute frame shows its own edit.
failures.check(small_stats["recompute"]["edits_shown"] == small_stats["recompute"]["frames"],
               f"small: one edit shown per frame when computed in the edit: {small_stats['recompute']}")

result = subprocess.run([binary, "screenshot", "default", "--stage", "weights", "--out", "x.png", "--frame-stats"],
                        capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 2 and "--frame-stats" in result.stderr,
               f"--frame-stats with screenshot is a usage error: {result.returncode} {result.stderr!r}")
failures.finish()
