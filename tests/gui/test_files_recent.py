"""Recent files, as a learner reopens work (xdotool, real X input):
1. gone.json, a.json, b.json opened in turn (from the command line, as the desktop opens a file), then
   gone.json deleted: the recent list is b, a (a file that no longer exists is dropped).
2. From b, unchanged: File > Recent > a opens a at once.
3. From a, after an edit: Examples > (recent) b asks "Save changes?" first; Cancel keeps a and the edit,
   Don't save opens b and leaves a.json as it was on disk.
4. a.json deleted while the app runs: choosing it says it cannot be opened; b stays on screen."""
import json
import os
import subprocess
import sys
import time

from files_test_util import App, save_preset, settings_path, user_dirs, xdotool
from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("files-recent")
paths = {name: os.path.join(root, f"{name}.json") for name in ("a", "b", "gone")}
for name, preset in (("a", "default"), ("b", "causal-decoder"), ("gone", "cross-attention")):
    save_preset(binary, preset, paths[name], env)
for name in ("gone", "a", "b"):  # each opened once and closed: the settings remember them, b last
    subprocess.run([binary, paths[name], "--frames", "3"], check=True, timeout=60, capture_output=True, env=env)
failures.check(json.load(open(settings_path(env))).get("recent_files", [])[:3] == [paths["b"], paths["a"], paths["gone"]],
               "a file opened from the command line is remembered as recent")
a_before = open(paths["a"], "rb").read()
os.remove(paths["gone"])


def choose_example_recent(app, index, what):
    """Examples > the recent file `index`, below the examples: the menu scrolls down to it (in a
    900-px window it is taller than the window; it once moved up over its own button instead)."""
    app.click(app.settled(), "menu.examples")
    item = f"examples.recent.{index}"
    state = app.wait_for(lambda s: item in s["widgets"] and "examples.default" in s["widgets"],
                         f"{what}: the Examples menu lists {item}")
    failures.check(state["widgets"]["examples.alibi-6-heads"]["y"] >= state["widgets"]["menu.examples"]["y"] +
                   state["widgets"]["menu.examples"]["h"] - 1, f"{what}: the menu opens below its button")
    xdotool("mousemove", "--window", app.window, *app.centre(state, "examples.default"))
    for _ in range(12):
        xdotool("click", "5")  # the wheel, down
        time.sleep(0.05)
    state = app.wait_for(lambda s: item in s["widgets"] and s["widgets"][item]["y"] + s["widgets"][item]["h"] < 890,
                         f"{what}: the menu scrolls to {item}")
    app.click(app.settled(), item)


app = App(binary, [paths["b"]], env, root, "run", failures)
try:
    app.find_window()
    recent = json.load(open(settings_path(env))).get("recent_files", [])
    failures.check(recent[:2] == [paths["b"], paths["a"]] and paths["gone"] not in recent,
                   f"the recent list is b, a, without the deleted file: {recent}")

    # 2. File > Recent (a submenu: hover it) > a.
    app.click(app.settled(), "menu.file")
    state = app.wait_for(lambda s: "files.menu.recent" in s["widgets"], "the File menu has Recent")
    xdotool("mousemove", "--window", app.window, *app.centre(state, "files.menu.recent"))
    time.sleep(0.4)
    app.wait_for(lambda s: "files.recent.1" in s["widgets"], "Recent opens its list")
    app.click(app.settled(), "files.recent.1")
    app.wait_for(lambda s: s.get("document") == paths["a"], "File > Recent > a opens a at once")

    # 3. Over an edit, the question first.
    app.open_matrices_tab()
    app.type_into_cell("editor.cell.0.0", "3.5")
    choose_example_recent(app, 1, "edited a")  # the list is now a, b
    state = app.wait_for(lambda s: "files.confirm.save" in s["widgets"], "opening b over an edit asks first")
    app.click(state, "files.confirm.cancel")
    state = app.wait_for(lambda s: "files.confirm.save" not in s["widgets"], "Cancel closes the question")
    failures.check(state.get("document") == paths["a"] and state.get("modified") == "yes",
                   "Cancel keeps a with its edit")
    choose_example_recent(app, 1, "edited a, again")
    state = app.wait_for(lambda s: "files.confirm.discard" in s["widgets"], "asked again")
    app.click(state, "files.confirm.discard")
    state = app.wait_for(lambda s: s.get("document") == paths["b"], "Don't save opens b")
    failures.check(state.get("modified") == "no", "b opens unchanged")
    failures.check(open(paths["a"], "rb").read() == a_before, "a.json is as it was on disk")

    # 4. Deleted while listed.
    os.remove(paths["a"])
    choose_example_recent(app, 1, "a deleted recent file")  # b, a
    state = app.wait_for(lambda s: "files.message.ok" in s["widgets"], "a deleted recent file: a message says why")
    failures.check(state.get("document") == paths["b"], "and b stays open")
finally:
    app.kill()
failures.finish()
