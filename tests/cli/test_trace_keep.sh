#!/usr/bin/env bash
# `trace --keep`: only the named (B, h, Lq, Lk) stages (and those sharing their tensor) are in
# the trace, with the full trace's values; every other stage is there unchanged, and the
# memory shrinks by the dropped stages' bytes, worked out here from the shapes.
set -euo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" trace seed-003-example --json > "$dir/full.json"
"$bin" trace seed-003-example --json --keep weights > "$dir/lean.json"
"$bin" trace seed-003-example --summary --keep weights > "$dir/lean.txt"
"$bin" trace seed-003-example --summary > "$dir/full.txt"

python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
full, lean = json.load(open(f"{d}/full.json")), json.load(open(f"{d}/lean.json"))
# seed 003 has no mask and no dropout: masked is scaled, dropped is weights.
assert set(full["stages"]) - set(lean["stages"]) == {"scores", "scaled", "masked"}, sorted(lean["stages"])
for name, values in lean["stages"].items():
    assert values == full["stages"][name], name
def memory(path):
    return int(re.search(r"^memory: .*?(\d+) bytes\)?$", open(path).read(), re.M).group(1))
# scores and scaled (masked shares scaled): 2 x (1 x 1 x 5 x 5) floats of 4 bytes
assert memory(f"{d}/full.txt") - memory(f"{d}/lean.txt") == 2 * 25 * 4, (memory(f"{d}/full.txt"), memory(f"{d}/lean.txt"))
print("trace --keep weights: scores, scaled, masked left out; the rest equal; 200 bytes less")
PY
