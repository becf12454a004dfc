#!/usr/bin/env bash
# export-torch's command line without PyTorch: usage errors, clear messages, scripts
# that are valid Python for every preset. (The numbers are proved by test_torch_proof.py.)
# usage: test_export_cli.sh <attention-lab> <python3>
set -u
bin=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect <exit code> <text the error must contain> <args...>
expect() {
  local code=$1 text=$2
  shift 2
  "$bin" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$code" ] || fail "export-torch ${*:2}: exit $got, expected $code"
  grep -qF -- "$text" "$work/err" || fail "export-torch ${*:2}: stderr lacks '$text': $(cat "$work/err")"
}

expect 2 "which session?" export-torch
expect 2 "unknown option --bogus" export-torch default --bogus
expect 2 "--out needs a file name" export-torch default --out
expect 2 "more than one session" export-torch default causal-decoder
expect 1 "no preset named 'no-such-preset'" export-torch no-such-preset
expect 1 "/no/such/folder" export-torch default --out /no/such/folder/script.py

# A session the core refuses is refused with the core's message, and no script is written.
cat >"$work/bad.json" <<'JSON'
{"format": "attention-lab/session", "version": 1, "config": {"d_model": 6, "num_heads": 4},
 "x": [[1, 2, 3, 4, 5, 6]]}
JSON
expect 1 "6 is not divisible by 4" export-torch "$work/bad.json" --out "$work/bad.py"
[ ! -e "$work/bad.py" ] || fail "a script was written for an invalid session"

# --help goes to stdout with exit 0.
"$bin" export-torch --help | grep -q "usage: attention-lab export-torch" || fail "--help"

# Every preset exports to a script Python compiles; without --out it goes to stdout.
presets=$("$bin" --list-presets | awk '{print $1}')
[ -n "$presets" ] || fail "--list-presets printed nothing"
for p in $presets; do
  "$bin" export-torch "$p" --out "$work/$p.py" 2>/dev/null || { fail "export-torch $p"; continue; }
  "$python" -m py_compile "$work/$p.py" || fail "$p.py is not valid Python"
done
"$bin" export-torch default | cmp -s - "$work/default.py" || fail "stdout export differs from --out export"

[ "$failures" -eq 0 ] && echo "export-torch CLI: all checks passed"
exit $((failures > 0))
