"""The controls of today's attention (issue #14), driven in the real window (xdotool).
After each change Ctrl+S saves the session; the file must hold the change and the
weights heatmaps must show, cell by cell, the colours of a float64 PyTorch
computation of the saved file (tests/torch/reference.py, through wiring_util).

Run 1 (Settings, d_model 16, 4 heads, causal): K/V heads 2 (W_K, b_K mean-pooled per
group, checked with NumPy), RoPE, interleaved pairing, base 100, sliding window,
global token typed, undo, ALiBi, a bad and an out-of-range global token, then the
head count down to 3 (an error) and 2 (K/V heads repeated back).
Run 2 (Mask tab): the window tool (a click sets w) and the global-token tool (a click
toggles a key position), checked on the painter's cells and on the weights.
Run 3 (decode window, GQA + RoPE + window, English): at every step its weights equal
the reference's row t over the cache's positions, and it shows its own differences from the
app's full trace (float rounding); the cache bytes per token.
Run 3b (decode window, left padding, fill -1e9): the rows that see no key are named, weighted
1/n over the cache (not the full trace's 1/L), and left out of the comparison.
Run 4 (decode window on cross attention, 中文): it says why it cannot decode; and the
largest preset is refused for its size instead of freezing the window, with no button to
turn causal on (the session would still be too big); on a
self session without a causal mask the refusal's window is as tall as its text, its button
turns causal on, and then it decodes in a window of full size again; closed while it refuses
and opened from the Labs menu once the Mask tab made the session causal, it is full size too.
Run 5 (RoPE window, English and 中文): the score curve depends only on i − j, and its
value at i = j is q·k of the reference's q and k."""
import json
import os
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
out = output_dir("wiring-modern")
failures = Failures()
rng = np.random.default_rng(41)


def check_weights(app, label, saved, previous=None):
    """Every head's weights heatmap against the reference; returns the values (h, Lq, Lk)."""
    values = wu.session_stages(saved)["weights"][0]
    if previous is not None and previous.shape == values.shape:
        failures.check(not np.allclose(previous, values, equal_nan=True),
                       f"[{label}] (test design) the change alters the weights, so a dead control would show")
    heads, len_q, len_kv = values.shape
    masked = wu.masked_cells(saved, 1, len_q, len_kv)[0]
    state, pixels = app.screen()
    value_range = wu.probability_range(values)
    for h in range(heads):
        wu.check_heatmap(failures, label, state, pixels, f"weights.h{h}", values[h], value_range, masked=masked)
    return values


def positional(saved):
    return saved["config"].get("positional") or {"type": "none"}


# Run 1: Settings.
L, D, H = 5, 16, 4  # d_k 4: two RoPE pairs, so the pairing and the base matter
start = wu.random_session(rng, L, D, H, causal=True)
app = wu.Wiring(binary, start, out, "settings", failures, ["--stage", "weights"])
try:
    shown = check_weights(app, "start", app.save())

    app.edit(lambda: app.choose("config.kv_heads", "config.kv_heads.option.2"), "2 K/V heads")
    saved = app.save()
    # 4 heads of d_k 4 in groups {0, 1}, {2, 3}: the mean of each group's columns.
    w_k = np.array(start["weights"]["w_k"]).reshape(D, 2, 2, 4).mean(axis=2).reshape(D, 8)
    b_k = np.array(start["weights"]["b_k"]).reshape(2, 2, 4).mean(axis=1).reshape(8)
    got_w_k, got_b_k = np.array(saved["weights"]["w_k"]), np.array(saved["weights"]["b_k"])
    failures.check(saved["config"].get("num_kv_heads") == 2 and got_w_k.shape == (D, 8)
                   and np.allclose(got_w_k, w_k, atol=1e-5) and np.allclose(got_b_k, b_k, atol=1e-5)
                   and np.array(saved["weights"]["w_v"]).shape == (D, 8),
                   f"[kv heads] num_kv_heads {saved['config'].get('num_kv_heads')}, W_K {got_w_k.shape} pooled by group")
    shown = check_weights(app, "2 K/V heads", saved, shown)

    app.edit(lambda: app.choose("config.positional", "config.positional.option.2"), "RoPE")
    saved = app.save()
    failures.check(positional(saved)["type"] == "rope", f"[rope] saved {positional(saved)}")
    shown = check_weights(app, "RoPE", saved, shown)

    app.edit(lambda: app.click(app.settled(), "config.rope_interleaved"), "interleaved pairs")
    saved = app.save()
    failures.check(positional(saved).get("rope_style") == "interleaved", f"[rope style] saved {positional(saved)}")
    shown = check_weights(app, "RoPE interleaved", saved, shown)

    app.edit(lambda: app.type_into("config.rope_base", "100", select_all=True), "RoPE base 100")
    saved = app.save()
    failures.check(positional(saved).get("rope_base") == 100, f"[rope base] saved {positional(saved)}")
    shown = check_weights(app, "RoPE base 100", saved, shown)

    app.edit(lambda: app.click(app.settled(), "config.window_on"), "sliding window on")
    saved = app.save()
    failures.check(saved["config"]["mask"].get("window") == L // 2, f"[window] saved {saved['config']['mask']}")
    shown = check_weights(app, "window 2", saved, shown)

    app.edit(lambda: app.type_into("config.global_tokens", "0", select_all=True), "global token 0")
    saved = app.save()
    failures.check(saved["config"]["mask"].get("global_tokens") == [0], f"[global] saved {saved['config']['mask']}")
    shown = check_weights(app, "global token 0", saved, shown)

    revision = int(app.settled()["revision"])
    app.away()
    wu.hold_keys("ctrl", "z")
    app.wait_for(lambda s: int(s["revision"]) > revision, "Ctrl+Z undoes the global token")
    saved = app.save()
    failures.check(not saved["config"]["mask"].get("global_tokens") and saved["config"]["mask"].get("window") == 2,
                   f"[undo] one step back: no global token, the window stays: {saved['config']['mask']}")

    app.edit(lambda: app.choose("config.positional", "config.positional.option.3"), "ALiBi")
    saved = app.save()
    failures.check(positional(saved)["type"] == "alibi", f"[alibi] saved {positional(saved)}")
    shown = check_weights(app, "ALiBi", saved, shown)

    app.type_into("config.global_tokens", "zero", select_all=True)
    state = app.wait_for(lambda s: "config.global_tokens.bad" in s["widgets"], "a global token that is no number is explained")
    failures.check(state.get("config.global_tokens.bad", "").startswith("“zero” is not a list of positions"),
                   f"[global zero] the refusal names the text typed: {state.get('config.global_tokens.bad')!r}")
    app.edit(lambda: app.type_into("config.global_tokens", "9", select_all=True), "global token 9")
    app.wait_for(lambda s: s["error"] != "", "global token 9 of 5 positions is an error")
    app.edit(lambda: app.type_into("config.global_tokens", "1", select_all=True), "global token 1")
    app.wait_for(lambda s: s["error"] == "" and "config.global_tokens.bad" not in s["widgets"],
                 "global token 1 is valid")

    app.edit(lambda: app.type_into("config.heads", "3", select_all=True), "3 heads")
    app.wait_for(lambda s: s["error"] == "heads_do_not_divide", "3 heads do not split d_model 16")
    app.edit(lambda: app.type_into("config.heads", "2", select_all=True), "2 heads")
    app.wait_for(lambda s: s["error"] == "", "2 heads are valid")
    saved = app.save()
    # Back to one K/V head per query head: each pooled head repeated for its 2 query heads.
    repeated = np.repeat(w_k.reshape(D, 2, 1, 4), 2, axis=2).reshape(D, D)
    got_w_k = np.array(saved["weights"]["w_k"])
    failures.check(saved["config"]["num_heads"] == 2 and not saved["config"].get("num_kv_heads")
                   and got_w_k.shape == (D, D) and np.allclose(got_w_k, repeated, atol=1e-5),
                   f"[heads] 2 heads, multi-head, W_K {got_w_k.shape} repeats the pooled heads")
    check_weights(app, "2 heads", saved)
finally:
    app.kill()

# Run 2: the mask painter's window and global-token tools.
L2 = 5
app = wu.Wiring(binary, wu.random_session(rng, L2, 4, 2, causal=False), out, "mask-tools", failures,
                ["--stage", "weights", "--tab", "mask"])


def painter_cell(row, col):
    return wu.cell_centre(app.settled()["widgets"]["heatmap.mask_painter"], row, col)


def check_painter(label, saved):
    masked = wu.masked_cells(saved, 1, L2, L2)[0]
    state, pixels = app.screen()
    bad = wu.painter_mismatches(pixels, state["widgets"]["heatmap.mask_painter"], masked)
    failures.check(not bad, f"[{label}] painter cells: " + "; ".join(bad))
    check_weights(app, label, saved)


try:
    app.wait_for(lambda s: "mask.tool.window" in s["widgets"], "the mask tab's tools")
    app.click(app.settled(), "mask.tool.window")
    app.wait_for(lambda s: "mask.window" in s["widgets"], "the window tool shows its w")
    app.edit(lambda: app.click_at(*painter_cell(0, 2)), "window tool on (0, 2)")
    saved = app.save()
    failures.check(saved["config"]["mask"].get("window") == 3, f"[window tool] |0 − 2| + 1 = 3: {saved['config']['mask']}")
    check_painter("window tool", saved)

    app.click(app.settled(), "mask.tool.global")
    app.wait_for(lambda s: "mask.global_list" in s["widgets"], "the global-token tool lists the tokens")
    app.edit(lambda: app.click_at(*painter_cell(4, 0)), "global tool on (4, 0)")
    saved = app.save()
    failures.check(saved["config"]["mask"].get("global_tokens") == [0], f"[global tool] key 0 global: {saved['config']['mask']}")
    check_painter("global tool", saved)
    app.edit(lambda: app.click_at(*painter_cell(2, 0)), "global tool on (2, 0) again")
    saved = app.save()
    failures.check(not saved["config"]["mask"].get("global_tokens"), f"[global tool] toggled off: {saved['config']['mask']}")
finally:
    app.kill()

# Run 3: the decode window on grouped-query heads with RoPE and a window of 3.
L3, H3 = 6, 4
decoded = wu.random_session(rng, L3, 8, H3, causal=True, num_kv_heads=2, positional={"type": "rope"})
decoded["config"]["mask"]["window"] = 3
decoded["x"].append(wu.random_matrix(rng, L3, 8))  # two sequences: the cache holds both
decoded["weights"]["w_k"] = wu.random_matrix(rng, 8, 4, 1.2)
decoded["weights"]["w_v"] = wu.random_matrix(rng, 8, 4, 1.2)
decoded["weights"]["b_k"] = wu.random_matrix(rng, 1, 4, 0.8)[0]
decoded["weights"]["b_v"] = wu.random_matrix(rng, 1, 4, 0.8)[0]
app = wu.Wiring(binary, decoded, out, "decode", failures, ["--open", "decode"])
try:
    stages = wu.session_stages(decoded)
    reference = stages["weights"][0, 0]  # head 0, (Lq, Lk)
    output_reference = stages["output"][0]  # (Lq, d_model)
    state = app.wait_for(lambda s: s.get("labs.decode.t") == "0", "the decode window at step 0")
    failures.check(state.get("labs.decode.cache_bytes") == str(2 * 2 * 2 * 4)
                   and state.get("labs.decode.multi_head_bytes") == str(2 * 4 * 2 * 4),
                   f"[decode] bytes per token 2·h_kv·d_k·4 = 32, multi-head 64: {state.get('labs.decode.cache_bytes')}, "
                   f"{state.get('labs.decode.multi_head_bytes')}")
    for t in range(L3):
        state = app.wait_for(lambda s: s.get("labs.decode.t") == str(t), f"decode step {t}")
        positions = [int(p) for p in state["labs.decode.positions"].split(", ")]
        weights = np.array([float(w) for w in state["labs.decode.weights"].split(", ")])
        failures.check(positions == list(range(max(0, t - 2), t + 1)),
                       f"[decode t={t}] the rolling cache keeps the last 3 positions: {positions}")
        failures.check(state.get("labs.decode.cache_total_bytes") == str(2 * 2 * 2 * 4 * len(positions) * 2),
                       f"[decode t={t}] K and V of 2 K/V heads · d_k 2 · 4 bytes, {len(positions)} tokens, 2 sequences: "
                       f"{state.get('labs.decode.cache_total_bytes')}")
        failures.check(np.allclose(weights, reference[t, positions], atol=2e-6)
                       and np.allclose(reference[t].sum(), weights.sum(), atol=2e-6),
                       f"[decode t={t}] weights {weights} vs the full trace's row {reference[t]}")
        # The window says how far this step is from row t of the app's own full trace: float rounding only
        # (an ulp of a large score moves its weight by many ulps: measured up to 9.5e-7 in the weights and 1.7e-6
        # of the largest output with the AVX-512 and AVX2 kernels). A wrong key or position would differ by 0.1 or more.
        weight_diff, output_diff = state.get("labs.decode.weight_diff"), state.get("labs.decode.output_diff")
        largest_output = max(1.0, float(np.abs(output_reference[t]).max()))
        failures.check("labs.decode.matches" in state["widgets"] and weight_diff is not None and output_diff is not None
                       and 0 <= float(weight_diff) <= 1e-5 and 0 <= float(output_diff) <= 1e-5 * largest_output,
                       f"[decode t={t}] the step against the full trace: weights {weight_diff}, output {output_diff}")
        if t in (0, L3 - 1):
            app.screen()
        app.click(app.settled(), "labs.decode.next")
finally:
    app.kill()

# Run 3b: left padding (item 0's tokens 0 and 1 are padding) with a fill of -1e9: rows 0 and 1 of
# item 0 see no key. The window says so; their weights are 1/n over the cache, not the full trace's
# 1/L over every key; and its comparison with the full trace covers item 1 only.
padded = wu.random_session(rng, 4, 8, 2, causal=True, mask_fill=-1e9)
padded["config"]["mask"]["key_padding"] = [[0, 0, 1, 1], [1, 1, 1, 1]]
padded["x"].append(wu.random_matrix(rng, 4, 8))
app = wu.Wiring(binary, padded, out, "decode-left-padding", failures, ["--open", "decode"])
try:
    reference = wu.session_stages(padded)["weights"][0, 0]  # item 0, head 0, (Lq, Lk)
    for t in range(4):
        state = app.wait_for(lambda s: s.get("labs.decode.t") == str(t), f"decode step {t}")
        weights = np.array([float(w) for w in state["labs.decode.weights"].split(", ")])
        blind = t < 2
        failures.check(("labs.decode.no_key" in state["widgets"]) == blind
                       and (state.get("labs.decode.no_key") == "labs.decode.no_key_uniform") == blind,
                       f"[decode padded t={t}] the note on a row that sees no key: {state.get('labs.decode.no_key')}")
        expected = np.full(t + 1, 1 / (t + 1)) if blind else reference[t, : t + 1]
        failures.check(np.allclose(weights, expected, atol=2e-6),
                       f"[decode padded t={t}] weights {weights}, expected {expected} (full trace's row {reference[t]})")
        weight_diff = state.get("labs.decode.weight_diff")
        failures.check(("labs.decode.matches_seen" if blind else "labs.decode.matches") in state["widgets"]
                       and weight_diff is not None and 0 <= float(weight_diff) <= 1e-5,
                       f"[decode padded t={t}] compared where the row sees a key: weights differ by {weight_diff}")
        if t == 0:
            app.screen()
        app.click(app.settled(), "labs.decode.next")
finally:
    app.kill()

# Run 4: a cross session cannot be decoded (中文).
cross = wu.random_session(rng, 3, 4, 2, causal=False)
cross["config"]["attention"] = "cross"
cross["x_q"] = cross.pop("x")
cross["x_kv"] = [wu.random_matrix(rng, 4, 4)]
app = wu.Wiring(binary, cross, out, "decode-cross-zh", failures, ["--open", "decode"], lang="zh")
try:
    app.wait_for(lambda s: s.get("labs.decode.refused") == "yes" and "labs.decode.refused" in s["widgets"],
                 "the decode window says why a cross session is not decoded")
    app.screen()
finally:
    app.kill()

# Run 4b: the largest preset, decoded, would keep ~330 MB of caches: refused, not frozen; and though
# it has no causal mask, no button offers one (the session would still be too big).
big = json.load(open(os.path.join(sys.argv[2], "assets", "presets", "seed-000-usage.json")))
failures.check(not (big["config"].get("mask") or {}).get("causal"), "[decode big] the preset has no causal mask")
app = wu.Wiring(binary, big, out, "decode-big", failures, ["--open", "decode"])
try:
    state = app.wait_for(lambda s: s.get("labs.decode.refused") == "yes" and "labs.decode.refused" in s["widgets"],
                         "the decode window refuses a session too big to step", 60)
    failures.check("labs.decode.turn_causal_on" not in state["widgets"],
                   "[decode big] no button to turn causal on: the session would still be too big")
finally:
    app.kill()


def refusal_fitted(s):
    """The refusal and its button on screen, and the window fitted to them: an auto-sized window's first
    frame is drawn hidden, before ImGui knows its content's size, and is not what a learner sees."""
    widgets = s["widgets"]
    if s.get("labs.decode.refused") != "yes" or not {"lab.decode", "labs.decode.turn_causal_on", "stepper.next"} <= set(widgets):
        return False
    window, button = widgets["lab.decode"], widgets["labs.decode.turn_causal_on"]
    below_button = window["y"] + window["h"] - (button["y"] + button["h"])
    return 0 <= below_button <= 1.5 * widgets["stepper.next"]["h"]


# Run 4c: a self session without a causal mask: refused, and the window's button turns causal on,
# after which it decodes and its weights are row t of the (now causal) reference.
open_session = wu.random_session(rng, 4, 8, 2, causal=False)
app = wu.Wiring(binary, open_session, out, "decode-causal-on", failures, ["--open", "decode"])
try:
    state = app.wait_for(refusal_fitted, "the decode window refuses a non-causal session, fitted to its text")
    line = state["widgets"]["stepper.next"]["h"]  # a button's height: about one line of text
    refusal = state["widgets"]["lab.decode"]
    button = state["widgets"]["labs.decode.turn_causal_on"]
    # The refusal's window is as tall as its few lines, not an empty 50-line box over the stages.
    failures.check(refusal["h"] <= 12 * line and refusal["y"] + refusal["h"] - (button["y"] + button["h"]) <= 1.5 * line,
                   f"[decode causal on] the refusal's window fits its text: {refusal}, button {button}, line {line}")
    app.click_widget("labs.decode.turn_causal_on", "the decode window offers to turn causal on")
    state = app.wait_for(lambda s: s.get("labs.decode.t") == "0" and s["widgets"].get("lab.decode", {}).get("h", 0) > 20 * line,
                         "after the button the window decodes, at its full size again")
    saved = app.save()
    failures.check(saved["config"]["mask"].get("causal") is True, f"[decode causal on] saved mask {saved['config']['mask']}")
    reference = wu.session_stages(saved)["weights"][0, 0]
    weights = np.array([float(w) for w in state["labs.decode.weights"].split(", ")])
    failures.check(np.allclose(weights, reference[0, :1], atol=2e-6), f"[decode causal on] step 0 weights {weights}")
finally:
    app.kill()

# Run 4d: closed from the Labs menu while it refuses, the session made causal in the Mask tab, opened
# again: it decodes at its full size, not at the refusal's few lines.


def decode_item_from_menu():
    app.click_widget("menu.labs", "the Labs menu")
    app.click_widget("menu.labs.decode", "the Labs menu's decode item")


app = wu.Wiring(binary, wu.random_session(rng, 4, 8, 2, causal=False), out, "decode-reopen", failures,
                ["--open", "decode", "--tab", "mask"])
try:
    state = app.wait_for(refusal_fitted, "the decode window refuses a non-causal session, fitted to its text")
    line = state["widgets"]["stepper.next"]["h"]
    refused_height = state["widgets"]["lab.decode"]["h"]
    decode_item_from_menu()
    failures.check(app.gone("lab.decode", 10), "[decode reopen] the menu item closes the window")
    app.edit(lambda: app.click(app.settled(), "mask.causal"), "causal on in the Mask tab")
    decode_item_from_menu()
    state = app.wait_for(lambda s: s.get("labs.decode.t") == "0" and "lab.decode" in s["widgets"],
                         "opened again on a causal session, the window decodes")
    failures.check(state["widgets"]["lab.decode"]["h"] > max(20 * line, 2 * refused_height),
                   f"[decode reopen] full size again: {state['widgets']['lab.decode']}, refusal {refused_height}")
finally:
    app.kill()

# Run 5: the RoPE window in both languages.
for lang in ("en", "zh"):
    roped = wu.random_session(rng, 4, 8, 2, causal=True, positional={"type": "rope", "rope_base": 50})
    app = wu.Wiring(binary, roped, out, "rope-" + lang, failures, ["--open", "rope"], lang=lang)
    try:
        state = app.wait_for(lambda s: "labs.rope.plot" in s["widgets"] and s.get("labs.rope.source") == "session",
                             "the RoPE window with the session's q and k")
        stages = wu.session_stages(roped)
        q, k = stages["q"][0, 0, 0], stages["k"][0, 0, 0]
        score = float(state["labs.rope.score_at_0"])
        failures.check(abs(score - float(q @ k)) <= 1e-4 * max(1.0, abs(q @ k)),
                       f"[rope {lang}] at i = j the rotations cancel: score {score} vs q·k {q @ k}")
        failures.check(float(state["labs.rope.max_diff"]) < 1e-9,
                       f"[rope {lang}] the two curves coincide: {state['labs.rope.max_diff']}")
        failures.check(all(f"labs.rope.pair.{i}" in state["widgets"] for i in range(2)),
                       f"[rope {lang}] one circle per pair of d_k = 4")
        app.screen()
    finally:
        app.kill()

failures.finish()
