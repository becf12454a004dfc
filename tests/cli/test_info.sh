#!/usr/bin/env bash
# --help names every command, --version prints the version, --list-presets
# puts a name at the start of each line followed by its description.
set -euo pipefail
bin=$1
src=$2

help=$("$bin" --help)
for word in "trace" "--json" "--summary" "export-torch" "screenshot" "--stage" "--size" "--lang" "--head" \
            "--list-presets" "--version" "session.json"; do
  grep -qF -- "$word" <<<"$help" || { echo "FAIL: --help does not mention $word"; exit 1; }
done
# A build with the window gives its options too (a headless build has none to give).
# (Outputs go through variables: grep -q may stop reading while a long output is still written, and
# under pipefail the writer's SIGPIPE would fail the check.)
refusal=$("$bin" --open no-such-window 2>&1 || true)
if ! grep -q "has no window" <<<"$refusal"; then
  for word in "--open" "--lesson" "--pin" "--quiz-hide" "--keep" "--frame-stats"; do
    grep -qF -- "$word" <<<"$help" || { echo "FAIL: --help does not mention the window's $word"; exit 1; }
  done
fi

# Every window --open accepts (its refusal of a bad name lists them) is named in --help, as the README says.
if windows=$(sed -n 's/.*--open takes a window name: //p' <<<"$refusal") && [ -n "$windows" ]; then
  for window in ${windows//,/ }; do
    grep -qw -- "$window" <<<"$help" || { echo "FAIL: --help does not name the window $window"; exit 1; }
  done
fi

# The help's list of stages holds every stage a trace prints, with sinusoidal positions (x_pos), RoPE
# (q_rot, k_rot), ALiBi (biased) and cross attention (x_kv_pos) too.
stages=$(grep -A2 "^Stages:" <<<"$help" | tr -s ' \n(),.' '\n')
for source in default longformer-global llama-block alibi-6-heads; do
  for stage in $("$bin" trace "$source" --summary | awk '/^stage /{on=1; next} on && $1 !~ /:$/ && $2 ~ /^[0-9]+(x[0-9]+)+$/ {print $1}'); do
    grep -qx -- "$stage" <<<"$stages" || { echo "FAIL: --help's stages lack $stage (traced by $source)"; exit 1; }
  done
done
cross=$(mktemp --suffix=.json)
python3 - "$src/assets/presets/cross-attention.json" "$cross" <<'PY'
import json, sys
session = json.load(open(sys.argv[1]))
session["config"]["positional"] = {"type": "sinusoidal"}
json.dump(session, open(sys.argv[2], "w"))
PY
summary=$("$bin" trace "$cross" --summary)
grep -q "^x_kv_pos " <<<"$summary" || { echo "FAIL: a cross trace with positions has no x_kv_pos"; exit 1; }
grep -qx "x_kv_pos" <<<"$stages" || { echo "FAIL: --help's stages lack x_kv_pos"; exit 1; }
rm -f "$cross"

version=$(grep -oP 'project\(attention_lab VERSION \K[0-9.]+' "$src/CMakeLists.txt")
[ "$("$bin" --version | head -n 1)" = "attention-lab $version" ] || { echo "FAIL: --version: $("$bin" --version)"; exit 1; }
# The second line names the kernels in use: the widest copy this CPU runs, unless
# ATTENTION_LAB_CPU caps it at the portable ones (baseline) or the AVX2+FMA ones (avx2).
"$bin" --version | grep -q "^kernels: " || { echo "FAIL: --version does not name the kernels"; exit 1; }
if [ "$(uname -m)" = x86_64 ]; then
  kernels_line() { ATTENTION_LAB_CPU=$1 "$bin" --version | sed -n 's/^kernels: \(.*\) (ATTENTION_LAB_CPU.*/\1/p'; }
  cpu=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  has() { [[ $cpu == *" $1 "* ]]; }
  expect() {
    [ "$(kernels_line "$1")" = "$2" ] || { echo "FAIL: ATTENTION_LAB_CPU=$1: '$(kernels_line "$1")', not '$2'"; exit 1; }
  }
  expect baseline "x86-64 baseline"
  # AL_TEST_WIDER_KERNELS=1 (tests/CMakeLists.txt): this build has the AVX2 and AVX-512 copies.
  if [ "${AL_TEST_WIDER_KERNELS:-0}" != 1 ]; then
    expect "" "x86-64 baseline"
  elif has avx2 && has fma; then
    expect avx2 "x86-64-v3 (AVX2+FMA)"
    if has avx512f && has avx512vl; then
      expect "" "x86-64-v3 with AVX-512VL registers (AVX2+FMA)"
    else
      expect "" "x86-64-v3 (AVX2+FMA)"
    fi
  fi
fi

"$bin" --list-presets | while read -r name description; do
  [ -n "$description" ] || { echo "FAIL: preset $name has no description"; exit 1; }
  [ -f "$src/assets/presets/$name.json" ] || { echo "FAIL: $name is not a preset file"; exit 1; }
done
"$bin" --list-presets | grep -q "^default " || { echo "FAIL: no default preset"; exit 1; }
echo "help, version and preset list ok"
