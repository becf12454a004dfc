"""The guided tour's scaling lesson names the scale in use. On `default` in 中文 with
lesson 3 open, the learner picks no scaling, then a custom factor 0.25, in Settings
(xdotool); each time the lesson's text must say which scaling the session uses, and
the pinned score's scaled value it quotes must be the quoted score times that factor
(1/√d_k first, then 1, then 0.25), computed here from the quoted numbers."""
import json
import math
import os
import re
import subprocess
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

binary = sys.argv[1]
out = output_dir("lesson-scale")
failures = Failures()

base = os.path.join(out, "default.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", base], check=True, timeout=60,
               capture_output=True)


def number(text):
    return float(text.replace("−", "-"))


def quoted(state, pattern, label):
    """The numbers a lesson sentence quotes (a line break may have taken a space: spaces are optional)."""
    text = state.get("lesson.text.lines", "").replace("\n", "")
    found = re.search(pattern.replace(" ", " ?"), text)
    failures.check(found is not None, f"[{label}] the lesson says {pattern!r}: {text!r}")
    return [number(g) for g in found.groups()] if found else None


app = wu.Wiring(binary, json.load(open(base)), out, "lesson", failures, ["--lesson", "3"], lang="zh")
try:
    state = app.wait_for(lambda s: "lesson.text.lines" in s, "the scaling lesson is shown")
    numbers = quoted(state, r"每个分数都除以 √d_k = ([−\d.]+)（d_k = (\d+)），消除这种增长：固定的分数 ([−\d.e]+) 变成 ([−\d.e]+)。",
                     "√d_k")
    if numbers:
        sqrt_d_k, d_k, score, scaled = numbers
        failures.check(abs(sqrt_d_k - math.sqrt(d_k)) < 1e-3, f"[√d_k] √{d_k} quoted as {sqrt_d_k}")
        failures.check(abs(scaled - score / math.sqrt(d_k)) <= 1e-3 * max(1.0, abs(score)),
                       f"[√d_k] {score} / √{d_k} quoted as {scaled}")

    app.edit(lambda: app.choose("config.scale", "config.scale.option.1"), "scale: none")
    numbers = quoted(app.settled(), r"这个会话设为不缩放，每个分数都乘以 1：固定的分数 ([−\d.e]+) 保持为 ([−\d.e]+)。", "none")
    if numbers:
        failures.check(numbers[0] == numbers[1], f"[none] the score {numbers[0]} stays, quoted as {numbers[1]}")
    app.screen()

    app.edit(lambda: app.choose("config.scale", "config.scale.option.2"), "scale: custom")
    app.edit(lambda: app.type_into("config.scale_factor", "0.25", select_all=True), "typing the factor 0.25")
    numbers = quoted(app.settled(), r"而是把每个分数乘以自定义系数 0\.25：固定的分数 ([−\d.e]+) 变成 ([−\d.e]+)。", "custom")
    if numbers:
        failures.check(abs(numbers[1] - 0.25 * numbers[0]) <= 1e-3 * max(1.0, abs(numbers[0])),
                       f"[custom] 0.25 × {numbers[0]} quoted as {numbers[1]}")
    app.screen()
finally:
    app.kill()
failures.finish()
