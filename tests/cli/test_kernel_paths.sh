#!/usr/bin/env bash
# The kernels this CPU runs by default and the portable baseline (ATTENTION_LAB_CPU=baseline)
# give the same trace, every stage, to 1e-5 on every preset (masks, cross attention, padding,
# fused weights, several heads and batches). The error is relative to the stage's largest value when that is
# above 1: FMA rounds a dot product once per term instead of twice, so a score that cancels
# to near 0 from large terms differs by the terms' size times float epsilon, not its own.
# The AVX-512 copy and the AVX2+FMA one (ATTENTION_LAB_CPU=avx2) run the same chains of
# multiply-adds in other registers: the same bits.
#   $1 attention-lab binary   $2 source folder
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$("$bin" --version | tail -n 1)"
# Beyond the presets: past 256 keys Q·Kᵀ is swept with K packed once, in the AVX-512 copy with
# 16-lane tiles (numerics/panel_gemm.cpp): 6 queries over 2085 keys (a partial last panel), over
# 1088 (whole panels, the scores streamed past the caches), and over 300 with heads of 64 columns
# (the projections' and ·V's tiles of four whole panels).
long_keys() {  # $1 keys, $2 d_model (two heads)
  cat <<JSON
{
  "format": "attention-lab/session", "version": 1,
  "config": {"mode": "projection", "attention": "cross", "d_model": $2, "num_heads": 2, "bias": false},
  "x": {"random": {"shape": [1, 6, $2], "seed": 1, "std": 1.0}},
  "x_kv": {"random": {"shape": [1, $1, $2], "seed": 2, "std": 1.0}},
  "weights": {
    "layout": "math",
    "w_q": {"random": {"shape": [$2, $2], "seed": 3, "std": 0.5}},
    "w_k": {"random": {"shape": [$2, $2], "seed": 4, "std": 0.5}},
    "w_v": {"random": {"shape": [$2, $2], "seed": 5, "std": 0.5}},
    "w_o": {"random": {"shape": [$2, $2], "seed": 6, "std": 0.5}}
  }
}
JSON
}
long_keys 2085 32 >"$work/long-keys.json"
long_keys 1088 32 >"$work/aligned-keys.json"
long_keys 300 128 >"$work/wide-heads.json"
# AL_TEST_WIDER_KERNELS=1 (tests/CMakeLists.txt): this build has the AVX2 and AVX-512 copies.
# Without them (the sanitizer build) every path is the portable one and there is nothing to
# compare: the three long-key sessions are still traced, under the sanitizers there, since no
# other test takes their shapes through the command line.
if [ "${AL_TEST_WIDER_KERNELS:-0}" != 1 ]; then
  for session in long-keys aligned-keys wide-heads; do
    "$bin" trace "$work/$session.json" --summary >/dev/null
    echo "$session: traced (one kernel path in this build, nothing to compare)"
  done
  exit 0
fi
for preset in $("$bin" --list-presets | cut -d' ' -f1) "$work/long-keys.json" "$work/aligned-keys.json" \
    "$work/wide-heads.json"; do
  "$bin" trace "$preset" --json >"$work/fast.json"
  ATTENTION_LAB_CPU=baseline "$bin" trace "$preset" --json >"$work/baseline.json"
  ATTENTION_LAB_CPU=avx2 "$bin" trace "$preset" --json >"$work/avx2.json"
  python3 - "$(basename "$preset" .json)" "$work/fast.json" "$work/baseline.json" "$work/avx2.json" <<'PY'
import json, math, sys
preset, fast, base, avx2 = sys.argv[1], *(json.load(open(f)) for f in sys.argv[2:5])
worst = [0.0, ""]
def largest(x):
    if isinstance(x, list): return max((largest(y) for y in x), default=0.0)
    if isinstance(x, float) and math.isfinite(x): return abs(x)
    return 0.0
def compare(a, b, where, scale=1.0):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), f"{where}: keys differ"
        for k in a: compare(a[k], b[k], f"{where}.{k}", max(1.0, largest(b[k])) if isinstance(b[k], list) else 1.0)
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)): compare(x, y, f"{where}[{i}]", scale)
    elif isinstance(a, float) or isinstance(b, float):
        if where.endswith("compute_ms"): return
        if a is None or b is None or math.isnan(a) or math.isnan(b):
            assert (a is None) == (b is None) and (a is None or math.isnan(a) == math.isnan(b)), f"{where}: {a} vs {b}"
            return
        if math.isinf(a) or math.isinf(b):
            assert a == b, f"{where}: {a} vs {b}"
            return
        err = abs(a - b) / max(scale, abs(b))
        if err > worst[0]: worst[:] = [err, where]
compare(fast, base, preset)
print(f"{preset}: largest difference {worst[0]:.2e} at {worst[1] or '-'}")
assert worst[0] <= 1e-5, f"{preset}: the default and the baseline kernels differ by {worst[0]:.2e} at {worst[1]}"
worst[:] = [0.0, ""]
compare(fast, avx2, preset)
assert worst[0] == 0.0, f"{preset}: the default and the AVX2 kernels differ by {worst[0]:.2e} at {worst[1]}"
PY
done
