"""The labs of the Labs menu in the real app (why √d_k, mask fill, softmax
stability, fused QKV, quiz), in English and Chinese:
- every lab window opens (--open), and no glyph of its text is missing;
- why √d_k: each of the four plots has both curves drawn (pixels of both colours);
- mask fill: with −∞ the fully masked row (query <pad>) is NaN magenta, with
  −1e9 it is not (uniform); seed 002's −1e-20 leaves masked cells coloured;
- fused QKV: the fused and separate projections agree (max diff < 1e-5);
- RoPE: its settings line gives the base as Settings does (10000, not 1e4);
- softmax stability: at ×1 the naive softmax is fine;
- quiz (xdotool): the question the app asks is answered from `attention-lab
  trace --json` (an independent run), by typing the value + Enter or clicking
  the key; the score becomes 1/1; a wrong typed answer makes it 1/2; typing ×1000
  into the stability lab's slider breaks the naive softmax."""
import json
import os
import subprocess
import sys
import time

from gui_test_util import app_window, ctrl_click, wait_for_widgets, hold_keys, xdotool, NAN_COLOUR, Failures, cell_sample_point, close, mean_colour, output_dir, screenshot, type_text

binary = sys.argv[1]
out = output_dir("labs")
failures = Failures()

RAW = (240, 140, 60)
SCALED = (90, 170, 250)


def count_colour(image, rect, colour, tolerance=30):
    _, _, rows = image
    n = 0
    for y in range(int(rect["y"]), int(rect["y"] + rect["h"])):
        for x in range(int(rect["x"]), int(rect["x"] + rect["w"])):
            if close(rows[y][x], colour, tolerance):
                n += 1
    return n


LABS = [("sqrt_dk", "default"), ("mask_fill", "default"), ("softmax_stability", "default"),
        ("fused_qkv", "seed-004-fused"), ("quiz", "default"), ("rope", "llama-block")]
for lab, source in LABS:
    for lang in ("en", "zh"):
        image, state = screenshot(binary, source, "x", out, f"{lab}.{lang}", ["--open", lab, "--lang", lang])
        failures.check(f"lab.{lab}" in state["widgets"], f"{lab} ({lang}): the window opened")
        failures.check(state["missing_glyphs"] == "", f"{lab} ({lang}): missing glyphs {state['missing_glyphs']}")
        w = state["widgets"]
        if lab == "rope":  # the base as Settings writes it (llama-block's rope_base is 10000), not 1e4
            settings = state.get("labs.rope.settings", "")
            failures.check("10000" in settings and "1e4" not in settings, f"rope ({lang}): base 10000: {settings!r}")
        if lab == "sqrt_dk":
            for i in range(4):
                rect = w.get(f"labs.sqrt_dk.plot{i}")
                failures.check(rect is not None, f"sqrt_dk plot {i} drawn")
                if rect:
                    raw, scaled = count_colour(image, rect, RAW), count_colour(image, rect, SCALED)
                    failures.check(raw > 100 and scaled > 100,
                                   f"sqrt_dk plot {i} ({lang}): both curves drawn ({raw}, {scaled} pixels)")
        if lab == "mask_fill":
            # Fills in order −∞, −1e9, −1e20, −1e-20; row 0 is fully masked.
            for index, expect_nan in ((0, True), (1, False), (2, False), (3, False)):
                rect = w[f"heatmap.labs.mask_fill.weights{index}"]
                colours = [mean_colour(image, *cell_sample_point(rect, 0, col)) for col in range(int(rect["cols"]))]
                is_nan = all(close(c, NAN_COLOUR, 20) for c in colours)
                failures.check(is_nan == expect_nan,
                               f"mask_fill ({lang}) fill #{index}: fully masked row NaN={is_nan}, want {expect_nan}")
            # −1e-20 leaks: masked cells are hatched whatever their weight, so look at the one
            # key query 'I' may see: weight 1 with a real mask (yellow), ≈ 0.4 with −1e-20.
            exact = mean_colour(image, *cell_sample_point(w["heatmap.labs.mask_fill.weights1"], 1, 1))
            leak = mean_colour(image, *cell_sample_point(w["heatmap.labs.mask_fill.weights3"], 1, 1))
            failures.check(close(exact, (253, 231, 37), 25), f"mask_fill ({lang}): −1e9 gives 'I' all to 'I' {exact}")
            failures.check(not close(leak, exact, 40), f"mask_fill ({lang}): −1e-20 leaks ({leak} vs {exact})")
        if lab == "fused_qkv":
            failures.check(float(state.get("labs.fused.max_diff", "1")) < 1e-5,
                           f"fused == separate: {state.get('labs.fused.max_diff')}")
        if lab == "softmax_stability":
            failures.check(state.get("labs.stability.naive_broken") == "no", "at ×1 the naive softmax is fine")
        if lab == "quiz":
            failures.check(state.get("quiz.score") == "0/0", f"quiz starts at 0/0, got {state.get('quiz.score')}")


# ---- The quiz, answered with real input events -----------------------------------------
trace = json.loads(subprocess.run([binary, "trace", "default", "--json"], capture_output=True, text=True,
                                  check=True, timeout=60).stdout)["stages"]
widgets_path = os.path.join(out, "quiz-widgets.json")
if os.path.exists(widgets_path):
    os.remove(widgets_path)


def wait_for(predicate, what, timeout=15.0):
    state, ok = wait_for_widgets(widgets_path, predicate, timeout)
    failures.check(ok, f"timed out waiting for: {what} (score {state and state.get('quiz.score')})")
    return state


def centre(state, name):
    r = state["widgets"][name]
    return int(r["x"] + 0.5 * r["w"]), int(r["y"] + 0.5 * r["h"])


def click(window, x, y):
    xdotool("mousemove", "--window", window, x, y)
    time.sleep(0.15)
    xdotool("click", 1)
    time.sleep(0.3)


def answer_of(question):
    kind, stage, b, h, row, col = question.split(":")
    b, h, row, col = int(b), int(h), int(row), int(col)
    if kind == "argmax":
        weights = trace["weights"][b][h][row]
        return kind, max(range(len(weights)), key=lambda j: weights[j])
    value = trace[stage][b][row][col] if stage in ("concat", "output") else trace[stage][b][h][row][col]
    return kind, value


def answer(window, state, wrong=False):
    kind, value = answer_of(state["quiz.question"])
    if kind == "argmax":
        key = (value + 1) % 6 if wrong else value
        click(window, *centre(state, f"labs.quiz.key{key}"))
    else:
        click(window, *centre(state, "labs.quiz.answer"))
        type_text("12345" if wrong else f"{value:.4f}")
        hold_keys("Return")


app = subprocess.Popen([binary, "default", "--lang", "en", "--size", "1600x1000", "--open", "quiz",
                        "--open", "softmax_stability", "--widgets-out", widgets_path,
                        "--out", os.path.join(out, "interactive-last-frame.png")])
try:
    state = wait_for(lambda s: "labs.quiz.next" in s["widgets"] and "quiz.question" in s, "the quiz", 30)
    window = app_window()
    print("question:", state["quiz.question"], "answer:", answer_of(state["quiz.question"]))
    answer(window, state)
    state = wait_for(lambda s: s.get("quiz.score") == "1/1", "a right answer scores 1/1")
    click(window, *centre(state, "labs.quiz.next"))
    state = wait_for(lambda s: "labs.quiz.answer" in s["widgets"] or "labs.quiz.key0" in s["widgets"],
                     "the next question")
    print("question:", state["quiz.question"])
    answer(window, state, wrong=True)
    state = wait_for(lambda s: s.get("quiz.score") == "1/2", "a wrong answer scores 1/2")

    # Softmax stability: Ctrl+click the scale slider and type ×1000: the naive softmax breaks.
    failures.check(state.get("labs.stability.naive_broken") == "no", "at ×1 the naive softmax is fine")
    ctrl_click(window, *centre(state, "labs.stability.scale"))
    type_text("1000")
    hold_keys("Return")
    wait_for(lambda s: s.get("labs.stability.naive_broken") == "yes", "×1000 breaks the naive softmax")
    app.terminate()  # SIGTERM closes the app normally
    app.wait(timeout=20)
finally:
    if app.poll() is None:
        app.terminate()
        app.wait(timeout=10)
failures.finish()
