"""The step timeline fits a narrow window: it goes on over another line (under Xvfb).

At 1024 x 700 the twelve steps of llama-block in Chinese, and of longformer-global in
English, ran past the panel's right edge: the last steps (输出, output) could not be seen
or clicked. Checked from the widget file of a screenshot: every step of the session has
its timeline button, each wholly inside the window, and the strip takes a second line
only because it has to (its first line's buttons reach past half the window). And the Snapshot
and diff window opens inside a 1280 x 720 screen, resize grip included."""
import sys

from gui_test_util import Failures, output_dir, screenshots

binary = sys.argv[1]
out = output_dir("timeline-wrap")
failures = Failures()
WIDTH = 1024

for preset, stage, lang, steps in (
        ("llama-block", "q_rot", "zh", 12),
        ("longformer-global", "x_pos", "en", 12)):
    label = f"{preset} {lang}"
    (image, state), = screenshots(binary, preset, [stage], out, f"{preset}-{lang}",
                                  ["--lang", lang, "--size", f"{WIDTH}x700"]).values()
    buttons = {k: v for k, v in state["widgets"].items() if k.startswith("timeline.")}
    failures.check(len(buttons) == steps, f"[{label}] {steps} timeline buttons: {sorted(buttons)}")
    outside = [k for k, v in buttons.items() if v["x"] + v["w"] > WIDTH - 8 or v["x"] < 0]
    failures.check(not outside, f"[{label}] timeline buttons past the window's edge: {outside}")
    lines = sorted({v["y"] for v in buttons.values()})
    first_line_end = max(v["x"] + v["w"] for v in buttons.values() if v["y"] == lines[0])
    failures.check(len(lines) == 1 or first_line_end > WIDTH / 2,
                   f"[{label}] the strip wraps only when its line is full: lines at {lines}, "
                   f"the first ending at {first_line_end}")

# The Snapshot and diff window opens inside a 1280 x 720 screen, its resize grip too (it ran past the bottom).
(image, state), = screenshots(binary, "causal-decoder", ["weights"], out, "diff-1280",
                              ["--size", "1280x720", "--open", "diff"]).values()
window = state["widgets"].get("window.diff")
failures.check(window is not None and window["x"] + window["w"] <= 1280 and window["y"] + window["h"] <= 720,
               f"the diff window inside 1280 x 720: {window}")
failures.finish()
