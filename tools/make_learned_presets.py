#!/usr/bin/env python3
"""Regenerates the presets made by the training lab's trainer (issue 13):

    python3 tools/make_learned_presets.py [--binary build/app/attention-lab]

Each is `attention-lab train --task T --out ...` (default steps, seed 1; deterministic
on one machine) with a one-line description added, written to assets/presets/.
Only the standard library.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = [
    ("learned-previous-token", "previous_token",
     "A head trained here (train --task previous_token): from learned positions alone it puts each "
     "token's attention on the token before it, the off-diagonal"),
    ("learned-max", "max_so_far",
     "A head trained here (train --task max_so_far, causal): each token attends to the largest letter "
     "seen so far, wherever it is"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "app", "attention-lab"))
    args = parser.parse_args()
    for name, task, description in PRESETS:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, name + ".json")
            run = subprocess.run([args.binary, "train", "--task", task, "--seed", "1", "--out", out, "--json"],
                                 capture_output=True, text=True, check=True)
            accuracy = json.loads(run.stdout)["heldout_accuracy"]
            text = open(out).read()
        head = '"version": 1,\n'
        if head not in text:
            sys.exit("unexpected session layout from attention-lab train")
        text = text.replace(head, head + "  \"description\": %s,\n" % json.dumps(description), 1)
        path = os.path.join(ROOT, "assets", "presets", name + ".json")
        with open(path, "w") as f:
            f.write(text)
        print("%s: %s, held-out accuracy %.4f" % (path, task, accuracy))


if __name__ == "__main__":
    main()
