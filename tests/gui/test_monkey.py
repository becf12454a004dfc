"""Monkey test: seeded random clicks, drags, wheel turns, key presses and typed
text on the real window (xdotool under Xvfb), on several presets including the
largest (seed-000-usage). It fails when the app aborts or crashes, prints a
sanitizer report, or no longer answers at the end (a key press must still move
nor save its session and close cleanly on SIGTERM).

  test_monkey.py BINARY SOURCE_DIR [--seconds-per-preset N] [--seed S] [--presets a,b,...] [--lean]

--lean starts each preset too large to keep whole (--memory-limit one byte below its
trace) keeping only the weights (--keep weights), so the input meets the "not kept"
notes and the buttons that keep more (test_monkey_lean.py).

CI runs ~12 s per preset; tools/monkey.sh runs it for longer. A clean exit in the
middle (a random click on File > Quit) starts the app again."""
import argparse
import os
import random
import re
import subprocess
import sys
import time

from gui_test_util import Failures, app_window, output_dir, wait_for_widgets, xdotool

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("source_dir")
parser.add_argument("--seconds-per-preset", type=float, default=12.0)
parser.add_argument("--seed", type=int, default=20261123)
parser.add_argument("--presets", default="default,seed-002-mask-bug,cross-attention,seed-000-usage")
parser.add_argument("--lean", action="store_true")
args = parser.parse_args()

out = output_dir("monkey")
failures = Failures()
WIDTH, HEIGHT = 1280, 800
KEYS = ["Left", "Right", "Up", "Down", "Tab", "Escape", "Return", "BackSpace", "Delete", "Home", "End",
        "space", "ctrl+z", "ctrl+y", "ctrl+shift+z", "1", "0", "minus", "period", "e", "a"]
TEXTS = ["abc", "nan", "-1.5e3", "0.25", "1e-20", "12345678901234567890", "-", "中文", "", "3"]
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def start(preset, widgets_path, log):
    saved = os.path.join(out, f"{preset}-saved.json")
    if os.path.exists(saved):
        os.remove(saved)
    return subprocess.Popen([args.binary, preset, "--lang", "en", "--size", f"{WIDTH}x{HEIGHT}",
                             "--widgets-out", widgets_path, "--save-on-exit", saved, *lean_args(preset)],
                            stdout=log, stderr=subprocess.STDOUT, cwd=out)


def lean_args(preset):
    """With --lean: a memory limit one byte below the preset's whole trace, keeping the weights."""
    if not args.lean:
        return []
    result = subprocess.run([args.binary, "trace", preset, "--summary"], capture_output=True, text=True, timeout=120)
    whole = int(re.search(r"^memory: .*\((\d+) bytes\)", result.stdout, re.M).group(1))
    return ["--memory-limit", str(whole - 1), "--keep", "weights"]


def wait_ready(widgets_path):
    state, ok = wait_for_widgets(widgets_path, lambda s: "step" in s, 60)
    return ok


def act(rng, window):
    """One random action; returns a short description for the log."""
    x, y = rng.randrange(WIDTH), rng.randrange(HEIGHT)
    kind = rng.choices(["click", "double", "right", "drag", "wheel", "key", "type"],
                       weights=[30, 5, 4, 12, 10, 25, 8])[0]
    if kind in ("click", "double", "right"):
        xdotool("mousemove", "--window", window, x, y)
        button = 3 if kind == "right" else 1
        for _ in range(2 if kind == "double" else 1):
            xdotool("mousedown", button)
            time.sleep(0.05)
            xdotool("mouseup", button)
            time.sleep(0.03)
    elif kind == "drag":
        xdotool("mousemove", "--window", window, x, y)
        xdotool("mousedown", 1)
        for _ in range(rng.randrange(2, 6)):
            time.sleep(0.04)
            xdotool("mousemove", "--window", window, rng.randrange(WIDTH), rng.randrange(HEIGHT))
        time.sleep(0.04)
        xdotool("mouseup", 1)
    elif kind == "wheel":
        xdotool("mousemove", "--window", window, x, y)
        xdotool("click", "--repeat", rng.randrange(1, 6), rng.choice([4, 5]))
    elif kind == "key":
        key = rng.choice(KEYS)
        xdotool("keydown", key)
        time.sleep(0.08)
        xdotool("keyup", key)
        return f"key {key}"
    else:
        text = rng.choice(TEXTS)
        if text:
            xdotool("type", "--delay", 30, "--", text)
        return f"type {text!r}"
    return f"{kind} {x},{y}"


def saved_session_loads(path):
    """What the app saved on SIGTERM (--save-on-exit) is a session the CLI traces."""
    if not os.path.exists(path):
        return False
    result = subprocess.run([args.binary, "trace", path, "--summary"], capture_output=True, text=True, timeout=120)
    return result.returncode == 0 or "error" in result.stderr  # an invalid edited session is said, not a crash


# A previous run ends with unsaved edits: its recovery file would ask first.
recovery = os.path.join(os.environ.get("XDG_STATE_HOME", "/nonexistent"), "attention-lab", "recovery.json")
rng = random.Random(args.seed)
for preset in args.presets.split(","):
    widgets_path = os.path.join(out, f"{preset}.json")
    log_path = os.path.join(out, f"{preset}.log")
    log = open(log_path, "w")
    if os.path.exists(recovery):
        os.remove(recovery)
    app = start(preset, widgets_path, log)
    actions, restarts, history = 0, 0, []
    try:
        failures.check(wait_ready(widgets_path), f"[{preset}] the app starts")
        window = app_window()
        deadline = time.time() + args.seconds_per_preset
        while time.time() < deadline:
            code = app.poll()
            if code is not None:
                if code != 0:
                    break
                restarts += 1  # a random click on File > Quit: start again
                os.remove(widgets_path)
                app = start(preset, widgets_path, log)
                wait_ready(widgets_path)
                window = app_window()
                continue
            try:
                history.append(act(rng, window))
                actions += 1
            except subprocess.SubprocessError:
                pass  # the window went away between two xdotool calls: poll() says why
        code = app.poll()
        failures.check(code is None, f"[{preset}] the app is still running after {actions} actions "
                                     f"(exit {code}; last: {history[-8:]})")
        if app.poll() is None:
            # It answers a request: SIGTERM saves the session (--save-on-exit) and closes cleanly.
            app.terminate()
            code = app.wait(timeout=60)
            failures.check(code == 0, f"[{preset}] SIGTERM closes it cleanly, exit {code}")
            failures.check(saved_session_loads(os.path.join(out, f"{preset}-saved.json")),
                           f"[{preset}] it saved its session on request")
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        log.close()
    text = open(log_path, errors="replace").read()
    report = next((mark for mark in SANITIZER_MARKS if mark in text), None)
    failures.check(report is None, f"[{preset}] no sanitizer report; found {report!r}:\n{text[-3000:]}")
    print(f"[{preset}] {actions} actions, {restarts} restarts, seed {args.seed}")
failures.finish()
