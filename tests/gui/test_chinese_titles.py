"""Issue 18: no English in the 中文 UI's heatmap titles and start-up notices.

Every heatmap title of every step (values and, with the gradient view on,
gradients) is read from the app's widget facts in Chinese, for the largest
preset and for cross attention: English words other than the names a formula
uses (softmax, dropout, Concat) fail. A settings file with wrong values gives
warnings that the status bar shows in Chinese, with the values the file holds;
in English the same warnings stay English. The screenshots are kept in the
test's output folder to look at."""
import json
import os
import re
import sys

from gui_test_util import Failures, output_dir, screenshot, screenshots, temporary_dir

binary = sys.argv[1]
out = output_dir("chinese-titles")
for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[variable] = temporary_dir("xdg")
failures = Failures()

ALLOWED = {"softmax", "dropout", "Concat"}
WORD = re.compile(r"[A-Za-z]{3,}")
STAGES = ["x", "qkv", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "w_o", "output"]


def titles(widgets):
    return {k[len("heatmap."):-len(".title")]: v for k, v in widgets.items()
            if k.startswith("heatmap.") and k.endswith(".title")}


seen = set()
for preset, extra in (("seed-000-usage", []), ("cross-attention", ["--open", "gradients"])):
    shots = screenshots(binary, preset, STAGES, out, f"{preset}-zh", ["--lang", "zh", *extra])
    for stage, (_, widgets) in shots.items():
        name = f"{preset}-{stage}-zh"
        shown = titles(widgets)
        failures.check(len(shown) > 0, f"[{name}] the heatmaps report their titles")
        for heatmap, title in shown.items():
            seen.add(heatmap)
            english = [w for w in WORD.findall(title) if w not in ALLOWED]
            failures.check(not english, f"[{name}] the title of {heatmap} is Chinese: {title!r} has {english}")
        if preset == "seed-000-usage" and stage == "context":  # dropout p = 0.1 in training mode
            failures.check(shown.get("context.h0", "").startswith("α′·V"), f"with dropout the context is α′·V: {shown}")
        text = widgets.get("notices", "")
        failures.check(not WORD.search(text.replace("Attention Lab", "")), f"[{name}] no English notice: {text!r}")
for heatmap in ("output", "concat", "grad.output", "grad.masked.h0"):
    failures.check(heatmap in seen, f"the {heatmap} heatmap was among those checked")

# The output's title in each language.
_, en = screenshot(binary, "default", "output", out, "default-output-en", ["--lang", "en"])
_, zh = screenshot(binary, "default", "output", out, "default-output-zh", ["--lang", "zh"])
failures.check(en.get("heatmap.output.title") == "Output", f"English output title: {en.get('heatmap.output.title')!r}")
failures.check(zh.get("heatmap.output.title") == "输出", f"Chinese output title: {zh.get('heatmap.output.title')!r}")
# The weighted sum's symbol follows dropout, as the step's formula does (default: dropout off).
_, context = screenshot(binary, "default", "context", out, "default-context-zh", ["--lang", "zh"])
failures.check(context.get("heatmap.context.h0.title", "").startswith("α·V"),
               f"without dropout the context is α·V: {context.get('heatmap.context.h0.title')!r}")

# Settings warnings: a window run (screenshot mode reads no settings) with a settings file holding wrong values.
import subprocess  # noqa: E402
for lang, expected in (("zh", ["“font_percent”应为从 60 到 300 的整数，但它是 1000", "“full_screen”应为 true 或 false",
                               "键 \"window\" 应为一个对象"]),
                       ("en", ["'font_percent' should be a whole number from 60 to 300 but is 1000",
                               "'window' should be an object"])):
    # A fresh file each run: the app saves its settings (with the defaults) on exit.
    config = temporary_dir("settings")
    os.makedirs(os.path.join(config, "attention-lab"))
    with open(os.path.join(config, "attention-lab", "settings.json"), "w") as f:
        json.dump({"font_percent": 1000, "full_screen": "yes", "window": 3}, f)
    os.environ["XDG_CONFIG_HOME"] = config
    facts = os.path.join(out, f"settings-{lang}.json")
    subprocess.run([binary, "default", "--lang", lang, "--frames", "3", "--size", "1280x800", "--widgets-out", facts,
                    "--out", os.path.join(out, f"settings-{lang}.png")], check=True, timeout=120, capture_output=True)
    notices = json.load(open(facts)).get("notices", "")
    for part in expected:
        failures.check(part in notices, f"[{lang}] the status bar says {part!r}: {notices!r}")
    if lang == "zh":
        failures.check("should be" not in notices and "default" not in notices, f"[zh] no English left: {notices!r}")
for leftover in ("recovery.json",):
    path = os.path.join(os.environ["XDG_STATE_HOME"], "attention-lab", leftover)
    if os.path.exists(path):
        os.remove(path)

failures.finish()
