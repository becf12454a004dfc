#!/usr/bin/env bash
# Every preset is listed, traces with --summary (exit 0, every stage, compute_ms),
# and the small ones print valid JSON with the documented shapes.
set -euo pipefail
bin=$1
src=$2
tmp_summary=$(mktemp)
trap 'rm -f "$tmp_summary"' EXIT

list=$("$bin" --list-presets)
for file in "$src"/assets/presets/*.json; do
  name=$(basename "$file" .json)
  if ! grep -q "^$name " <<<"$list"; then
    echo "FAIL: --list-presets does not list $name"; exit 1
  fi
done
count=$(grep -c . <<<"$list")
[ "$count" -eq "$(ls "$src"/assets/presets/*.json | wc -l)" ] || { echo "FAIL: $count listed"; exit 1; }

for name in $(awk '{print $1}' <<<"$list"); do
  summary=$("$bin" trace "$name" --summary) || { echo "FAIL: trace $name --summary exited $?"; exit 1; }
  for stage in q k v scores scaled masked weights dropped context concat output; do
    grep -q "^$stage " <<<"$summary" || { echo "FAIL: $name summary lacks stage $stage"; echo "$summary"; exit 1; }
  done
  grep -Eq '^compute_ms: [0-9]+(\.[0-9]+)?$' <<<"$summary" || { echo "FAIL: $name: no compute_ms line"; exit 1; }
  grep -q '^memory: ' <<<"$summary" || { echo "FAIL: $name: no memory line"; exit 1; }
  echo "ok: $name"
done

# JSON shapes of the small presets (seed-000-usage prints about 127 MB; its summary above suffices).
for name in default causal-decoder padded-batch cross-attention seed-002-mask-bug seed-004-fused; do
  "$bin" trace "$name" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
d = t["dims"]
B, h, Lq, Lk, dm, dk = d["batch"], d["heads"], d["len_q"], d["len_kv"], d["d_model"], d["d_k"]
def shape(x):
    s = []
    while isinstance(x, list):
        s.append(len(x)); x = x[0]
    return s
expected = {"q": [B, h, Lq, dk], "k": [B, h, Lk, dk], "v": [B, h, Lk, dk], "scores": [B, h, Lq, Lk],
            "scaled": [B, h, Lq, Lk], "masked": [B, h, Lq, Lk], "weights": [B, h, Lq, Lk],
            "dropped": [B, h, Lq, Lk], "context": [B, h, Lq, dk], "concat": [B, Lq, dm], "output": [B, Lq, dm]}
for name, s in expected.items():
    assert shape(t["stages"][name]) == s, (sys.argv[1], name, shape(t["stages"][name]), s)
for b in t["stages"]["weights"]:
    for head in b:
        for row in head:
            assert abs(sum(row) - 1) < 1e-5, row
' "$name" || { echo "FAIL: $name --json"; exit 1; }
  echo "ok: $name --json"
done

# The summary's range and non-finite counts, worked out again from the JSON's values (the
# fuzzers' session of special values puts NaN and infinities in every stage after its input).
for name in causal-decoder alibi-6-heads padded-batch cross-attention "$src/tests/fuzz/corpus/session/special_values.json"; do
  "$bin" trace "$name" --summary >"$tmp_summary"
  "$bin" trace "$name" --json | python3 -c '
import json, math, sys
t = json.load(sys.stdin)
rows = {line.split()[0]: line.split() for line in open(sys.argv[2]) if line[:1].islower()}
def flat(x):
    return [v for item in x for v in flat(item)] if isinstance(x, list) else [float(x)]
for name, values in t["stages"].items():
    v = flat(values)
    finite_or_inf = [x for x in v if not math.isnan(x)]
    nans, infs = len(v) - len(finite_or_inf), sum(math.isinf(x) for x in v)
    fields = rows[name]
    extra = " ".join(fields[4:])
    expected = ", ".join(([str(nans) + " NaN"] if nans else []) + ([str(infs) + " inf"] if infs else []))
    assert extra == expected, (sys.argv[1], name, extra, expected)
    if not finite_or_inf:  # every value NaN: no range
        assert fields[2] == fields[3] == "-", (sys.argv[1], name, fields)
        continue
    lo, hi = float(fields[2]), float(fields[3])
    assert math.isclose(lo, min(finite_or_inf), rel_tol=1e-5) or lo == min(finite_or_inf), (sys.argv[1], name, lo)
    assert math.isclose(hi, max(finite_or_inf), rel_tol=1e-5) or hi == max(finite_or_inf), (sys.argv[1], name, hi)
' "$name" "$tmp_summary" || { echo "FAIL: $name --summary ranges"; exit 1; }
  echo "ok: $name --summary ranges"
done

# -inf masked scores are written as the string "-Infinity".
"$bin" trace causal-decoder --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
assert t["stages"]["masked"][0][0][0][1] == "-Infinity", t["stages"]["masked"][0][0][0]
assert t["mask"][0][0] == [1, 0, 0, 0, 0, 0], t["mask"][0][0]
'
echo "all presets trace"
