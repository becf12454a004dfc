#!/usr/bin/env bash
# `attention-lab grad`: the JSON contract (keys, names, math-layout shapes, the
# trace's stage shapes), G = ones by default, and a G of the wrong shape refused
# with both shapes. The values themselves are checked against finite differences
# (tests/core/test_backward.cpp) and PyTorch autograd (tests/torch/test_torch_grad.py).
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# write_npy <file> <shape, e.g. 1,6,8> <value>: a float32 .npy filled with one value (standard library only).
write_npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, shape, value = sys.argv[1], [int(v) for v in sys.argv[2].split(",")], float(sys.argv[3])
count = 1
for n in shape:
    count *= n
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % n for n in shape)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % count, *([value] * count)))
PY
}

# check_json <source> <expected input names, in order> <"name=shape" pairs for some of them>
check_json() {
  local source=$1 names=$2 shapes=$3
  "$bin" grad "$source" --json >"$dir/grad.json" || { fail "grad $source exited $?"; return; }
  "$bin" trace "$source" --json >"$dir/trace.json" || { fail "trace $source"; return; }
  python3 - "$dir/grad.json" "$dir/trace.json" "$names" "$shapes" <<'PY' || { failures=$((failures + 1)); return; }
import json, sys
grad, trace = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
names, shapes = sys.argv[3].split(), dict(s.split("=") for s in sys.argv[4].split())
def shape(v):
    return [len(v)] + shape(v[0]) if isinstance(v, list) else []
problems = []
if list(grad) != ["loss", "inputs", "stages"]:
    problems.append("top-level keys %s" % list(grad))
if list(grad["inputs"]) != names:
    problems.append("inputs %s, expected %s" % (list(grad["inputs"]), names))
for name, want in shapes.items():
    got = "x".join(map(str, shape(grad["inputs"][name])))
    if got != want:
        problems.append("%s has shape %s, expected %s" % (name, got, want))
if list(grad["stages"]) != list(trace["stages"]):
    problems.append("stages %s" % list(grad["stages"]))
for name, values in trace["stages"].items():
    if shape(grad["stages"][name]) != shape(values):
        problems.append("stage %s: %s, trace %s" % (name, shape(grad["stages"][name]), shape(values)))
# L = sum(output * G) with G = ones: the sum of the traced output.
total = sum(sum(sum(row) for row in b) for b in trace["stages"]["output"])
if abs(grad["loss"] - total) > 1e-4 * max(1, abs(total)):
    problems.append("loss %s, but the output sums to %s" % (grad["loss"], total))
# The output's gradient is G itself: all ones.
if any(v != 1 for b in grad["stages"]["output"] for row in b for v in row):
    problems.append("output gradient is not G = ones")
for p in problems:
    print("FAIL: grad %s: %s" % (sys.argv[1], p))
sys.exit(1 if problems else 0)
PY
  echo "ok: grad $source"
}

check_json default "x w_q b_q w_k b_k w_v b_v w_o b_o" "x=1x6x8 w_q=8x8 b_q=8 w_o=8x8"
# bias off: no bias gradients
check_json cross-attention "x_q x_kv w_q w_k w_v w_o" "x_q=1x3x8 x_kv=1x5x8"
# Read in torch layout (24 x 8), reported in math layout (8 x 24).
check_json seed-004-fused "x w_qkv b_qkv w_o b_o" "x=2x4x8 w_qkv=8x24 b_qkv=24"
check_json seed-003-example "q k v" "q=1x5x2 k=1x5x2 v=1x5x2"

# Without --upstream G is all ones: the same as giving ones.
write_npy "$dir/ones.npy" 1,6,8 1
"$bin" grad default --upstream "$dir/ones.npy" --json >"$dir/explicit.json"
"$bin" grad default --json >"$dir/implicit.json"
cmp -s "$dir/explicit.json" "$dir/implicit.json" || fail "grad with G = ones.npy differs from the default G"

# expect_error <substring> <args...>: non-zero exit below 128, one clear message.
source "$(dirname "$0")/expect_error.sh"
write_npy "$dir/wrong.npy" 1,6,7 1
expect_error "G has shape 1x6x7 but the output has shape 1x6x8" grad default --upstream "$dir/wrong.npy" --json
expect_error "give --json" grad default
expect_error "unknown option --bogus" grad default --bogus --json
expect_error "--upstream needs" grad default --json --upstream
expect_error "which session" grad --json
expect_error "no-such-file.npy" grad default --upstream "$dir/no-such-file.npy" --json
help=$("$bin" --help)  # not piped into grep -q: see test_train.sh
grep -qF "grad <preset | session.json> [--upstream G.npy] --json" <<<"$help" || fail "--help does not show grad"

[ "$failures" -eq 0 ] && echo "grad ok" || { echo "$failures failure(s)"; exit 1; }
