"""Without a display the app must say how to run it (naming xvfb-run) and exit
with its documented code 3 (README), never crash: a signal (SIGBUS, SIGFPE, ...)
or any other code fails. Also: a bad command line is a usage error."""
import os
import subprocess
import sys

from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()

env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
result = subprocess.run([binary, "default"], env=env, capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 3, f"exit code 3 (no display), got {result.returncode}")
failures.check(result.stderr.startswith("attention-lab: cannot open a window (") and
               'xvfb-run -a -s "-screen 0 1920x1080x24" attention-lab' in result.stderr,
               f"the message says there is no window and how to run under xvfb-run: {result.stderr!r}")

result = subprocess.run([binary, "screenshot", "default", "--stage", "nonsense", "--out", "x.png"],
                        capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 2, f"an unknown stage is a usage error (2), got {result.returncode}")
failures.check("unknown stage 'nonsense'" in result.stderr, f"names the bad stage: {result.stderr!r}")
failures.finish()
