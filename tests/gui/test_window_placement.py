"""The small floating windows (Explain, Export, Quiz) open where they cover no heatmap and
inside the screen, and every heatmap row of a step fits in the panel with its colour-bar
numbers, at a laptop's 1280x800 and at 1600x1000, in English and 中文; seed 000's eight heads
and their average all on screen, in lines, filling the panel, as large in English as in Chinese; its
Q/K/V step's 24 heads 8 a line without scrolling (screenshots under Xvfb, rectangles from --widgets-out)."""
import sys

from gui_test_util import Failures, output_dir, screenshot

binary = sys.argv[1]
out = output_dir("window-placement")
failures = Failures()
STATUS_BAR = 30  # pixels at the bottom the status bar takes; colour-bar numbers must end above it


def overlaps(a, b):
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


for size in ("1280x800", "1600x1000"):
    width, height = (int(v) for v in size.split("x"))
    for lang in ("en", "zh"):
        for window, rect_name in (("explain", "window.explain"), ("export", "window.export"), ("quiz", "lab.quiz")):
            label = f"{window} {size} {lang}"
            _, state = screenshot(binary, "causal-decoder", "weights", out, f"{window}-{size}-{lang}",
                                  ["--size", size, "--lang", lang, "--open", window, "--pin", "weights:0:0:2:1"])
            widgets = state["widgets"]
            rect = widgets.get(rect_name)
            failures.check(rect is not None, f"[{label}] the window is open")
            if rect is None:
                continue
            failures.check(rect["x"] >= 0 and rect["y"] >= 0 and rect["x"] + rect["w"] <= width and
                           rect["y"] + rect["h"] <= height, f"[{label}] inside the {size} screen: {rect}")
            covered = [name for name, r in widgets.items() if name.startswith("heatmap.") and overlaps(rect, r)]
            failures.check(not covered, f"[{label}] covers no heatmap: {covered}")
            font = widgets["stepper.next"]["h"]  # a button's height: about one line of text
            for name, bar in widgets.items():
                if name.startswith("colorbar."):
                    bottom = bar["y"] + bar["h"] + 1.2 * font
                    failures.check(bottom <= height - STATUS_BAR,
                                   f"[{label}] {name}'s numbers end at {bottom:.0f}, above the status bar")
# Eight heads and their average: every map on screen, none cut off at the right or the bottom,
# no title running into the next map, and as large in English as in Chinese (English's longer
# "average over heads" once held every map to 4 a line, about half the size of Chinese's 5).
for size in ("1280x800", "1600x1000"):
    width, height = (int(v) for v in size.split("x"))
    map_width = {}
    for lang in ("en", "zh"):
        label = f"8 heads {size} {lang}"
        _, state = screenshot(binary, "seed-000-usage", "weights", out, f"eight-heads-{size}-{lang}",
                              ["--size", size, "--lang", lang])
        widgets = state["widgets"]
        maps = {name: r for name, r in widgets.items() if name.startswith("heatmap.weights.")}
        failures.check(len(maps) == 9, f"[{label}] 8 heads and the average shown: {sorted(maps)}")
        outside = [name for name, r in maps.items() if r["x"] + r["w"] > width or r["y"] + r["h"] > height - STATUS_BAR]
        failures.check(not outside, f"[{label}] cut off: {outside}")
        # The enlarge button ends its map's title: over another map, the title runs into it.
        heatmaps = {name: r for name, r in widgets.items() if name.startswith("heatmap.")}
        for name, button in widgets.items():
            if name.startswith("enlarge."):
                hit = [other for other, r in heatmaps.items() if other != "heatmap." + name[len("enlarge."):] and overlaps(button, r)]
                failures.check(not hit, f"[{label}] {name}'s title runs into {hit}")
        map_width[lang] = maps.get("heatmap.weights.h0", {"w": 0})["w"]
        # ... and the maps take the room there is: the last colour bar's numbers end near the panel's
        # bottom (a fixed guess of each line's titles and bars once left a fifth of it empty).
        font = widgets["stepper.next"]["h"]
        last = max(bar["y"] + bar["h"] + 1.2 * font for name, bar in widgets.items() if name.startswith("colorbar."))
        failures.check(height - STATUS_BAR - last <= 2.5 * font,
                       f"[{label}] {height - STATUS_BAR - last:.0f} px left empty below the maps")
    failures.check(map_width["en"] >= 0.85 * map_width["zh"],
                   f"[8 heads {size}] a map {map_width['en']} px wide in English, {map_width['zh']} in Chinese")
# The Q/K/V step of the same preset: its 24 tall (100, 64) heads, Q, K and V 8 a line each, all
# on screen without scrolling (6 + 2 a line had left them a thumb wide below the panel's end).
for lang in ("en", "zh"):
    label = f"Q/K/V 1600x1000 {lang}"
    _, state = screenshot(binary, "seed-000-usage", "q", out, f"qkv-1600x1000-{lang}", ["--size", "1600x1000", "--lang", lang])
    widgets = state["widgets"]
    for stage in ("q", "k", "v"):
        heads = [widgets.get(f"heatmap.{stage}.h{h}") for h in range(8)]
        failures.check(all(heads), f"[{label}] {stage}'s 8 heads shown")
        if not all(heads):
            continue
        failures.check(len({round(r["y"]) for r in heads}) == 1, f"[{label}] {stage}'s heads on one line: {[r['y'] for r in heads]}")
        bottom = max(r["y"] + r["h"] for r in heads)
        failures.check(bottom <= 1000 - STATUS_BAR, f"[{label}] {stage}'s heads end at {bottom:.0f}, on screen")
failures.finish()
