"""Fuse and split W_Q, W_K, W_V from the window, each change saved with Ctrl+S and read back
(the Fused QKV lab's button edits the session's weights, and Settings' "fused W_QKV" box
unchecked splits them; no test had clicked either that way). Grouped K/V heads (d_model 8,
4 query heads, 2 K/V heads: W_K and W_V are 8 x 4) with biases, so the blocks differ in width:
1. the lab's Fuse: the file holds w_qkv = [W_Q | W_K | W_V] and b_qkv = [b_Q | b_K | b_V]
   (numpy on the values written before the app started), and no separate parts;
2. the lab's Split: W_Q, W_K, W_V and the biases equal the originals exactly, w_qkv is gone;
3. (the lab closed from the Labs menu: it lies over Settings) Settings' box on (fuse), then off (split): the originals exactly again;
4. Ctrl+Z after that split gives back the fused file of step 3."""
import copy
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
failures = Failures()
out = output_dir("wiring-fused")
rng = np.random.default_rng(9)
D, KV = 8, 4  # d_model; h_kv · d_k
session = wu.random_session(rng, 4, D, 4, causal=True, num_kv_heads=2)
for name in "kv":
    session["weights"][f"w_{name}"] = wu.random_matrix(rng, D, KV, 1.2)
    session["weights"][f"b_{name}"] = wu.random_matrix(rng, 1, KV, 0.8)[0]
original = copy.deepcopy(session["weights"])


def f32(values):
    return np.array(values, dtype=np.float32)


def fused_weights(saved):
    return f32(np.concatenate([f32(original[f"w_{n}"]) for n in "qkv"], axis=1)), \
        f32(np.concatenate([f32(original[f"b_{n}"]) for n in "qkv"]))


def check_fused(label, saved):
    w = saved["weights"]
    want_w, want_b = fused_weights(saved)
    failures.check(not {"w_q", "w_k", "w_v", "b_q", "b_k", "b_v"} & set(w), f"[{label}] no separate parts left: {sorted(w)}")
    got_w, got_b = f32(w.get("w_qkv", [[0]])), f32(w.get("b_qkv", [0]))
    failures.check(got_w.shape == (D, D + 2 * KV) and np.array_equal(got_w, want_w),
                   f"[{label}] w_qkv {got_w.shape} is [W_Q | W_K | W_V] {want_w.shape}")
    failures.check(got_b.shape == (D + 2 * KV,) and np.array_equal(got_b, want_b),
                   f"[{label}] b_qkv {got_b.shape} is [b_Q | b_K | b_V]")
    failures.check(np.array_equal(f32(w.get("w_o", [[0]])), f32(original["w_o"])), f"[{label}] W_O untouched")


def check_split(label, saved):
    w = saved["weights"]
    failures.check("w_qkv" not in w and "b_qkv" not in w, f"[{label}] w_qkv and b_qkv are gone: {sorted(w)}")
    for name in ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o"):
        got = f32(w.get(name, [[np.nan]]))
        failures.check(got.shape == f32(original[name]).shape and np.array_equal(got, f32(original[name])),
                       f"[{label}] {name} {got.shape} equals the original exactly")


def toggle(app, name, what):
    app.edit(lambda: app.click_widget(name), what)


app = wu.Wiring(binary, session, out, "fused", failures, ["--open", "fused_qkv"])
try:
    app.wait_for(lambda s: "labs.fused.toggle" in s["widgets"] and "labs.fused.max_diff" in s, "the Fused QKV lab")

    toggle(app, "labs.fused.toggle", "the lab's Fuse button")
    check_fused("lab fuse", app.save())
    state = app.wait_for(lambda s: "labs.fused.max_diff" in s, "the lab compares the fused product")
    failures.check(float(state.get("labs.fused.max_diff", "1")) < 1e-5,
                   f"[lab fuse] the lab still finds fused == separate: {state.get('labs.fused.max_diff')}")

    toggle(app, "labs.fused.toggle", "the lab's Split button")
    check_split("lab split", app.save())

    # The lab's window lies over Settings: closed from the Labs menu, as a learner would.
    app.click_widget("menu.labs", "the Labs menu")
    app.click_widget("menu.labs.fused", "the Labs menu's Fused QKV item")
    failures.check(app.gone("lab.fused_qkv", 10), "the Labs menu item closes the Fused QKV window")
    toggle(app, "config.fused", "Settings' fused W_QKV box on")
    check_fused("settings fuse", app.save())
    toggle(app, "config.fused", "Settings' fused W_QKV box off")
    check_split("settings split", app.save())

    revision = int(app.settled()["revision"])
    app.away()
    wu.hold_keys("ctrl", "z")
    app.wait_for(lambda s: int(s["revision"]) != revision, "Ctrl+Z undoes the split")
    check_fused("undo split", app.save())
finally:
    app.kill()
failures.finish()
