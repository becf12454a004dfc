"""Small things a learner must be able to trust, under Xvfb:
- the dropped stage marks every cell dropout zeroed (count from trace --json);
- a pinned cell the session lacks (weights.h1 on a one-head session) is refused at start;
- the labels over the heatmap rows say what they show: "every head, and their average" only
  where both are drawn, "click a head below to switch" only where there is another head;
  the output step and the token lines show the heads' average only when there are several,
  and the steps only over the keys (not Q, K, V or α·V, whose mean over heads is no quantity);
- the diff window counts the cells that became −∞ beside its finite largest change;
- past 32 tokens the settings say which token labels are not listed and where to set them;
- a lesson that loads the example already open leaves the session unmodified;
- seed 002's padding keeps keys 2 and 3: the mask tab says so, a prefix padding does not;
- the Fused lab on a cross session explains why it does not apply;
- the Export window writes the pinned heatmap as a Markdown and a LaTeX table,
  named by stage, head and batch, with the tokens on both axes;
- real input: "abc" typed into a cell gives a message; a click on a cell the causal
  mask hides says so and offers to turn causal off (which then works); a wrong quiz
  answer may be retried before the answer is shown."""
import json
import os
import subprocess
import sys
import time

from gui_test_util import (Failures, app_window, ctrl_click, hold_keys, output_dir, screenshot, type_text,
                           wait_for_widgets, xdotool)

binary = sys.argv[1]
out = output_dir("trust-items")
failures = Failures()


def trace_of(source):
    return json.loads(subprocess.run([binary, "trace", source, "--json"], capture_output=True, text=True,
                                     check=True, timeout=60).stdout)


# 1. Dropout marks: the default example with dropout 0.5 in training mode.
source_dir = sys.argv[2]
session = json.load(open(os.path.join(source_dir, "assets", "presets", "default.json")))
session["config"]["dropout"] = {"p": 0.5, "training": True, "seed": 3}
dropout_session = os.path.join(out, "dropout.json")
json.dump(session, open(dropout_session, "w"))
stages = trace_of(dropout_session)["stages"]
weights, dropped = stages["weights"][0][0], stages["dropped"][0][0]  # batch 0, head 0: (Lq, Lk)
zeroed = sum(1 for wr, dr in zip(weights, dropped) for w, d in zip(wr, dr) if d == 0 and w != 0)
failures.check(zeroed > 0, f"dropout 0.5 drops some weight of head 0 ({zeroed})")
_, facts = screenshot(binary, dropout_session, "dropped", out, "dropped")
failures.check(facts.get("heatmap.dropped.h0.dropped_marks") == str(zeroed),
               f"{zeroed} dropped cells are marked, got {facts.get('heatmap.dropped.h0.dropped_marks')}")
_, facts = screenshot(binary, "default", "dropped", out, "no-dropout")
failures.check(not any(k.endswith(".dropped_marks") for k in facts), "without dropout nothing is marked")

# 2. A pin the session does not have is refused at start (the window used to drop it without a word);
# one it has stays.
result = subprocess.run([binary, "screenshot", "seed-003-example", "--stage", "weights", "--pin", "weights:0:1:0:0",
                         "--out", os.path.join(out, "pin-missing.png")], capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 2 and
               result.stderr.startswith("attention-lab: --pin weights:0:1:0:0: head 1: this session has only head 0\n"),
               f"weights.h1 on a one-head session is refused: {result.returncode} {result.stderr!r}")
screenshot(binary, "seed-003-example", "weights", out, "one-head")  # its row labels: 2b
_, facts = screenshot(binary, "default", "weights", out, "pin-kept", ["--pin", "weights:0:1:0:0"])
failures.check(facts.get("pinned") == "weights.h1:0:0", f"weights.h1 on two heads stays, got {facts.get('pinned')!r}")

# 2b. The labels over the rows, on the same two windows and three more.
row_labels = {"one head": "In (head 0) | Out",
              "two heads": "In (head 1; click a head below to switch) | Out: every head, and their average"}  # pinned in head 1
for label, session, name in (("one head", "seed-003-example", "one-head"), ("two heads", "default", "pin-kept")):
    got = json.load(open(os.path.join(out, name + ".json"))).get("heatmap.row_labels")
    failures.check(got == row_labels[label], f"{label}: row labels {got!r}")
for stage, extra, expected in (("concat", [], "In | Out"), ("output", [], "In | Out"),
                               ("weights", ["--open", "gradients"],
                                "In (head 0; click a head below to switch) | Out: every head")):
    _, facts = screenshot(binary, "default", stage, out, "labels-" + stage + "-".join(extra), extra)
    failures.check(facts.get("heatmap.row_labels") == expected,
                   f"{stage} {extra}: row labels {facts.get('heatmap.row_labels')!r}, expected {expected!r}")

# An average over heads only where it is an attention pattern (over the keys): Q, K, V and α·V
# are each head's own features, and their rows show the heads alone.
for stage, averaged in (("qkv", []), ("context", []), ("scores", ["scores"]), ("weights", ["weights"])):
    _, facts = screenshot(binary, "default", stage, out, "average-" + stage)
    shown = sorted(name.split(".")[1] for name in facts["widgets"]
                   if name.startswith("heatmap.") and name.endswith(".avg"))
    failures.check(shown == averaged, f"{stage}: head averages shown for {shown}, expected {averaged}")
    expected = "Out: every head, and their average" if averaged else "Out: every head"
    failures.check(facts.get("heatmap.row_labels", "").endswith(expected),
                   f"{stage}: row labels {facts.get('heatmap.row_labels')!r} end with {expected!r}")

# Beside the output, the heads' average where there are heads to average, else the one head.
for source, shown, absent in (("default", "weights.avg", "weights.h0"), ("seed-003-example", "weights.h0", "weights.avg")):
    _, facts = screenshot(binary, source, "output", out, "output-" + source)
    failures.check(f"heatmap.{shown}.title" in facts and f"heatmap.{absent}.title" not in facts,
                   f"{source}: the output step shows {shown}, not {absent}")

# Token lines draw the heads' average where there are heads to average, else the one head.
for source, expected in (("default", "Average over heads"), ("seed-003-example", "head 0")):
    _, facts = screenshot(binary, source, "weights", out, "lines-" + source, ["--open", "token_lines"])
    failures.check(facts.get("token_lines.head") == expected,
                   f"{source}: token lines show {facts.get('token_lines.head')!r}, expected {expected!r}")

# Only 32 token labels are fields: the settings say where the others are, and only when there are others.
_, facts = screenshot(binary, "seed-000-usage", "weights", out, "tokens-more")
failures.check(facts.get("config.tokens_more") ==
               "Tokens 32–99 are not listed here: set their labels in the session file's \"tokens\" (File → Save)",
               f"100 tokens: the settings name the 68 not listed, got {facts.get('config.tokens_more')!r}")
_, facts = screenshot(binary, "seed-000-usage", "weights", out, "tokens-more-zh", ["--lang", "zh"])
failures.check(facts.get("config.tokens_more", "").startswith("第 32–99 个词元未在此列出"),
               f"100 tokens in 中文: {facts.get('config.tokens_more')!r}")
_, facts = screenshot(binary, "default", "weights", out, "tokens-all")
failures.check("config.tokens_more" not in facts, "6 tokens: every label is a field, no note")

# The diff's largest change is the finite one, and the cells masked to −∞ are counted beside it:
# causal-decoder against the unmasked default masks the 15 later keys of each of 2 heads.
_, facts = screenshot(binary, "causal-decoder", "weights", out, "diff-infinite", ["--snapshot", "default", "--open", "diff"])
failures.check(facts.get("diff.max.masked", "").endswith(" (and 30 cells to or from ±∞ or NaN)"),
               f"the diff counts the 30 cells that became −∞: {facts.get('diff.max.masked')!r}")
failures.check("diff.max.weights" not in facts, "weights stay finite: no such note")

# 3. The first lesson uses the default example: opening it over `default` changes nothing.
_, facts = screenshot(binary, "default", "x", out, "lesson", ["--lesson", "1"])
failures.check(facts.get("modified") == "no", f"a lesson on its own example leaves it unmodified, got {facts.get('modified')}")

# 4. Keys kept that are not the first ones.
_, facts = screenshot(binary, "seed-002-mask-bug", "masked", out, "kept-seed002", ["--tab", "mask"])
failures.check("mask.kept_not_first" in facts["widgets"], "seed 002: the mask tab says keys 2, 3 are kept")
_, facts = screenshot(binary, "padded-batch", "masked", out, "kept-prefix", ["--tab", "mask"])
failures.check("mask.kept_not_first" not in facts["widgets"], "a prefix padding needs no note")

# 5. The Fused lab on a cross session.
_, facts = screenshot(binary, "cross-attention", "x", out, "fused-cross", ["--open", "fused_qkv"])
failures.check("labs.fused.not_applicable" in facts["widgets"], "the fused lab says why it does not apply to cross")
_, facts = screenshot(binary, "default", "x", out, "fused-self", ["--open", "fused_qkv"])
failures.check("labs.fused.not_applicable" not in facts["widgets"], "on a self session the lab applies")

# 6. Real input.
widgets_path = os.path.join(out, "live.json")


def wait_for(predicate, what, timeout=15):
    state, ok = wait_for_widgets(widgets_path, predicate, timeout)
    failures.check(ok, what)
    return state


def click(window, state, name):
    r = state["widgets"][name]
    xdotool("mousemove", "--window", window, int(r["x"] + r["w"] / 2), int(r["y"] + r["h"] / 2))
    time.sleep(0.15)
    xdotool("mousedown", 1)
    time.sleep(0.12)
    xdotool("mouseup", 1)
    time.sleep(0.25)


# A previous run of this test ends with unsaved edits: its recovery file would ask first.
recovery = os.path.join(os.environ.get("XDG_STATE_HOME", "/nonexistent"), "attention-lab", "recovery.json")
if os.path.exists(recovery):
    os.remove(recovery)
app = subprocess.Popen([binary, "causal-decoder", "--lang", "en", "--size", "1600x1000", "--open", "quiz",
                        "--widgets-out", widgets_path])
try:
    state = wait_for(lambda s: "labs.quiz.check" in s["widgets"] or "labs.quiz.key0" in s["widgets"], "the quiz", 30)
    window = app_window()
    time.sleep(1.0)  # the first frames after mapping may miss input
    print("question:", state.get("quiz.question"))
    # A wrong answer: a try-again note, the answer still hidden, the controls still there.
    if "labs.quiz.answer" in state["widgets"]:
        click(window, state, "labs.quiz.answer")
        type_text("12345")
        hold_keys("Return")
    else:
        kind, stage, b, h, row, col = state["quiz.question"].split(":")
        stages = trace_of("causal-decoder")["stages"]
        row_weights = stages[stage][int(b)][int(h)][int(row)]
        wrong = min(range(len(row_weights)), key=lambda j: row_weights[j])
        click(window, state, f"labs.quiz.key{wrong}")
    state = wait_for(lambda s: "labs.quiz.try_again" in s["widgets"], "a wrong answer may be tried again")
    failures.check("labs.quiz.show_answer" in state["widgets"], "the answer can be shown on request")
    if "labs.quiz.show_answer" in state["widgets"]:
        click(window, state, "labs.quiz.show_answer")
    state = wait_for(lambda s: "labs.quiz.try_again" not in s["widgets"] and "labs.quiz.show_answer" not in s["widgets"],
                     "show the answer reveals it")

    # The matrix editor: type "abc" into a cell.
    click(window, state, "tab.matrices")
    state = wait_for(lambda s: "editor.cell.0.0" in s["widgets"], "the matrices tab shows cells")
    r = state["widgets"].get("editor.cell.0.0")
    if r:
        ctrl_click(window, int(r["x"] + r["w"] / 2), int(r["y"] + r["h"] / 2))
        type_text("abc")
        hold_keys("Return")
        wait_for(lambda s: "editor.typing_message" in s["widgets"], "typing abc into a cell says it is not a number")

    # The mask painter: row 0 cannot see key 3 under causal.
    click(window, state, "tab.mask")
    state = wait_for(lambda s: "heatmap.mask_painter" in s["widgets"], "the mask tab shows the painter")
    r = state["widgets"].get("heatmap.mask_painter")
    if r:
        x = int(r["x"] + (3 + 0.5) * r["w"] / r["cols"])
        y = int(r["y"] + 0.5 * r["h"] / r["rows"])
        xdotool("mousemove", "--window", window, x, y)
        time.sleep(0.15)
        xdotool("mousedown", 1)
        time.sleep(0.12)
        xdotool("mouseup", 1)
        state = wait_for(lambda s: "mask.turn_causal_off" in s["widgets"], "a causal cell: the painter says so")
        revision = state.get("revision")
        click(window, state, "mask.turn_causal_off")
        wait_for(lambda s: "mask.blocked" not in s["widgets"] and s.get("revision") != revision,
                 "turning causal off is an edit and the note goes")
    app.terminate()
    app.wait(timeout=20)
finally:
    if app.poll() is None:
        app.terminate()
        app.wait(timeout=10)
# 7. Tables of the pinned heatmap from the Export window (written into the app's folder).
for name in ("weights.h0.b0.md", "weights.h0.b0.tex"):
    if os.path.exists(os.path.join(out, name)):
        os.remove(os.path.join(out, name))
if os.path.exists(recovery):
    os.remove(recovery)  # the app above ended with unsaved edits
app = subprocess.Popen([binary, "default", "--lang", "en", "--size", "1600x1000", "--open", "export",
                        "--pin", "weights:0:0:0:0", "--stage", "weights", "--widgets-out", widgets_path], cwd=out)
try:
    state = wait_for(lambda s: "export.pinned_markdown" in s["widgets"], "the export window offers tables", 30)
    window = app_window()
    time.sleep(1.0)
    click(window, state, "export.pinned_markdown")
    click(window, state, "export.pinned_latex")
    deadline = time.time() + 15
    while time.time() < deadline and not os.path.exists(os.path.join(out, "weights.h0.b0.tex")):
        time.sleep(0.2)
    md = os.path.join(out, "weights.h0.b0.md")
    text = open(md).read() if os.path.exists(md) else ""
    failures.check(text.startswith("| weights.h0 | the | cat | sat | on | the | mat |"),
                   f"the Markdown table has the key tokens on top: {text[:80]!r}")
    failures.check("| **cat** |" in text, "and the query tokens down the side")
    failures.check(os.path.exists(os.path.join(out, "weights.h0.b0.tex")), "the LaTeX table is written")
    app.terminate()
    app.wait(timeout=20)
finally:
    if app.poll() is None:
        app.terminate()
        app.wait(timeout=10)

# Tokens a learner may type: a long one is cut with "…" to its label column (it ran into the heatmap to its
# left); a line break is a space (its second line was drawn over the first row of cells); other control
# characters are escapes (a NUL ended the label).
tokens_session = os.path.join(out, "long-tokens.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", tokens_session], check=True, timeout=60,
               capture_output=True)
session = json.load(open(tokens_session))
for first, name in (("https://example.com/some/long/path", "long-token"), ("line one\nline two", "newline-token"),
                    ("a\0b\x1b", "nul-token")):
    session["tokens"][0] = first
    json.dump(session, open(tokens_session, "w"))
    _, facts = screenshot(binary, tokens_session, "weights", out, name)
    label = facts.get("heatmap.weights.h0.first_row_label", "")
    if name == "long-token":
        failures.check(label.startswith("https://") and label.endswith("…") and len(label) < len(first),
                       f"a long token is cut to its label column: {label!r}")
    elif name == "newline-token":
        failures.check(label.startswith("line one ") and "\n" not in label, f"a line break reads as a space: {label!r}")
    else:
        failures.check(label == "a\\x00b\\x1B", f"other control characters read as escapes, a NUL too: {label!r}")
failures.finish()
