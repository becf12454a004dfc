"""File > Import matrix… into a weight, driven in the real window: the dialog's "Into" combo and its
"PyTorch layout" box had never been used by a test (imports only ever went into X), and a wrong
target or a missed transpose silently gives wrong weights. Each import is saved with Ctrl+S and
the file read back, against the array numpy wrote (never the app's own numbers):
1. a 6 x 4 .npy into W_Q (6 x 6): refused, the dialog names both shapes, Cancel leaves the session
   unmodified (revision and file unchanged);
2. a 6 x 6 .npy A into W_Q, box off: weights.w_q == A exactly, not A.T; nothing else changed;
3. the same file, box on (PyTorch's (out, in) layout): weights.w_q == A.T exactly, not A."""
import json
import os
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
failures = Failures()
out = output_dir("wiring-import")
rng = np.random.default_rng(23)
D = 6
session = wu.random_session(rng, 4, D, 2, causal=True)
matrix = rng.normal(size=(D, D)).round(3).astype(np.float32)  # not symmetric: A and A.T differ
matrix_path = os.path.join(out, "w_q.npy")
np.save(matrix_path, matrix)
wrong_path = os.path.join(out, "wrong.npy")
np.save(wrong_path, rng.normal(size=(D, 4)).astype(np.float32))


def f32(values):
    return np.array(values, dtype=np.float32)


def open_import_dialog(app, target, torch_box_clicks):
    """File > Import matrix…, Into -> `target`, the PyTorch layout box clicked `torch_box_clicks` times."""
    app.click_widget("menu.file", "the File menu")
    app.click_widget("files.menu.import", "File > Import matrix…")
    app.wait_for(lambda s: "files.dialog.import_target" in s["widgets"], "the import dialog")
    option = "files.dialog.import_target." + target
    for _ in range(3):
        app.click_widget("files.dialog.import_target", "the Into combo")
        app.wait_for(lambda s: option in s["widgets"], f"the Into combo lists {target}")
        app.click(app.settled(), option)
        if app.gone(option, 3.0):
            break
    app.wait_for(lambda s: "files.dialog.torch_layout" in s["widgets"], "a weight target offers the PyTorch layout box")
    for _ in range(torch_box_clicks):
        app.click_widget("files.dialog.torch_layout")


def type_path(app, path):
    """Click the name field, replace what it holds with `path`, Enter."""
    app.click_widget("files.dialog.name")
    app.wait_for(lambda s: s["text_input"] == "yes", "the name field takes typing")
    wu.hold_keys("ctrl", "a")
    wu.type_text(path, 30)
    wu.hold_keys("Return")


def unchanged_except_w_q(label, saved, before):
    for name, values in before["weights"].items():
        if name not in ("w_q", "layout"):
            failures.check(np.array_equal(f32(saved["weights"].get(name)), f32(values)), f"[{label}] {name} unchanged")
    failures.check(np.array_equal(f32(saved["x"]), f32(before["x"])), f"[{label}] X unchanged")


app = wu.Wiring(binary, session, out, "import", failures)
try:
    start = json.load(open(app.path))
    revision = int(app.settled()["revision"])

    # 1. The wrong shape.
    open_import_dialog(app, "w_q", 0)
    type_path(app, wrong_path)
    state = app.wait_for(lambda s: s.get("file_dialog_error"), "a 6 x 4 file into W_Q is refused")
    message = state.get("file_dialog_error", "").replace(" ", "").replace("×", "x")
    failures.check(f"{D}x{D}" in message and f"{D}x4" in message, f"[wrong shape] the message names 6 x 6 and 6 x 4: {message!r}")
    app.click_widget("files.dialog.cancel")
    failures.check(app.gone("files.dialog", 10), "[wrong shape] Cancel closes the dialog")
    state = app.settled()
    failures.check(state["modified"] == "no" and int(state["revision"]) == revision,
                   f"[wrong shape] the session is unchanged: modified {state['modified']}, revision {state['revision']}")
    written = os.stat(app.path).st_mtime_ns
    saved = app.save()
    deadline = time.time() + 10
    while os.stat(app.path).st_mtime_ns == written and time.time() < deadline:  # unmodified, Ctrl+S still writes
        time.sleep(0.05)
    time.sleep(0.2)
    saved = json.load(open(app.path))
    failures.check(os.stat(app.path).st_mtime_ns != written, "[wrong shape] Ctrl+S writes the file")
    failures.check(np.array_equal(f32(saved["weights"]["w_q"]), f32(start["weights"]["w_q"])),
                   "[wrong shape] W_Q in the file is as it was")
    unchanged_except_w_q("wrong shape", saved, start)

    # 2. Math layout (in, out): as it is.
    app.edit(lambda: (open_import_dialog(app, "w_q", 0), type_path(app, matrix_path)), "importing A into W_Q")
    app.wait_for(lambda s: "files.dialog" not in s["widgets"], "the dialog closes after the import")
    saved = app.save()
    got = f32(saved["weights"]["w_q"])
    failures.check(got.shape == (D, D) and np.array_equal(got, matrix) and not np.array_equal(got, matrix.T),
                   f"[box off] W_Q is the file's matrix as it is:\n{got}\nvs\n{matrix}")
    unchanged_except_w_q("box off", saved, start)

    # 3. PyTorch layout (out, in): transposed on import.
    app.edit(lambda: (open_import_dialog(app, "w_q", 1), type_path(app, matrix_path)), "importing A into W_Q, torch layout")
    app.wait_for(lambda s: "files.dialog" not in s["widgets"], "the dialog closes after the import")
    saved = app.save()
    got = f32(saved["weights"]["w_q"])
    failures.check(got.shape == (D, D) and np.array_equal(got, matrix.T) and not np.array_equal(got, matrix),
                   f"[box on] W_Q is the file's matrix transposed:\n{got}\nvs\n{matrix.T}")
    unchanged_except_w_q("box on", saved, start)
finally:
    app.kill()
failures.finish()
