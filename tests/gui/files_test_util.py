"""Helpers of the file tests (test_files_*.py): the real app in its own
HOME / XDG folders (so a test never touches the user's settings or recovery
file, and tests running at once do not share them), driven with xdotool."""
import json
import os
import subprocess
import time

from gui_test_util import app_window, ctrl_click, hold_keys, temporary_dir, type_text, xdotool  # noqa: F401 (re-exported to the file tests)


def user_dirs(label):
    """A fresh HOME with XDG_CONFIG_HOME and XDG_STATE_HOME inside; returns (root, env)."""
    root = temporary_dir(label)
    env = dict(os.environ)
    env.update(HOME=root, XDG_CONFIG_HOME=os.path.join(root, "config"),
               XDG_STATE_HOME=os.path.join(root, "state"))
    return root, env


def save_preset(binary, preset, path, env):
    """Writes a built-in example to `path` as a session file (the app's own save, explicit numbers);
    returns its bytes."""
    subprocess.run([binary, preset, "--frames", "2", "--save-on-exit", path],
                   check=True, timeout=60, capture_output=True, env=env)
    return open(path, "rb").read()


def recovery_path(env):
    return os.path.join(env["XDG_STATE_HOME"], "attention-lab", "recovery.json")


def settings_path(env):
    return os.path.join(env["XDG_CONFIG_HOME"], "attention-lab", "settings.json")


class App:
    """One run of the app with a widget file to watch."""

    def __init__(self, binary, args, env, out_dir, name, failures, lang="en"):
        self.widgets_path = os.path.join(out_dir, name + "-widgets.json")
        if os.path.exists(self.widgets_path):
            os.remove(self.widgets_path)
        self.failures = failures
        self.process = subprocess.Popen([binary, *args, "--lang", lang, "--size", "1400x900",
                                         "--widgets-out", self.widgets_path], env=env)
        self.window = None

    def state(self):
        try:
            return json.load(open(self.widgets_path))
        except (OSError, ValueError):
            return None

    def wait_for(self, predicate, what, timeout=15.0):
        deadline = time.time() + timeout
        state = None
        while time.time() < deadline:
            state = self.state()
            if state and predicate(state):
                return state
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.failures.check(False, f"timed out waiting for: {what} (last facts: "
                                   f"{ {k: v for k, v in (state or {}).items() if k != 'widgets'} })")
        return state or {"widgets": {}}

    def settled(self):
        """The widget file once it stops changing (ImGui lays popups out over two frames)."""
        previous = None
        for _ in range(60):
            time.sleep(0.1)
            try:
                current = open(self.widgets_path).read()
            except OSError:
                continue
            if current == previous:
                break
            previous = current
        return json.loads(previous)

    def find_window(self):
        self.wait_for(lambda s: "stepper.next" in s["widgets"], "the app's first frame", 30)
        self.window = app_window()
        return self.window

    def title(self):
        return xdotool("getwindowname", self.window).strip()

    def settled_title(self, expected, timeout=5.0):
        """The window title once it reads `expected`, or the last one read: the app renames
        its window a frame after the state file shows the change."""
        deadline = time.time() + timeout
        title = self.title()
        while title != expected and time.time() < deadline:
            time.sleep(0.05)
            title = self.title()
        return title

    def centre(self, state, name):
        rect = state["widgets"][name]
        return int(rect["x"] + rect["w"] / 2), int(rect["y"] + rect["h"] / 2)

    def click(self, state, name):
        xdotool("mousemove", "--window", self.window, *self.centre(state, name))
        time.sleep(0.2)
        # Held over a few frames, like the keys: a busy machine may draw slowly.
        xdotool("mousedown", 1)
        time.sleep(0.15)
        xdotool("mouseup", 1)
        time.sleep(0.2)

    def away(self):
        """The pointer over the window but on no widget, so keys go to the app."""
        xdotool("mousemove", "--window", self.window, 5, 500)
        time.sleep(0.1)

    def type_into_cell(self, cell, text):
        """Ctrl+click a matrix editor cell, type, Enter (as the e2e test does)."""
        state = self.settled()
        revision = int(state["revision"])
        ctrl_click(self.window, *self.centre(state, cell))
        self.wait_for(lambda s: s["text_input"] == "yes", f"Ctrl+click on {cell} starts typing")
        type_text(text)
        hold_keys("Return")
        # Typing edits as it goes: the revision moves before Enter; typing must also end.
        return self.wait_for(lambda s: int(s["revision"]) > revision and s["text_input"] == "no",
                             f"typing {text} into {cell}, Enter ends typing")

    def open_matrices_tab(self):
        self.click(self.settled(), "tab.matrices")
        self.wait_for(lambda s: "editor.cell.0.0" in s["widgets"], "the matrix editor")

    def open_file_with_dialog(self, path):
        """Ctrl+O, type the whole path into the name field, Enter."""
        self.away()
        hold_keys("ctrl", "o")
        self.wait_for(lambda s: "files.dialog.name" in s["widgets"] and s["text_input"] == "yes",
                      "Ctrl+O shows the file dialog, typing in its name field")
        type_text(path, 30)
        hold_keys("Return")
        return self.wait_for(lambda s: s.get("document") == path and "files.dialog" not in s["widgets"],
                             f"the dialog opens {path}")

    def wait_exit(self, timeout=20):
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.failures.check(False, "the app did not exit")
            self.kill()
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def x_matrix(path):
    """X of batch item 0 as a list of rows, from a saved session."""
    x = json.load(open(path))["x"]
    return x[0] if isinstance(x[0][0], list) else x
