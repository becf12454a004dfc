"""A pinned cell the session loses through an edit in the window is let go, not kept pointing at
nothing (xdotool): default, 2 heads, head 1's weights cell (0, 0) pinned; Settings, heads 1: the
pin is gone and nothing is in error; back to 2 heads: the cell is not pinned again by itself.
(A --pin the session lacks at start is refused: test_trust_items.)"""
import sys

from files_test_util import App, hold_keys, user_dirs
from gui_test_util import Failures, ctrl_click, type_text

binary = sys.argv[1]
failures = Failures()
root, env = user_dirs("pin-forgotten")


def set_heads(app, heads):
    state = app.settled()
    rect = state["widgets"]["config.heads"]
    revision = int(state["revision"])
    ctrl_click(app.window, int(rect["x"] + 12), int(rect["y"] + rect["h"] / 2))  # left end: the field, not its -/+
    app.wait_for(lambda s: s["text_input"] == "yes", "Ctrl+click on the heads field starts typing")
    hold_keys("ctrl", "a")
    type_text(str(heads))
    hold_keys("Return")
    return app.wait_for(lambda s: int(s["revision"]) > revision and s["text_input"] == "no", f"{heads} heads")


def check_pinned(app, pinned, status):
    """The cell --pin asked for is pinned, and the status line reads `status`."""
    app.find_window()
    state = app.wait_for(lambda s: s.get("pinned") == pinned, f"{pinned} is pinned")
    failures.check(state.get("status.pinned") == status,
                   f"the status line reads {status!r}: {state.get('status.pinned')!r}")
    return state


# One batch item: the status line names the cell only.
app = App(binary, ["default", "--pin", "weights:0:1:0:0"], env, root, "run", failures)
try:
    state = check_pinned(app, "weights.h1:0:0", "pinned weights.h1 [0, 0]")
    app.click(state, "tab.config")
    app.wait_for(lambda s: "config.heads" in s["widgets"], "the Settings tab")
    state = set_heads(app, 1)
    state = app.wait_for(lambda s: s.get("pinned") == "", "one head: head 1's pin is let go")
    failures.check(state.get("error") == "", f"one head is a valid session: {state.get('error')!r}")
    state = set_heads(app, 2)
    failures.check(app.settled().get("pinned") == "", "back to two heads: nothing pinned by itself")
finally:
    app.kill()

# With several batch items the status line says which one the pinned cell is in.
app = App(binary, ["padded-batch", "--pin", "weights:2:0:1:1"], env, root, "batch", failures)
try:
    check_pinned(app, "weights.h0:1:1", "pinned weights.h0 [1, 1] of batch item 2")
finally:
    app.kill()

# The first frame already shows it: --pin was once applied after the status line had drawn, so
# frame 0 had the pin without its status text (a test reading that frame failed under ASan).
app = App(binary, ["padded-batch", "--pin", "weights:2:0:1:1", "--frames", "1"], env, root, "first", failures)
failures.check(app.wait_exit() == 0, "one frame drawn, exit 0")
first = app.state() or {}
failures.check((first.get("pinned"), first.get("status.pinned")) ==
               ("weights.h0:1:1", "pinned weights.h0 [1, 1] of batch item 2"),
               f"frame 0: the pin and its status text: {first.get('pinned')!r}, {first.get('status.pinned')!r}")
failures.finish()
