"""Screenshot test: the Chinese UI draws its text with real CJK glyphs. The
app reports every code point of its UI strings (both languages, formulas)
that the font atlas lacks (which ImGui would draw as '?'): none may be
missing; and the explanation region differs between English and Chinese and
holds text in both."""
import sys

from gui_test_util import Failures, output_dir, screenshot

binary = sys.argv[1]
out = output_dir("chinese-ui")
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

failures.finish()
