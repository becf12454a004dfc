"""The monkey test (test_monkey.py) on sessions too large to keep whole: each preset opens
with a memory limit one byte below its trace, keeping only the weights, so random input
steps onto stages that were not kept, presses the buttons that keep them, explains, diffs
and exports a lean trace. It fails as the monkey test does (a crash, a sanitizer report,
no answer at the end)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "test_monkey.py"), *sys.argv[1:3], "--lean",
                          "--seconds-per-preset", "10", "--seed", "16",
                          "--presets", "default,seed-002-mask-bug,alibi-6-heads,seed-000-usage"])
