#!/usr/bin/env bash
# `attention-lab train`: the JSON contract (exact keys, one loss per step), the
# done criterion for previous_token at the default steps, --out saving an
# ordinary session that traces, determinism, and bad arguments refused clearly.
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$bin" train --task previous_token --out "$dir/prev.json" --json >"$dir/prev.out" || fail "train previous_token exited $?"
python3 - "$dir/prev.out" <<'PY' || failures=$((failures + 1))
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
if list(r) != ["task", "steps", "loss", "heldout_accuracy", "seconds"]:
    problems.append("keys %s" % list(r))
if r["task"] != "previous_token" or len(r["loss"]) != r["steps"]:
    problems.append("task %s, %d losses for %d steps" % (r["task"], len(r["loss"]), r["steps"]))
if r["heldout_accuracy"] < 0.98:
    problems.append("held-out accuracy %s < 0.98 at the default steps" % r["heldout_accuracy"])
if not r["loss"][-1] < r["loss"][0] / 10:
    problems.append("the loss did not fall: %s -> %s" % (r["loss"][0], r["loss"][-1]))
for p in problems:
    print("FAIL: train:", p)
sys.exit(1 if problems else 0)
PY
# The saved session is an ordinary one: it traces, with its 8 tokens.
"$bin" trace "$dir/prev.json" --summary >"$dir/summary" || fail "the saved session does not trace"
grep -q "^dims: B=1 heads=2 Lq=8 Lk=8 d_model=32" "$dir/summary" || fail "saved session dims: $(grep dims "$dir/summary")"
grep -q '"tokens": \["' "$dir/prev.json" || fail "the saved session has no tokens"

# Deterministic: the same seed gives the same losses; another seed others.
a=$("$bin" train --task duplicate --steps 30 --seed 4 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["loss"])')
b=$("$bin" train --task duplicate --steps 30 --seed 4 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["loss"])')
c=$("$bin" train --task duplicate --steps 30 --seed 5 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["loss"])')
[ "$a" = "$b" ] || fail "two runs with seed 4 differ"
[ "$a" != "$c" ] || fail "seeds 4 and 5 give the same run"

source "$(dirname "$0")/expect_error.sh"
expect_error "unknown task 'sorting'; the tasks are previous_token, max_so_far, duplicate" train --task sorting --json
expect_error "which task" train --json
expect_error "--positions is learned, sinusoidal or rope, not 'alibi'" train --task previous_token --positions alibi --json
expect_error "--steps must be a whole number" train --task duplicate --steps ten --json
expect_error "--steps must be a whole number" train --task duplicate --steps 0 --json
expect_error "--seed must be a whole number" train --task duplicate --seed -1 --json
expect_error "give --json" train --task duplicate
expect_error "--out needs a value" train --task duplicate --json --out
expect_error "unknown argument --fast" train --task duplicate --fast --json
expect_error "/no-such-folder/s.json" train --task duplicate --steps 1 --out /no-such-folder/s.json --json
# The help in a variable: grep -q stops reading at its match, and the rest of a long help written into the
# closed pipe would fail the pipeline (pipefail) with SIGPIPE.
help=$("$bin" --help)
grep -qF "train --task NAME [--steps N] [--seed S] [--positions P] [--out session.json] --json" <<<"$help" ||
  fail "--help lacks train or its --positions"

[ "$failures" -eq 0 ] && echo "train ok" || { echo "$failures failure(s)"; exit 1; }
