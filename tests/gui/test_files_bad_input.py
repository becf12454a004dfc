"""Bad files never stop the app:
1. A session whose heads do not divide d_model opens as it is, with the error
   shown and the file's values kept (the session written on exit has them); a
   screenshot of it shows the error and exits 1.
2. A file that is not JSON opens the default example, with the reason shown; --save-on-exit
   naming that file is refused (it would write the default example over it).
3. Shaders missing from the asset folder (ATTENTION_LAB_ASSET_DIR): the built-in
   copies are used, the status bar says so, and the heatmaps still draw.
4. Import (File > Import matrix…): a CSV of the wrong shape names both shapes;
   one of the right shape replaces X."""
import json
import os
import subprocess
import sys

from files_test_util import App, hold_keys, user_dirs, x_matrix, xdotool
from gui_test_util import Failures, cell_sample_point, read_png, type_text

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-bad-input")


def run_briefly(args, name, extra_env=None, lang="en"):
    """Runs a few frames and returns (exit code, widget facts, stderr)."""
    widgets = os.path.join(root, name + ".widgets.json")
    result = subprocess.run([binary, *args, "--frames", "3", "--lang", lang, "--size", "1400x900",
                             "--widgets-out", widgets], capture_output=True, text=True, timeout=60,
                            env=dict(env, **(extra_env or {})))
    return result.returncode, json.load(open(widgets)), result.stderr


# 1. Heads not dividing d_model.
base = os.path.join(root, "base.json")
subprocess.run([binary, "default", "--frames", "2", "--save-on-exit", base], check=True, timeout=60,
               capture_output=True, env=env)
session = json.load(open(base))
d_model = session["config"]["d_model"]
heads = next(h for h in range(2, d_model) if d_model % h)
session["config"]["num_heads"] = heads
bad_heads = os.path.join(root, "bad-heads.json")
json.dump(session, open(bad_heads, "w"))
kept = os.path.join(root, "kept.json")
code, facts, stderr = run_briefly([bad_heads, "--save-on-exit", kept], "bad-heads")
failures.check(code == 0, f"the app runs with the unfit session (exit {code}): {stderr}")
failures.check(facts.get("error") == "heads_do_not_divide", f"the heads error is shown: {facts.get('error')!r}")
failures.check(facts.get("document") == bad_heads, "the file is the document (saving goes back to it)")
failures.check(json.load(open(kept))["config"]["num_heads"] == heads, "the file's head count is kept, editable")
failures.check(x_matrix(kept) == x_matrix(base), "and its values")
# A screenshot of it shows the error, but exits 1: a script must not take the picture for a trace.
shot = os.path.join(root, "bad-heads.png")
result = subprocess.run([binary, "screenshot", bad_heads, "--stage", "weights", "--out", shot, "--size", "1400x900"],
                        capture_output=True, text=True, timeout=60, env=env)
failures.check(result.returncode == 1 and "cannot be split" in result.stderr and os.path.getsize(shot) > 0,
               f"screenshot of the unfit session: exit 1, the reason on stderr, the picture written: "
               f"{result.returncode} {result.stderr!r}")

# 2. Not JSON at all.
broken = os.path.join(root, "broken.json")
open(broken, "w").write('{"format": "attention-lab/session", "version": 1, "config": {')
code, facts, stderr = run_briefly([broken], "broken")
failures.check(code == 0, f"the app runs (exit {code})")
failures.check("not valid JSON" in facts.get("notices", ""), f"the reason is on screen: {facts.get('notices')!r}")
failures.check(facts.get("document") == "" and facts.get("error") == "", "the default example is open instead")
# In Chinese the reason is in Chinese, with where the file ends: line 1, just past its last character.
broken_text = open(broken).read()
code, facts, stderr = run_briefly([broken], "broken-zh", lang="zh")
notices = facts.get("notices", "")
failures.check("不是有效的 JSON" in notices and f"第 1 行第 {len(broken_text) + 1} 列意外结束" in notices
               and "not valid" not in notices, f"the reason is in Chinese, with its place: {notices!r}")
# --save-on-exit naming that same file would write the default example over it: refused, file untouched.
before = open(broken, "rb").read()
spelled_otherwise = os.path.join(root, ".", "broken.json")
result = subprocess.run([binary, broken, "--frames", "3", "--save-on-exit", spelled_otherwise],
                        capture_output=True, text=True, timeout=60, env=env)
failures.check(result.returncode == 2 and "is the file that failed to load" in result.stderr,
               f"--save-on-exit over the file that failed to load is refused: {result.returncode} {result.stderr!r}")
failures.check(open(broken, "rb").read() == before, "the file that failed to load is untouched")

# 3. Missing shaders.
empty_assets = os.path.join(root, "assets")
os.makedirs(empty_assets)
png = os.path.join(root, "fallback.png")
code, facts, stderr = run_briefly(["default", "--stage", "weights", "--out", png], "fallback",
                                  {"ATTENTION_LAB_ASSET_DIR": empty_assets})
failures.check(code == 0, f"the app runs without shader files (exit {code})")
notices = facts.get("notices", "")
failures.check("shaders/heatmap.frag is missing" in notices and "built into the program" in notices,
               f"the status bar says the built-in shader is used: {notices!r}")
rect = next((r for name, r in facts["widgets"].items() if name.startswith("heatmap.") and name.endswith(".h0")), None)
failures.check(rect is not None, "a heatmap is on screen")
if rect:
    _, _, rows = read_png(png)
    colours = {rows[y][x] for x, y in (cell_sample_point(rect, r, c)
                                       for r in range(int(rect["rows"])) for c in range(int(rect["cols"])))}
    failures.check(len(colours) > 2, f"the heatmap is coloured by the fallback shader: {colours}")

# 4. Import through the dialog.
d_model = session["config"]["d_model"]
length = len(x_matrix(base))
wrong = os.path.join(root, "wrong.csv")
open(wrong, "w").write("\n".join(",".join("1" for _ in range(d_model + 1)) for _ in range(length)) + "\n")
right = os.path.join(root, "right.csv")
new_x = [[round(0.5 * i - 0.25 * j, 2) for j in range(d_model)] for i in range(length)]
open(right, "w").write("\n".join(",".join(str(v) for v in row) for row in new_x) + "\n")
imported = os.path.join(root, "imported.json")
app = App(binary, ["default", "--save-on-exit", imported], env, root, "import", failures)
try:
    app.find_window()
    for path, should_fail in ((wrong, True), (right, False)):
        app.click(app.settled(), "menu.file")
        state = app.wait_for(lambda s: "files.menu.import" in s["widgets"], "the File menu")
        app.click(app.settled(), "files.menu.import")
        app.wait_for(lambda s: "files.dialog.name" in s["widgets"] and s["text_input"] == "yes",
                     "the import dialog, typing in its name field")
        hold_keys("ctrl", "a")
        type_text(path, 30)
        hold_keys("Return")
        if should_fail:
            state = app.wait_for(lambda s: s.get("file_dialog_error"), "the wrong shape is refused")
            message = state.get("file_dialog_error", "")
            failures.check(f"{length}x{d_model}" in message.replace(" ", "") and
                           f"{length}x{d_model + 1}" in message.replace(" ", ""),
                           f"the message names both shapes: {message!r}")
            failures.check(state.get("modified") == "no", "nothing changed")
            app.click(app.settled(), "files.dialog.cancel")
            app.wait_for(lambda s: "files.dialog" not in s["widgets"], "Cancel closes the dialog")
        else:
            app.wait_for(lambda s: s.get("modified") == "yes" and "files.dialog" not in s["widgets"],
                         "the right shape is imported")
    app.away()
    hold_keys("ctrl", "q")
    failures.check(app.wait_exit() == 0, "quits")
finally:
    app.kill()
got = x_matrix(imported)
failures.check(all(abs(a - b) < 1e-6 for ra, rb in zip(got, new_x) for a, b in zip(ra, rb)) and len(got) == length,
               "X is the imported CSV")
failures.finish()
