#!/usr/bin/env bash
# Command lines a hurried user types: an output path that is the session being read, a --out
# folder that does not exist, a misspelt subcommand, an option missing its value or given twice,
# and window options naming what the session lacks. Each is refused with its exit code and
# exact message before anything is written or computed. (No display is needed: the window's
# refusals come before it opens.)
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect <exit code> <exact first line of stderr> <args...>; a run that is not refused at once
# (train's million steps) is stopped after a minute.
expect() {
  local code=$1 want=$2
  shift 2
  timeout 60 "$bin" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local got=$? first
  first=$(head -n 1 "$dir/stderr")
  [ "$got" -eq "$code" ] || fail "attention-lab $*: exit $got, expected $code ($first)"
  [ "$first" = "$want" ] || fail "attention-lab $*: said  '$first'"$'\n'"      expected '$want'"
}

# A session file of the learner's, and a copy to tell whether it was touched.
cp "$2/assets/presets/default.json" s.json && cp s.json s.orig || fail "no default preset file"
unchanged() { cmp -s s.json s.orig || fail "$1: s.json was overwritten"; cp s.orig s.json; }

# 1. An output that is the session file, however spelled, is refused before anything is written.
overwrite=": writing there would replace the session; nothing was written, choose another name"
expect 2 "attention-lab: error: export-torch: --out s.json is the session file s.json$overwrite" \
  export-torch s.json --out s.json
unchanged "export-torch --out s.json"
expect 2 "attention-lab: error: export-torch: --out $dir/./s.json is the session file s.json$overwrite" \
  export-torch s.json --out "$dir/./s.json"
unchanged "export-torch --out $dir/./s.json"
ln s.json hard.json
expect 2 "attention-lab: error: export-torch: --out hard.json is the session file s.json$overwrite" \
  export-torch s.json --out=hard.json
unchanged "export-torch --out=hard.json (a hard link)"

# 3. train checks its --out before the first step (a million steps would take an hour), and
# prints its result even when the save at the end fails.
expect 1 "attention-lab: error: train: cannot save '/nonexistent/s.json': the folder '/nonexistent' does not exist; nothing was trained" \
  train --task previous_token --steps 1000000 --out /nonexistent/s.json --json
expect 1 "attention-lab: error: train: '$dir' is a folder; give a file name in it; nothing was trained" \
  train --task previous_token --out "$dir" --json
expect 2 "attention-lab: error: train: --out needs a value, but it is empty" train --task previous_token --out "" --json
# The folder is fine at the start; a folder put in the file's place while it trains fails the save.
"$bin" train --task previous_token --steps 10000 --out late.json --json >late.out 2>late.err &
training=$!
sleep 1
mkdir -p late.json/inside
wait "$training"
code=$?
err=$(head -n 1 late.err)
[ "$code" -eq 1 ] || fail "train whose save failed exited $code, expected 1"
[[ "$err" == "attention-lab: error: train: cannot save 'late.json': "*"(the result above was not saved as a session)" ]] ||
  fail "train whose save failed said '$err'"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["steps"] == 10000 and len(r["loss"]) == 10000' \
  late.out || fail "train whose save failed did not print its result: $(head -c 200 late.out)"

# 11. A misspelt subcommand is named as one, with the closest subcommand.
list="the subcommands are trace, grad, decode, train, export-torch, screenshot (see attention-lab --help)"
expect 2 "attention-lab: error: 'export' is not a subcommand, a preset or a file (did you mean export-torch?); $list" \
  export default
expect 2 "attention-lab: error: 'Trace' is not a subcommand, a preset or a file (did you mean trace?); $list" \
  Trace default --json
expect 2 "attention-lab: error: 'screensot' is not a subcommand, a preset or a file (did you mean screenshot?); $list" \
  screensot default --stage x --out p.png
expect 2 "attention-lab: error: 'xyzzy' is not a subcommand, a preset or a file; $list" xyzzy default
# Two session files are still two sessions.
expect 2 "attention-lab: more than one session given ('s.json' and 'default')" s.json default

# 12. An option missing its value does not take the next option as its value; an option is given once.
expect 2 "attention-lab: error: train: --steps needs a value, but the next argument is the option --json" \
  train --task previous_token --steps --json
expect 2 "attention-lab: error: train: --task needs a value, but the next argument is the option --json" \
  train --task --json
expect 2 "attention-lab: error: train: --steps is given twice ('5', then '6'); give it once" \
  train --task previous_token --steps 5 --steps 6 --json
expect 2 "attention-lab: error: train: --positions needs a value, but it is empty" \
  train --task previous_token --positions "" --json
expect 2 "attention-lab: error: grad: --upstream needs a .npy file, but the next argument is the option --json" \
  grad default --upstream --json
expect 2 "attention-lab: error: trace: --keep needs a list of stages, e.g. --keep weights, but the next argument is the option --json" \
  trace default --keep --json
expect 2 "attention-lab: error: trace: --keep is given twice ('weights', then 'scores'); give it once" \
  trace default --keep weights --keep scores --json
expect 2 "attention-lab: error: export-torch: --out is given twice ('a.py', then 'b.py'); give it once" \
  export-torch default -o a.py --out=b.py


if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "every command line was handled as documented"
