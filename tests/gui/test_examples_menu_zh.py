"""The Examples menu in 中文 shows each built-in example's Chinese description (the
"description_zh" of its file in assets/presets), wrapped into lines the window holds;
in English, the English one."""
import glob
import json
import os
import sys

import wiring_util as wu
from gui_test_util import Failures, output_dir

binary, source = sys.argv[1], sys.argv[2]
out = output_dir("examples-menu-zh")
failures = Failures()
presets = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(os.path.join(source, "assets/presets/*.json"))}

for lang, key in (("zh", "description_zh"), ("en", "description")):
    app = wu.Wiring(binary, presets["default"], out, "menu-" + lang, failures, lang=lang)
    try:
        app.click(app.settled(), "menu.examples")
        state = app.wait_for(lambda s: all(f"examples.{n}.description" in s for n in presets), "the menu lists every example")
        for name, preset in sorted(presets.items()):
            shown = state.get(f"examples.{name}.description", "")
            # Lines join without a space in Chinese, with one in English.
            joined = "".join(shown.split("\n")) if lang == "zh" else " ".join(shown.split("\n"))
            failures.check(joined.replace(" ", "") == preset[key].replace(" ", ""),
                           f"[{lang}] {name}: the menu shows {shown!r}, the file says {preset[key]!r}")
            failures.check(shown.count("\n") <= 3, f"[{lang}] {name}: at most four lines: {shown!r}")
        app.screen()
    finally:
        app.kill()
failures.finish()
