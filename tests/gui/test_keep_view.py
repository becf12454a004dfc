"""A session too large to keep whole (issue #16), driven in the real window (xdotool).
A small causal session is opened with --memory-limit below its whole trace: the window
says so (the bytes needed and the limit) and offers "Keep only what this view needs
(N)", N counted here from the shapes. Pressing it shows the weights, cell by cell the
colours of a float64 PyTorch computation (tests/torch/reference.py through wiring_util),
and the status line names the stages not kept. Stepping to the scores shows "not kept"
and "Keep it too"; pressing it shows the scores, checked the same way. At the scaled
step keeping it too would not fit: the window says so and offers what that view needs
alone, which shows the scaled scores. The explain window on a weights cell whose
masked scores are not kept says so. File > Export writes the kept stages (the reference's
values) and says which it did not write; a length that fits keeps every stage again.
In 中文 the same texts show, translated. With a limit only the weights fit under, the
offer keeps the weights alone."""
import os
import shutil
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("keep-view")
failures = Failures()
rng = np.random.default_rng(16)

B, L, D, H = 1, 6, 8, 2
SESSION = wu.random_session(rng, L, D, H, causal=True)


def trace_bytes(square_stages):
    """Bytes of a trace keeping `square_stages` distinct (B, h, L, L) tensors, from the shapes:
    float32 q, context, concat, output (B, L, D); k, v (B, L, D); the softmax's row max and
    row sum (B, h, L); the causal mask (B, L, L); one byte per query row (fully masked)."""
    floats = square_stages * B * H * L * L + 4 * B * L * D + 2 * B * L * D + 2 * B * H * L + B * L * L
    return 4 * floats + B * L


WHOLE = trace_bytes(4)             # scores, scaled, masked, weights (dropped = weights)
LIMIT = trace_bytes(3) + 8         # three of them fit, four do not
WEIGHTS_VIEW = trace_bytes(2)      # the softmax step shows the masked scores and the weights


def no_heatmap(state, prefix):
    return not any(name.startswith("heatmap." + prefix) for name in state["widgets"])


def check_heads(app, label, stage, values, value_range, stops, masked):
    state, pixels = app.screen()
    for h in range(H):
        wu.check_heatmap(failures, label, state, pixels, f"{stage}.h{h}", values[h], value_range,
                         stops=stops, masked=masked)
    return state


def export_and_shrink(app, folder, expected):
    """File > Export of the lean trace: the kept stages written (their values the reference's),
    the others not, and the status says which; then a length that fits keeps everything again."""
    export_dir = os.path.join(folder, "export")
    os.makedirs(export_dir, exist_ok=True)
    app.click_widget("menu.file")
    app.click_widget("export.menu", "File > Export in the menu")
    app.type_into("export.folder", export_dir, select_all=True)
    app.click_widget("export.trace")
    state = app.wait_for(lambda s: "Not written" in s.get("export_status", ""), "the export says what it did not write")
    status = state.get("export_status", "")
    failures.check("masked scores" in status and "scores S = QK" not in status,
                   f"the export names the masked scores as not written, and not the kept scores: {status!r}")
    written = sorted(os.listdir(export_dir))
    failures.check("trace.masked.npy" not in written, f"no file for the masked scores: {written}")
    for stage in ("weights", "scores", "scaled"):
        path = os.path.join(export_dir, f"trace.{stage}.npy")
        failures.check(os.path.exists(path) and np.allclose(np.load(path), expected[stage], atol=1e-5),
                       f"trace.{stage}.npy holds the reference's {stage}")

    for window in ("window.export", "window.explain"):  # their close buttons: the editor is under them
        rect = app.settled()["widgets"][window]
        app.click_at(int(rect["x"] + rect["w"] - 12), int(rect["y"] + 10))
        app.wait_for(lambda s: window not in s["widgets"], f"{window} closes")

    # Three tokens: the whole trace fits again, every stage is kept, no note is left.
    app.edit(lambda: app.type_into("config.len_q", "3", select_all=True), "length 3")
    state = app.wait_for(lambda s: "heatmap.masked.h0" in s["widgets"] and "keep.status" not in s["widgets"],
                         "every stage kept again once the session fits")
    failures.check(state.get("error") == "" and not any(n.startswith("keep.") for n in state["widgets"]),
                   f"no error and no keep note once it fits: {[n for n in state['widgets'] if n.startswith('keep.')]}")
    app.screen()


def run(lang):
    folder = os.path.join(out, lang)
    os.makedirs(folder, exist_ok=True)
    app = wu.Wiring(binary, SESSION, folder, "keep", failures,
                    ["--stage", "weights", "--memory-limit", str(LIMIT), "--open", "explain",
                     "--pin", "weights:0:0:2:1"], lang=lang)
    try:
        expected = wu.session_stages(SESSION)
        masked = wu.masked_cells(SESSION, B, L, L)[0]
        state = app.wait_for(lambda s: "keep.only_view.heatmaps" in s["widgets"], "the keep offer")
        failures.check(state.get("error") == "too_large", f"[{lang}] the session is too large (error {state.get('error')})")
        failures.check("heatmaps.too_large" in state["widgets"], f"[{lang}] the reason is shown above the heatmaps")
        failures.check(state.get("keep.offer_bytes") == str(WEIGHTS_VIEW),
                       f"[{lang}] the offer keeps {WEIGHTS_VIEW} bytes, says {state.get('keep.offer_bytes')}")
        failures.check(no_heatmap(state, "weights"), f"[{lang}] no weights before the learner chooses")
        app.screen()  # keep-<lang>-screen-1.png: the message and the button

        app.edit(lambda: app.click_widget("keep.only_view.heatmaps"), "pressing Keep only what this view needs")
        state = app.wait_for(lambda s: "heatmap.weights.h0" in s["widgets"], "the weights after keeping them")
        failures.check(state.get("error") == "", f"[{lang}] no error once the view's stages are kept")
        weights = expected["weights"][0]
        state = check_heads(app, f"{lang} weights", "weights", weights, wu.probability_range(weights), wu.VIRIDIS, masked)
        failures.check("keep.status" in state["widgets"], f"[{lang}] the status line names the stages not kept")
        failures.check(state.get("modified") == "no", f"[{lang}] keeping stages does not change the document")

        # The scores step: not kept; keeping them too fits.
        app.go_to_step("scores")
        state = app.wait_for(lambda s: "keep.keep_too.heatmaps.scores" in s["widgets"], "Keep it too at the scores")
        failures.check("keep.not_kept.heatmaps.scores" in state["widgets"], f"[{lang}] the scores say not kept")
        failures.check(no_heatmap(state, "scores"), f"[{lang}] no stale scores heatmap")
        app.screen()  # screen-3: the not-kept note
        app.edit(lambda: app.click_widget("keep.keep_too.heatmaps.scores"), "pressing Keep it too")
        app.wait_for(lambda s: "heatmap.scores.h0" in s["widgets"], "the scores after keeping them too")
        scores = expected["scores"][0]
        check_heads(app, f"{lang} scores", "scores", scores, wu.symmetric_range(scores), wu.DIVERGING, None)

        # The scaled step: a fourth stage does not fit; what this view needs alone does.
        app.go_to_step("scaled")
        state = app.wait_for(lambda s: "keep.only_view.heatmaps.scaled" in s["widgets"],
                             "Keep only what this view needs at the scaled step")
        failures.check("keep.keep_too.heatmaps.scaled" not in state["widgets"], f"[{lang}] no Keep it too that would not fit")
        app.edit(lambda: app.click_widget("keep.only_view.heatmaps.scaled"), "pressing Keep only what this view needs")
        app.wait_for(lambda s: "heatmap.scaled.h0" in s["widgets"], "the scaled scores")
        scaled = expected["scaled"][0]
        check_heads(app, f"{lang} scaled", "scaled", scaled, wu.symmetric_range(scaled), wu.DIVERGING, None)

        # Back at the softmax, the masked scores are gone again: the explain window says so.
        app.go_to_step("weights")
        state = app.wait_for(lambda s: "keep.not_kept.heatmaps.masked" in s["widgets"], "the masked scores not kept")
        failures.check("heatmap.weights.h0" in state["widgets"], f"[{lang}] the weights are always kept")
        state, _ = app.screen()  # the softmax step, masked scores not kept; the explain window open
        failures.check(state.get("explain.kind") == "not_kept" and "keep.not_kept.explain.masked" in state["widgets"],
                       f"[{lang}] explaining the pinned weight says its masked scores are not kept "
                       f"(explain.kind {state.get('explain.kind')})")
        if lang == "en":
            export_and_shrink(app, folder, expected)
    finally:
        app.kill()
        shutil.rmtree(os.path.join(folder, "state"), ignore_errors=True)  # no leftover recovery.json


def weights_alone():
    """A limit where the softmax step's masked scores and weights together do not fit but the
    weights alone do: the offer falls back to them, and they show the reference's values."""
    folder = os.path.join(out, "weights-alone")
    os.makedirs(folder, exist_ok=True)
    app = wu.Wiring(binary, SESSION, folder, "weights", failures,
                    ["--stage", "weights", "--memory-limit", str(trace_bytes(1) + 8)])
    try:
        state = app.wait_for(lambda s: "keep.only_weights.heatmaps" in s["widgets"], "the weights-only offer")
        failures.check(state.get("keep.offer_bytes") == str(trace_bytes(1)),
                       f"[weights alone] the offer keeps {trace_bytes(1)} bytes, says {state.get('keep.offer_bytes')}")
        app.edit(lambda: app.click_widget("keep.only_weights.heatmaps"), "pressing Keep only the attention weights")
        app.wait_for(lambda s: "heatmap.weights.h0" in s["widgets"], "the weights after keeping them alone")
        weights = wu.session_stages(SESSION)["weights"][0]
        state = check_heads(app, "weights alone", "weights", weights, wu.probability_range(weights), wu.VIRIDIS,
                            wu.masked_cells(SESSION, B, L, L)[0])
        failures.check("keep.not_kept.heatmaps.masked" in state["widgets"], "[weights alone] the masked scores say not kept")
    finally:
        app.kill()
        shutil.rmtree(os.path.join(folder, "state"), ignore_errors=True)


run("en")
run("zh")
weights_alone()
failures.finish()
