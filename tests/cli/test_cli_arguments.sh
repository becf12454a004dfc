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
expect 2 "attention-lab: --out s.json is the session file s.json$overwrite" screenshot s.json --stage x --out s.json
unchanged "screenshot --out s.json"
expect 2 "attention-lab: --widgets-out ./s.json is the session file s.json$overwrite" \
  screenshot s.json --stage x --out p.png --widgets-out ./s.json
unchanged "screenshot --widgets-out ./s.json"
expect 2 "attention-lab: --heatmap-out s.json is the session file s.json$overwrite" \
  screenshot s.json --stage weights --out p.png --export-heatmap weights.h0 --heatmap-out s.json
unchanged "screenshot --heatmap-out s.json"
expect 2 "attention-lab: --out s.json is the session file s.json$overwrite" default --snapshot s.json --out s.json
unchanged "--snapshot s.json --out s.json"
[ ! -e p.png ] || fail "a picture was written although the command was refused"

# 3. train checks its --out before the first step (a million steps would take an hour: a missing
# folder, a folder, a read-only file), and prints its result even when the save at the end fails.
expect 1 "attention-lab: error: train: cannot save '/nonexistent/s.json': the folder '/nonexistent' does not exist; nothing was trained" \
  train --task previous_token --steps 1000000 --out /nonexistent/s.json --json
expect 1 "attention-lab: error: train: '$dir' is a folder; give a file name in it; nothing was trained" \
  train --task previous_token --out "$dir" --json
cp s.orig kept.json && chmod 444 kept.json
expect 1 "attention-lab: error: train: cannot save 'kept.json': the file is read-only; it is unchanged. Save under another name, or make the file writable first; nothing was trained" \
  train --task previous_token --steps 1000000 --out kept.json --json
cmp -s kept.json s.orig || fail "train --out onto a read-only file changed it"
expect 2 "attention-lab: error: train: --out needs a value, but it is empty" train --task previous_token --out "" --json
# The folder is fine at the start; a folder put in the file's place after the check fails the save.
# The save waits 3 s before its rename (a test hook), and the folder comes while its temporary file
# is there (still there 0.3 s later: the check before training makes one and removes it at once).
# A fixed sleep instead needed 10000 steps to outlast it: six minutes in the sanitizer build.
ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME=late.json ATTENTION_LAB_TEST_PAUSE_SECONDS=3 \
  "$bin" train --task previous_token --steps 300 --out late.json --json >late.out 2>late.err &
training=$!
for _ in $(seq 1200); do
  if compgen -G ".late.json.tmp-*" >/dev/null; then
    sleep 0.3
    compgen -G ".late.json.tmp-*" >/dev/null && break
  fi
  sleep 0.1
done
mkdir -p late.json/inside
wait "$training"
code=$?
err=$(head -n 1 late.err)
[ "$code" -eq 1 ] || fail "train whose save failed exited $code, expected 1"
[[ "$err" == "attention-lab: error: train: cannot save 'late.json': "*"(the result above was not saved as a session)" ]] ||
  fail "train whose save failed said '$err'"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["steps"] == 300 and len(r["loss"]) == 300' \
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
expect 2 "attention-lab: --stage needs a stage name, but the next argument is the option --out" \
  screenshot default --stage --out p.png
expect 2 "attention-lab: --stage is given twice ('x,q', then 'weights'); give it once" \
  screenshot default --stage x,q --stage weights --out p.png
expect 2 "attention-lab: --size needs WxH, e.g. 1600x1000, but it is empty" default --size ""

# 10. Window options naming what the session does not have are refused, not replaced.
expect 2 "attention-lab: --stage rope: stage 'rope' is not in this session (positions: none); its stages are x, qkv, scores, scaled, masked, weights, dropped, context, concat, w_o, output" \
  screenshot default --stage rope --out p.png
expect 2 "attention-lab: --stage alibi: stage 'alibi' is not in this session (positions: rope); its stages are x, qkv, rope, scores, scaled, masked, weights, dropped, context, concat, w_o, output" \
  screenshot mistral-window --stage weights,alibi --out p.png
expect 2 "attention-lab: --head 99: this session has heads 0–1" screenshot default --stage weights --head 99 --out p.png
expect 2 "attention-lab: --head 1: this session has only head 0" seed-003-example --head 1 --frames 1
expect 2 "attention-lab: --lesson 17: the guided tour has steps 1–16" default --lesson 17 --frames 1  # it opened step 16
expect 2 "attention-lab: --pin weights:0:9:0:0: head 9: this session has heads 0–1" \
  screenshot default --stage weights --pin weights:0:9:0:0 --out p.png
expect 2 "attention-lab: --pin weights:0:-1:0:0: head -1: this session has heads 0–1; write avg for their average" \
  screenshot default --stage weights --pin weights:0:-1:0:0 --out p.png
expect 2 "attention-lab: --pin k:0:2:0:0: head 2: this session has K/V heads 0–1" \
  screenshot llama-block --stage qkv --pin k:0:2:0:0 --out p.png
expect 2 "attention-lab: --pin weights:1:0:0:0: batch item 1: this session has only batch item 0" \
  screenshot default --stage weights --pin weights:1:0:0:0 --out p.png
expect 2 "attention-lab: --pin weights:0:avg:6:0: row 6: weights has rows 0–5" \
  screenshot default --stage weights --pin weights:0:avg:6:0 --out p.png
expect 2 "attention-lab: --pin grad.output:0:0:0:8: column 8: output has columns 0–7" \
  screenshot default --stage output --pin grad.output:0:0:0:8 --out p.png
expect 2 "attention-lab: --pin q_rot:0:0:0:0: stage 'q_rot' is not in this session (positions: none)" \
  screenshot default --stage qkv --pin q_rot:0:0:0:0 --out p.png
expect 2 "attention-lab: --pin needs stage:batch:head:row:col, e.g. scores:0:0:1:1 (head: a number or avg), got 'weights:0:0:1x:0'" \
  screenshot default --stage weights --pin weights:0:0:1x:0 --out p.png
expect 2 "attention-lab: --out b.jpg: the picture is written as PNG; give a name ending in .png" \
  screenshot default --stage weights --out b.jpg
expect 2 "attention-lab: --heatmap-out h.JPEG: the picture is written as PNG; give a name ending in .png" \
  screenshot default --stage weights --out p.png --export-heatmap weights.h0 --heatmap-out h.JPEG
[ ! -e p.png ] && [ ! -e b.jpg ] || fail "a picture was written although the command was refused"

# 11. --help after a session or screenshot gives the window's options (it was "unknown option --help").
for args in "default --help" "screenshot -h" "s.json --stage weights --help"; do
  # shellcheck disable=SC2086
  out=$("$bin" $args 2>"$dir/stderr"); got=$?
  [ "$got" -eq 0 ] && [[ "$out" == "usage: attention-lab [<preset | session.json>]"* ]] && [ ! -s "$dir/stderr" ] ||
    fail "attention-lab $args: exit $got, said '${out%%$'\n'*}' $(head -n 1 "$dir/stderr")"
done
unchanged "--help"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "every command line was handled as documented"
