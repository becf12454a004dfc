#!/usr/bin/env bash
# `attention-lab decode`: the JSON contract (keys, shapes per step, the cache growing) and the
# refusals with their reasons. The values are checked against the full trace in
# tests/core/numerics/test_decode.cpp and tests/torch/test_torch_modern.py.
set -uo pipefail
bin=$1
failures=0
source "$(dirname "$0")/expect_error.sh"

# causal-decoder: 6 tokens, d_model 8, 2 heads of d_k 4, B = 1.
out=$("$bin" decode causal-decoder --json) || { echo "FAIL: decode causal-decoder exited $?"; exit 1; }
python3 - "$out" <<'PY' || failures=$((failures + 1))
import json, sys
run = json.loads(sys.argv[1])
def shape(t):
    s = []
    while isinstance(t, list):
        s.append(len(t))
        t = t[0] if t else None
    return s
assert run["cache_bytes_per_token"] == 2 * 2 * 4 * 4 == run["multi_head_bytes_per_token"], run
assert [s["t"] for s in run["steps"]] == list(range(6))
for s in run["steps"]:
    n = s["t"] + 1
    assert s["positions"] == list(range(n)), s["positions"]
    assert shape(s["q"]) == [1, 2, 1, 4] and shape(s["k_cache"]) == [1, 2, n, 4] == shape(s["v_cache"])
    assert shape(s["weights"]) == [1, 2, 1, n] and shape(s["output"]) == [1, 1, 8]
    for head in s["weights"][0]:
        assert abs(sum(head[0]) - 1) < 1e-6
    assert "dropped" not in s, "no dropout: no dropped weights"
    assert "fully_masked_rows" not in s, "every token sees itself"
print("ok: decode causal-decoder --json")
PY

# With dropout in training each step also gives the weights its output sums: each 0 or w / (1 - p).
dropout_session=$(mktemp --suffix=.json)
trap 'rm -f "$dropout_session"' EXIT
python3 - "$bin" "$dropout_session" "$(dirname "$0")/../../assets/presets/causal-decoder.json" <<'PY' || failures=$((failures + 1))
import json, subprocess, sys
binary, path, preset = sys.argv[1], sys.argv[2], sys.argv[3]
session = json.load(open(preset))
session["config"]["dropout"] = {"p": 0.5, "training": True, "seed": 7}
json.dump(session, open(path, "w"))
run = json.loads(subprocess.run([binary, "decode", path, "--json"], capture_output=True, text=True, check=True).stdout)
zeros = kept = 0
for s in run["steps"]:
    for w_head, d_head in zip(s["weights"][0], s["dropped"][0]):
        for w, d in zip(w_head[0], d_head[0]):
            assert d == 0 or abs(d - 2 * w) <= 1e-6 * max(1, abs(w)), (s["t"], w, d)
            zeros += d == 0
            kept += d != 0
assert zeros and kept, (zeros, kept)
print(f"ok: decode with dropout: {kept} weights kept (doubled), {zeros} dropped")
PY

# Left padding (tokens 0 and 1 are padding): queries 0 and 1 see no key; those steps say so.
python3 - "$bin" "$dropout_session" "$(dirname "$0")/../../assets/presets/causal-decoder.json" <<'PY' || failures=$((failures + 1))
import json, math, subprocess, sys
binary, path, preset = sys.argv[1], sys.argv[2], sys.argv[3]
session = json.load(open(preset))
session["config"]["mask"]["key_padding"] = [0, 0, 1, 1, 1, 1]
json.dump(session, open(path, "w"))
run = json.loads(subprocess.run([binary, "decode", path, "--json"], capture_output=True, text=True, check=True).stdout)
for s in run["steps"]:
    if s["t"] < 2:
        assert s["fully_masked_rows"] == [[1]], s.get("fully_masked_rows")
        assert all(w == "NaN" for head in s["weights"][0] for w in head[0]), s["weights"]
    else:
        assert "fully_masked_rows" not in s, s["t"]
        assert all(abs(sum(head[0]) - 1) < 1e-6 for head in s["weights"][0]), s["weights"]
print("ok: decode with left padding flags steps 0 and 1, whose weights are NaN")
PY

expect_error "needs a causal mask" decode default --json
expect_error "cross attention" decode cross-attention --json
expect_error "give --json" decode causal-decoder
expect_error "which session" decode --json
expect_error "unknown option --fast" decode causal-decoder --json --fast
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
