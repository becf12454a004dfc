#!/usr/bin/env bash
# `trace seed-003-example --json` against values computed here, independently,
# with Python's math module from the seed's own Q, K, V (seed 003 §6).
set -euo pipefail
bin=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" trace seed-003-example --json > "$out"

python3 - "$out" <<'PY'
import json, math, sys

Q = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [1.0, 1.0], [0.3, 0.7]]
K = [[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]
V = [[10.0, 0.0], [0.0, 10.0], [5.0, 5.0], [0.0, 0.0], [1.0, 1.0]]
d_k = 2

scores = [[sum(q[c] * k[c] for c in range(d_k)) for k in K] for q in Q]
scaled = [[s / math.sqrt(d_k) for s in row] for row in scores]
weights = []
for row in scaled:
    m = max(row)
    e = [math.exp(s - m) for s in row]
    weights.append([x / sum(e) for x in e])
context = [[sum(w[j] * V[j][c] for j in range(5)) for c in range(d_k)] for w in weights]

with open(sys.argv[1]) as f:
    t = json.load(f)

def close(a, b, path, tol=1e-5):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), f"{path}: shape differs: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f"{path}[{i}]", tol)
    else:
        assert abs(a - b) <= tol * max(1.0, abs(b)), f"{path}: got {a}, expected {b}"

assert t["dims"] == {"batch": 1, "heads": 1, "len_q": 5, "len_kv": 5, "d_model": 2, "d_k": 2}, t["dims"]
close(t["scale"], 1 / math.sqrt(2), "scale")
st = t["stages"]
assert sorted(st) == sorted(["q", "k", "v", "scores", "scaled", "masked", "weights", "dropped",
                             "context", "concat", "output"]), sorted(st)
close(st["q"], [[Q]], "q")                       # (B, h, L, d_k)
close(st["k"], [[K]], "k")
close(st["v"], [[V]], "v")
close(st["scores"], [[scores]], "scores")        # (B, h, Lq, Lk)
close(st["scaled"], [[scaled]], "scaled")
close(st["masked"], [[scaled]], "masked")        # no mask
close(st["weights"], [[weights]], "weights")
close(st["dropped"], [[weights]], "dropped")     # no dropout
close(st["context"], [[context]], "context")     # (B, h, Lq, d_k)
close(st["concat"], [context], "concat")         # (B, Lq, d_model)
close(st["output"], [context], "output")         # no W_O: output = concat
for row in st["weights"][0][0]:
    close(sum(row), 1.0, "row sum")
assert t["mask"] is None
close(t["fully_masked_rows"], [[0, 0, 0, 0, 0]], "fully_masked_rows")

# The seed prints alpha_11 = 0.2514 and output 1 = [-0.2697, 0.2697]; the true values differ.
assert abs(weights[0][0] - 0.2514) > 0.01 and abs(context[0][0] - (-0.2697)) > 1
print("seed-003 trace matches the independent computation; alpha_11 = %.4f, output 1 = [%.4f, %.4f]"
      % (weights[0][0], context[0][0], context[0][1]))
PY
