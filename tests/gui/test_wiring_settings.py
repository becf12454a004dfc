"""Every Settings control, driven in the real window (xdotool), reaches the session
and the screen. For each: the control is clicked or typed into, Ctrl+S saves the
session file, the file must hold the change, and a heatmap the change affects
must show, cell by cell, the colour of the value a float64 PyTorch computation of
the saved file gives (tests/torch/reference.py, through wiring_util).

Run 1 (projection, causal mask, weights and dropout steps): bias off, fused W_QKV,
scale none / custom 0.25, mask fill "0" from the list and -1.5 typed, dropout p,
training, seed, then direct mode.
Run 2 (sizes): cross attention, Lk +, Lq +, batch + (and the heatmaps' batch
selector on item 1), d_model + twice (5 does not divide 2 heads: an error; 6 does),
token labels typed for a query and a key, Lq and d_model typed as 12 (through 1: the
tokens and inputs must survive), read back from the hover tooltip."""
import os
import re
import sys

import wiring_util as wu
from gui_test_util import Failures, ctrl_click, hold_keys, output_dir, type_text

np = wu.np
binary = sys.argv[1]
out = output_dir("wiring-settings")
failures = Failures()
rng = np.random.default_rng(17)


def matrix(rows, cols, scale=1.0):
    return (rng.normal(size=(rows, cols)) * scale).round(2).tolist()


def projection_session(batch, length, d_model, heads, causal):
    return {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": "projection", "attention": "self", "d_model": d_model, "num_heads": heads,
                   "bias": True, "scale": "sqrt_dk", "mask": {"causal": causal}, "mask_fill": "-inf",
                   "dropout": {"p": 0.0, "training": False, "seed": 0}},
        "tokens": [f"t{i}" for i in range(length)],
        "x": [matrix(length, d_model) for _ in range(batch)],
        "weights": {"layout": "math",
                    **{f"w_{n}": matrix(d_model, d_model, 1.2) for n in "qkvo"},
                    **{f"b_{n}": matrix(1, d_model, 0.8)[0] for n in "qkvo"}},
    }


def check_stage(app, label, saved, stage, batch=0, previous=None):
    """The heads and head average of `stage` (weights or dropped) for one batch item vs the reference.
    Returns the expected values, so the next step can check its change is visible."""
    values = wu.session_stages(saved)[stage][batch]  # (h, Lq, Lk)
    if previous is not None and previous.shape == values.shape:
        failures.check(not np.allclose(previous, values, equal_nan=True),
                       f"[{label}] (test design) the change alters {stage}, so a dead control would show")
    state, pixels = app.screen()
    heads, len_q, len_kv = values.shape
    masked = wu.masked_cells(saved, batch + 1, len_q, len_kv)[batch]
    value_range = wu.probability_range(values)
    for h in range(heads):
        wu.check_heatmap(failures, label, state, pixels, f"{stage}.h{h}", values[h], value_range, masked=masked)
    if heads > 1:
        wu.check_heatmap(failures, label, state, pixels, f"{stage}.avg", values.mean(axis=0), value_range,
                         masked=masked)
    return values


# Run 1: the computation's switches.
app = wu.Wiring(binary, projection_session(1, 3, 4, 2, causal=True), out, "switches", failures,
                ["--stage", "weights"])
try:
    saved = app.save()
    shown = check_stage(app, "start", saved, "weights")

    app.edit(lambda: app.click(app.settled(), "config.bias"), "bias off")
    saved = app.save()
    failures.check(saved["config"]["bias"] is False and not [k for k in saved["weights"] if k.startswith("b_")],
                   f"[bias] saved without bias: bias={saved['config']['bias']}, weights {sorted(saved['weights'])}")
    shown = check_stage(app, "bias off", saved, "weights", previous=shown)

    parts = [np.array(saved["weights"][f"w_{n}"]) for n in "qkv"]
    app.edit(lambda: app.click(app.settled(), "config.fused"), "fused W_QKV on")
    saved = app.save()
    w = saved["weights"]
    failures.check("w_qkv" in w and not {"w_q", "w_k", "w_v"} & set(w) and
                   np.array_equal(np.array(w.get("w_qkv", [[0]])), np.concatenate(parts, axis=1)),
                   f"[fused] saved W_QKV is [W_Q | W_K | W_V] and the parts are gone: {sorted(w)}")
    check_stage(app, "fused", saved, "weights")  # the same numbers, now from W_QKV

    app.edit(lambda: app.choose("config.scale", "config.scale.option.1"), "scale: none")
    saved = app.save()
    failures.check(saved["config"]["scale"] == "none", f"[scale none] saved scale {saved['config']['scale']!r}")
    shown = check_stage(app, "scale none", saved, "weights", previous=shown)

    app.edit(lambda: app.choose("config.scale", "config.scale.option.2"), "scale: custom")
    app.edit(lambda: app.type_into("config.scale_factor", "0.25"), "typing the factor 0.25")
    saved = app.save()
    failures.check(saved["config"]["scale"] == 0.25, f"[scale 0.25] saved scale {saved['config']['scale']!r}")
    shown = check_stage(app, "scale 0.25", saved, "weights", previous=shown)

    # Causal: row 0 sees key 0 only, so a fill of 0 instead of −∞ moves its weights.
    app.edit(lambda: app.choose("config.mask_fill", "config.mask_fill.option.4"), "mask fill 0 from the list")
    saved = app.save()
    failures.check(saved["config"]["mask_fill"] == 0, f"[fill 0] saved mask_fill {saved['config']['mask_fill']!r}")
    shown = check_stage(app, "fill 0", saved, "weights", previous=shown)

    app.edit(lambda: app.type_into("config.mask_fill_value", "-1.5", select_all=True), "typing the fill -1.5")
    saved = app.save()
    failures.check(saved["config"]["mask_fill"] == -1.5, f"[fill -1.5] saved mask_fill {saved['config']['mask_fill']!r}")
    shown = check_stage(app, "fill -1.5", saved, "weights", previous=shown)
    # The field writes a fill as the list does (-1e20, not printf's -1e+20).
    app.edit(lambda: app.type_into("config.mask_fill_value", "-1e20", select_all=True), "typing the fill -1e20")
    saved = app.save()
    failures.check(saved["config"]["mask_fill"] == -1e20 and app.settled().get("config.mask_fill_value") == "-1e20",
                   f"[fill -1e20] saved mask_fill {saved['config']['mask_fill']!r}, the field reads "
                   f"{app.settled().get('config.mask_fill_value')!r}")
    shown = check_stage(app, "fill -1e20", saved, "weights", previous=shown)
    # A typo (the letter O for a zero) is refused aloud, and the fill stays what it was.
    revision = int(app.settled()["revision"])
    app.type_into("config.mask_fill_value", "-1e2O", select_all=True)
    state = app.wait_for(lambda s: "config.mask_fill.bad" in s["widgets"], "a fill that is no number is explained")
    failures.check(state.get("config.mask_fill.bad", "").startswith("“-1e2O” is not a number: the fill stays -1e20.")
                   and int(state["revision"]) == revision and state.get("config.mask_fill_value") == "-1e20",
                   f"[fill -1e2O] refused, nothing edited: {state.get('config.mask_fill.bad')!r}, "
                   f"revision {state['revision']} (was {revision}), the field reads {state.get('config.mask_fill_value')!r}")
    # Undo goes back to the fill -1.5: the refusal named a typo made beside -1e20, so it goes too.
    app.away()
    wu.hold_keys("ctrl", "z")
    state = app.wait_for(lambda s: int(s["revision"]) > revision, "Ctrl+Z after the refused fill")
    failures.check(app.save()["config"]["mask_fill"] == -1.5 and "config.mask_fill.bad" not in state["widgets"],
                   f"[undo after -1e2O] the fill back to -1.5, the refusal gone: {state.get('config.mask_fill.bad')!r}")
    app.edit(lambda: app.type_into("config.mask_fill_value", "−1e9", select_all=True), "typing the fill −1e9")
    state = app.settled()
    failures.check(app.save()["config"]["mask_fill"] == -1e9 and "config.mask_fill.bad" not in state["widgets"],
                   f"[fill −1e9] the list's minus sign typed, the refusal gone: {state.get('config.mask_fill.bad')!r}")

    # Dropout, on the dropout step.
    app.go_to_step("dropped")
    app.edit(lambda: app.type_into("config.dropout_p", "0.3"), "typing dropout p 0.3")
    saved = app.save()
    dropout = saved["config"]["dropout"]
    failures.check(abs(dropout["p"] - 0.3) < 1e-6, f"[dropout p] saved p {dropout['p']}")
    shown = check_stage(app, "p 0.3, eval", saved, "dropped")  # eval: dropped = weights

    app.edit(lambda: app.click(app.settled(), "config.dropout_training"), "training on")
    saved = app.save()
    failures.check(saved["config"]["dropout"]["training"] is True, f"[training] saved {saved['config']['dropout']}")
    shown = check_stage(app, "training, seed 0", saved, "dropped", previous=shown)

    app.edit(lambda: app.type_into("config.dropout_seed", "7"), "typing dropout seed 7")
    saved = app.save()
    failures.check(saved["config"]["dropout"]["seed"] == 7, f"[seed] saved {saved['config']['dropout']}")
    check_stage(app, "training, seed 7", saved, "dropped", previous=shown)

    # Direct mode: Q, K, V become the inputs.
    app.go_to_step("weights")
    shown = wu.session_stages(saved)["weights"][0]
    app.edit(lambda: app.click(app.settled(), "config.mode.direct"), "direct mode")
    saved = app.save()
    failures.check(saved["config"]["mode"] == "direct" and {"q", "k", "v"} <= set(saved) and "x" not in saved,
                   f"[direct] saved mode {saved['config']['mode']} with inputs {sorted(k for k in saved if len(k) == 1)}")
    check_stage(app, "direct", saved, "weights")
    app.kill()
finally:
    app.kill()

# Run 2: sizes, batch, token labels.
app = wu.Wiring(binary, projection_session(1, 3, 4, 2, causal=False), out, "sizes", failures, ["--stage", "weights"])
try:
    app.edit(lambda: app.click(app.settled(), "config.cross"), "cross attention")
    saved = app.save()
    failures.check(saved["config"]["attention"] == "cross" and "x_kv" in saved,
                   f"[cross] saved attention {saved['config']['attention']}, inputs {sorted(k for k in saved if k.startswith('x'))}")
    check_stage(app, "cross", saved, "weights")

    app.edit(lambda: app.click(app.settled(), "config.len_kv.plus"), "Lk +")
    saved = app.save()
    failures.check(np.array(saved["x_kv"]).shape == (1, 4, 4) and len(saved.get("tokens_kv", [])) == 4,
                   f"[Lk] saved x_kv {np.array(saved['x_kv']).shape}, tokens_kv {saved.get('tokens_kv')}")
    check_stage(app, "Lk 4", saved, "weights")

    app.edit(lambda: app.click(app.settled(), "config.len_q.plus"), "Lq +")
    saved = app.save()
    x_q = np.array(saved.get("x_q", saved.get("x")))
    failures.check(x_q.shape == (1, 4, 4) and len(saved["tokens"]) == 4, f"[Lq] saved x_q {x_q.shape}")
    check_stage(app, "Lq 4", saved, "weights")

    app.edit(lambda: app.click(app.settled(), "config.batch.plus"), "batch +")
    saved = app.save()
    x_q = np.array(saved.get("x_q", saved.get("x")))
    failures.check(x_q.shape == (2, 4, 4) and np.array(saved["x_kv"]).shape == (2, 4, 4),
                   f"[batch] saved x_q {x_q.shape}, x_kv {np.array(saved['x_kv']).shape}")
    # The new item has new (seeded random) inputs: its heatmaps differ from item 0's.
    app.type_into("view.batch", "1")
    app.wait_for(lambda s: s.get("view_batch") == "1", "the heatmaps' batch selector shows item 1")
    check_stage(app, "batch item 1", saved, "weights", batch=1,
                previous=wu.session_stages(saved)["weights"][0])

    app.edit(lambda: app.click(app.settled(), "config.d_model.plus"), "d_model + (5)")
    state = app.wait_for(lambda s: s["error"] == "heads_do_not_divide", "d_model 5 with 2 heads is an error")
    app.edit(lambda: app.click(app.settled(), "config.d_model.plus"), "d_model + (6)")
    state = app.wait_for(lambda s: s["error"] == "", "d_model 6 with 2 heads is valid")
    saved = app.save()
    failures.check(saved["config"]["d_model"] == 6 and np.array(saved["weights"]["w_q"]).shape == (6, 6)
                   and np.array(saved["x_kv"]).shape == (2, 4, 6),
                   f"[d_model] saved d_model {saved['config']['d_model']}, w_q {np.array(saved['weights']['w_q']).shape}")
    check_stage(app, "d_model 6", saved, "weights", batch=1)

    for field, text in (("config.token.0", "cat"), ("config.token_kv.1", "mat")):
        app.edit(lambda: app.type_into(field, text, select_all=True), f"typing the token {text}")
    saved = app.save()
    failures.check(saved["tokens"][0] == "cat" and saved["tokens_kv"][1] == "mat",
                   f"[tokens] saved tokens {saved['tokens']}, tokens_kv {saved['tokens_kv']}")

    # Typing a two-digit size passes through its first digit (Lq 1, d_model 1): each keystroke must
    # resize the session the field started from, or the tokens and inputs past the first are lost.
    def type_digits(name, digits):
        state = app.wait_for(lambda s: name in s["widgets"], f"{name} on screen")
        rect = state["widgets"][name]
        ctrl_click(app.window, int(rect["x"] + 12), int(rect["y"] + rect["h"] / 2))
        app.wait_for(lambda s: s["text_input"] == "yes", f"Ctrl+click on {name} starts typing")
        hold_keys("ctrl", "a")
        for digit in digits:  # one keystroke a frame, each an edit the learner sees
            app.edit(lambda: type_text(digit), f"typing {digit} into {name}")
        hold_keys("Return")
        app.wait_for(lambda s: s["text_input"] == "no", f"Enter ends typing into {name}")

    before = saved
    x_before = np.array(before["x_q"])
    type_digits("config.len_q", "12")
    saved = app.save()
    x_q = np.array(saved["x_q"])
    failures.check(x_q.shape == (2, 12, 6) and saved["tokens"][:4] == before["tokens"]
                   and np.array_equal(x_q[:, :4], x_before),
                   f"[Lq typed 12] x_q {x_q.shape}, tokens {saved['tokens']} (were {before['tokens']}); "
                   f"rows 0-3 kept: {x_q.shape[1] >= 4 and np.array_equal(x_q[:, :4], x_before)}")
    before = saved
    type_digits("config.d_model", "12")
    saved = app.save()
    x_q, w_q = np.array(saved["x_q"]), np.array(saved["weights"]["w_q"])
    failures.check(x_q.shape == (2, 12, 12) and np.array_equal(x_q[:, :, :6], np.array(before["x_q"]))
                   and np.array_equal(w_q[:6, :6], np.array(before["weights"]["w_q"])),
                   f"[d_model typed 12] x_q {x_q.shape}, w_q {w_q.shape}: the first 6 columns kept")
    check_stage(app, "Lq and d_model typed 12", saved, "weights", batch=1)

    # A letter typed into a size (the letter O for a zero) is dropped by ImGui's integer field: the field
    # says so while typing goes on, nothing is edited, and Enter ends typing and the message.
    rect = app.settled()["widgets"]["config.len_q"]
    ctrl_click(app.window, int(rect["x"] + 12), int(rect["y"] + rect["h"] / 2))
    app.wait_for(lambda s: s["text_input"] == "yes", "Ctrl+click on config.len_q starts typing")
    revision = int(app.settled()["revision"])
    type_text("O")
    state = app.wait_for(lambda s: "config.len_q.bad" in s["widgets"], "a letter typed into Lq is named")
    failures.check(state.get("config.len_q.bad", "").startswith("“O” cannot be part of a whole number")
                   and int(state["revision"]) == revision,
                   f"[Lq typed O] named, nothing edited: {state.get('config.len_q.bad')!r}, revision "
                   f"{state['revision']} (was {revision})")
    hold_keys("Return")
    state = app.wait_for(lambda s: s["text_input"] == "no", "Enter ends typing into config.len_q")
    failures.check("config.len_q.bad" not in state["widgets"] and len(app.save()["tokens"]) == 12,
                   f"[Lq typed O] after Enter: message gone, still 12 tokens: {state.get('config.len_q.bad')!r}")

    # The tooltip over weights.h1 (0, 1) names both tokens and gives the value.
    expected = wu.session_stages(saved)["weights"][1, 1, 0, 1]
    state = app.settled()
    rect = state["widgets"]["heatmap.weights.h1"]
    wu.xdotool("mousemove", "--window", app.window, *wu.cell_centre(rect, 0, 1))
    state = app.wait_for(lambda s: s.get("tooltip"), "hovering a cell shows its tooltip")
    lines = state.get("tooltip", "").split("\n")
    failures.check(len(lines) == 3 and re.search(r"\bcat\b", lines[1]) and re.search(r"\bmat\b", lines[1]),
                   f"[tokens] the tooltip names the row token 'cat' and the key token 'mat': {lines}")
    match = re.search(r" = (-?[0-9.]+)$", lines[-1])
    failures.check(match and abs(float(match.group(1)) - expected) <= 5e-5,
                   f"[tooltip] value of weights[1, 1, 0, 1] is {expected:.4f}: {lines[-1]!r}")
finally:
    app.kill()
failures.finish()
