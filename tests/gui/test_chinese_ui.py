"""Screenshot test: the Chinese UI draws its text with real CJK glyphs. The
app reports every code point of its UI strings (both languages, formulas)
that the font atlas lacks (which ImGui would draw as '?'): none may be
missing; and the explanation region differs between English and Chinese and
holds text in both.

Chinese wrapping (app/gui/widgets/text_wrap.*): at narrow windows the step explanation
and every guided lesson break into several lines, no line break falls inside a
number ("0.2384", "1e-9") or a name ("W_qkv"), the lines together are the whole
text, and the text's rectangle stays inside its window."""
import os
import re
import sys

from gui_test_util import Failures, output_dir, screenshot, screenshots, temporary_dir

binary = sys.argv[1]
out = output_dir("chinese-ui")
# Settings and recovery files of our own: a lesson edits the session.
for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[variable] = temporary_dir("xdg")
failures = Failures()

shots = {}
for lang in ("en", "zh"):
    image, widgets = screenshot(binary, "default", "scaled", out, lang, ["--lang", lang])
    shots[lang] = (image, widgets)
    failures.check(widgets.get("language") == lang, f"[{lang}] the UI language is {lang}")
    failures.check(widgets.get("cjk_font") == "yes", f"[{lang}] Noto Sans CJK was loaded")
    failures.check(widgets.get("missing_glyphs") == "",
                   f"[{lang}] no UI glyph falls back to '?', missing: {widgets.get('missing_glyphs')}")


def ink(image, rect):
    """Pixels of the rectangle that differ clearly from its background (the top-left pixel)."""
    _, _, rows = image
    x0, y0 = int(rect["x"]), int(rect["y"])
    background = rows[y0][x0]
    pixels = set()
    for y in range(y0, int(rect["y"] + rect["h"])):
        for x in range(x0, int(rect["x"] + rect["w"])):
            if sum(abs(a - b) for a, b in zip(rows[y][x], background)) > 120:
                pixels.add((x - x0, y - y0))
    return pixels


for name in ("explanation.text", "tab.config"):
    rects = {lang: shots[lang][1]["widgets"].get(name) for lang in shots}
    if not all(rects.values()):
        failures.check(False, f"{name} is on screen in both languages")
        continue
    en, zh = ink(shots["en"][0], rects["en"]), ink(shots["zh"][0], rects["zh"])
    failures.check(len(en) > 50 and len(zh) > 50, f"{name} holds text in both languages ({len(en)}, {len(zh)} ink pixels)")
    differing = len(en ^ zh)
    failures.check(differing > 0.3 * max(len(en), len(zh)),
                   f"{name} looks different in Chinese ({differing} of {max(len(en), len(zh))} ink pixels differ)")


# ---- Chinese wrapping ---------------------------------------------------------
# Characters of a run that must stay on one line: Latin letters, digits, the
# decimal point, "_" of names like W_qkv, and the exponent's sign after "e".
RUN = re.compile(r"[0-9A-Za-z_.]")


def check_lines(label, lines_text, full_text_rect, window_right, must_wrap=True):
    lines = lines_text.split("\n")
    if must_wrap:
        failures.check(len(lines) >= 2, f"{label}: the text wraps at this width ({len(lines)} line(s))")
    for before, after in zip(lines, lines[1:]):
        if before and after:
            failures.check(not (RUN.match(before[-1]) and RUN.match(after[0])),
                           f"{label}: a line break splits a number or name: ...{before[-8:]!r} | {after[:8]!r}...")
    right = full_text_rect["x"] + full_text_rect["w"]
    failures.check(right <= window_right,
                   f"{label}: the text ends at x = {right}, inside its window (right edge {window_right})")


# The step explanation beside the heatmaps, at several window widths (its width follows the window).
for width in (720, 800, 900, 1040):
    shots = screenshots(binary, "default", ["scaled", "masked", "dropped", "w_o"], out, f"narrow-{width}",
                        ["--lang", "zh", "--size", f"{width}x700"])
    for stage, (_, widgets) in shots.items():
        lines = widgets.get("explanation.text.lines")
        rect = widgets["widgets"].get("explanation.text")
        if lines is None or rect is None:
            failures.check(False, f"[{stage} at {width}px] the explanation reports its lines and rectangle")
            continue
        # The main window's padding and the panel's border are inside the framebuffer's edge.
        check_lines(f"[{stage} at {width}px]", lines, rect, width - 8, must_wrap=width <= 800)
        failures.check(widgets.get("missing_glyphs") == "", f"[{stage} at {width}px] no '?' glyphs")

# Every guided lesson: its text quotes the example's real numbers (q rows, scores, weights).
numbers_seen = 0
for number in range(1, 17):
    _, widgets = screenshot(binary, "default", "x", out, f"lesson{number}-zh",
                            ["--lang", "zh", "--lesson", str(number), "--size", "1000x760"])
    lines = widgets.get("lesson.text.lines")
    rect, window = widgets["widgets"].get("lesson.text"), widgets["widgets"].get("lesson.window")
    if lines is None or rect is None or window is None:
        failures.check(False, f"[lesson {number}] the lesson reports its lines and rectangles")
        continue
    numbers_seen += len(re.findall(r"\d\.\d", lines))
    check_lines(f"[lesson {number}]", lines, rect, window["x"] + window["w"])
failures.check(numbers_seen >= 5, f"the lessons quote decimal numbers ({numbers_seen} found), so the check means something")

failures.finish()
