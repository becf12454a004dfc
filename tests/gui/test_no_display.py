"""Without a display the app must say how to run it (naming xvfb-run) and exit
with a non-zero code, never crash. Also: a bad command line is a usage error."""
import os
import subprocess
import sys

from gui_test_util import Failures

binary = sys.argv[1]
failures = Failures()

env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
result = subprocess.run([binary, "default"], env=env, capture_output=True, text=True, timeout=60)
failures.check(result.returncode not in (0, -6, -11), f"exit code is a clean failure, got {result.returncode}")
failures.check("xvfb-run" in result.stderr, f"the message names xvfb-run: {result.stderr!r}")

result = subprocess.run([binary, "screenshot", "default", "--stage", "nonsense", "--out", "x.png"],
                        capture_output=True, text=True, timeout=60)
failures.check(result.returncode == 2, f"an unknown stage is a usage error (2), got {result.returncode}")
failures.check("unknown stage 'nonsense'" in result.stderr, f"names the bad stage: {result.stderr!r}")
failures.finish()
