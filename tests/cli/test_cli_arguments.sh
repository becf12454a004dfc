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


if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "every command line was handled as documented"
