#!/usr/bin/env python3
"""Compare one session's `attention-lab trace --json` with PyTorch, stage by stage.

    tools/torch_compare.py build/app/attention-lab my_session.json
    tools/torch_compare.py build/app/attention-lab default        (a preset: via its exported script)

A session file is checked against the independent reference of tests/torch/reference.py
(it must use inline nested arrays, not {"npy": ...} or random specs); a preset name is
checked against its `export-torch` script. Prints each stage's largest scaled difference
|ours - torch| / max(1, |torch|) and exits 1 if any exceeds --tolerance (default 1e-5).
Needs Debian's python3-torch (run with /usr/bin/python3 if another python3 comes first).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "torch"))

STAGES = ["q", "k", "v", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "output"]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), result.stderr.strip()))
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="the attention-lab executable")
    parser.add_argument("session", help="a session.json file or a preset name")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    try:
        import reference
    except ImportError as e:
        sys.exit("needs PyTorch (apt-get install python3-torch): %s" % e)

    traced = json.loads(run([args.binary, "trace", args.session, "--json"]))["stages"]
    if os.path.isfile(args.session):
        with open(args.session) as f:
            expected = reference.stages(json.load(f))
        against = "reference"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "session.py")
            run([args.binary, "export-torch", args.session, "--out", script])
            expected = json.loads(run([sys.executable, script, "--json"]))["stages"]
        against = "exported script"

    failed = False
    print("trace vs %s, tolerance %.0e" % (against, args.tolerance))
    for stage in STAGES:
        problem = reference.compare(stage, traced[stage], expected[stage], args.tolerance)
        print("  %-8s %s" % (stage, problem or "ok, max %.2e" % reference.max_error(traced[stage], expected[stage])))
        failed = failed or problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
