#!/usr/bin/env bash
# Bad sessions, files and arguments: each gives a non-zero exit (not a crash,
# so below 128) and one clear "attention-lab: error:" message on stderr.
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

# expect_error <substring of the message> <args...>
source "$(dirname "$0")/expect_error.sh"

head='"format": "attention-lab/session", "version": 1'
weights='"weights": {"w_q": {"random": {"shape": [4, 4]}}, "w_k": {"random": {"shape": [4, 4]}},
  "w_v": {"random": {"shape": [4, 4]}}, "w_o": {"random": {"shape": [4, 4]}}}'
session() { printf '%s\n' "$2" > "$dir/$1"; }

session malformed.json "{$head, \"x\": [[1, 2],, [3, 4]]}"
expect_error "line 1, column" trace "$dir/malformed.json" --json
session version.json '{"format": "attention-lab/session", "version": 7}'
expect_error "version is 7" trace "$dir/version.json" --summary
session format.json '{"format": "something", "version": 1}'
expect_error 'not "attention-lab/session"' trace "$dir/format.json" --summary
session unknown.json "{$head, \"config\": {\"num_head\": 2}, \"x\": [[1, 2, 3, 4]], $weights}"
expect_error "unknown key 'config.num_head'" trace "$dir/unknown.json" --summary
session string.json "{$head, \"config\": {\"d_model\": \"four\"}, \"x\": [[1, 2, 3, 4]], $weights}"
expect_error "config.d_model must be a positive whole number" trace "$dir/string.json" --summary
session cell.json "{$head, \"x\": [[1, 2, 3, 4], [1, 2, null, 4]], $weights}"
expect_error "x[1][2] must be a number" trace "$dir/cell.json" --summary
session ragged.json "{$head, \"x\": [[1, 2, 3, 4], [1, 2, 3]], $weights}"
expect_error "x[1] has 3 entries but x[0] has 4" trace "$dir/ragged.json" --summary
session dmodel.json "{$head, \"config\": {\"d_model\": 4}, \"x\": [[1, 2, 3, 4, 5]], $weights}"
expect_error "1x1x5" trace "$dir/dmodel.json" --summary
session heads.json "{$head, \"config\": {\"num_heads\": 3}, \"x\": [[1, 2, 3, 4]], $weights}"
expect_error "not divisible by 3" trace "$dir/heads.json" --summary
session mask9.json "{$head, \"config\": {\"mode\": \"direct\", \"attention\": \"cross\",
  \"mask\": {\"key_padding\": [[0, 0, 1, 1, 0, 0, 0, 0, 0]]}},
  \"q\": {\"random\": {\"shape\": [5, 4]}}, \"k\": {\"random\": {\"shape\": [10, 4]}}, \"v\": {\"random\": {\"shape\": [10, 4]}}}"
expect_error "1x9" trace "$dir/mask9.json" --summary
# --keep names only the (B, h, Lq, Lk) stages, and needs them.
expect_error "--keep takes scores, scaled, biased, masked, weights or dropped" trace default --summary --keep q
expect_error "--keep takes scores" trace default --summary --keep weights,
expect_error "--keep needs a list of stages" trace default --summary --keep
session nan.json "{$head, \"config\": {\"mask_fill\": \"NaN\"}, \"x\": [[1, 2, 3, 4]], $weights}"
expect_error "NaN" trace "$dir/nan.json" --summary
# L = 10^6: refused before the (L x L) scores are allocated, saying how much it would need.
session huge.json "{$head, \"x\": {\"random\": {\"shape\": [1000000, 4]}}, $weights}"
expect_error "bytes" trace "$dir/huge.json" --summary
session escape.json "{$head, \"x\": {\"npy\": \"../../etc/x.npy\"}, $weights}"
expect_error "outside the session's folder" trace "$dir/escape.json" --summary
session missing-npy.json "{$head, \"x\": {\"npy\": \"absent.npy\"}, $weights}"
expect_error "absent.npy" trace "$dir/missing-npy.json" --summary

# .npy files written byte by byte: big-endian, Fortran order, int64, truncated.
python3 - "$dir" <<'PY'
import struct, sys
def npy(path, descr, fortran, shape, data):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
d = sys.argv[1]
npy(d + "/be.npy", ">f4", "False", "(1, 4)", struct.pack(">4f", 1, 2, 3, 4))
npy(d + "/fortran.npy", "<f4", "True", "(1, 4)", struct.pack("<4f", 1, 2, 3, 4))
npy(d + "/int.npy", "<i8", "False", "(1, 4)", struct.pack("<4q", 1, 2, 3, 4))
npy(d + "/short.npy", "<f4", "False", "(1, 4)", struct.pack("<3f", 1, 2, 3))
npy(d + "/good.npy", "<f8", "False", "(1, 4)", struct.pack("<4d", 1, 2, 3, 4))
PY
for kind in be fortran int short good; do
  session "npy-$kind.json" "{$head, \"x\": {\"npy\": \"$kind.npy\"}, $weights}"
done
expect_error "big-endian" trace "$dir/npy-be.json" --summary
expect_error "Fortran" trace "$dir/npy-fortran.json" --summary
expect_error "'<i8' is not supported" trace "$dir/npy-int.json" --summary
expect_error "truncated" trace "$dir/npy-short.json" --summary
if ! "$bin" trace "$dir/npy-good.json" --summary >/dev/null; then
  echo "FAIL: a valid float64 .npy reference did not trace"; failures=$((failures + 1))
fi

# Files as scripts and spreadsheets write them: Python's bare NaN, whole floats,
# Excel's byte-order mark, torch-layout weights, a fill that prints as -0.000000 with %f.
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
weights = {k: {"random": {"shape": [4, 4]}} for k in ("w_q", "w_k", "w_v", "w_o")}
def dump(name, config, **inputs):
    session = {"format": "attention-lab/session", "version": 1, "config": config, "weights": weights}
    session.update(inputs)
    with open(d + "/" + name, "w") as f:
        json.dump(session, f)
dump("py_nan.json", {"d_model": 4}, x=[[float("nan"), 0, 0, 0]])
dump("floats.json", {"d_model": 4.0, "num_heads": 2.0, "mask": {"causal": True, "window": 2.0},
                     "dropout": {"seed": 0.0}}, x=[[1, 0, 0, 0], [0, 1, 0, 0]])
dump("bom_csv.json", {"d_model": 4}, x={"csv": "bom.csv"})
dump("scale.json", {"scale": 1e39}, x=[[1, 0, 0, 0]])
dump("leaky.json", {"mask": {"causal": True}, "mask_fill": -1e-20}, x=[[1, 0, 0, 0], [0, 1, 0, 0]])
torch = dict(weights, layout="torch", w_k=[[1, 0], [0, 1], [1, 0], [0, 1]])
dump("torch.json", {"num_heads": 2, "num_kv_heads": 1}, x=[[1, 0, 0, 0]], weights=torch)
with open(d + "/bom.csv", "wb") as f:
    f.write(b"\xef\xbb\xbf1,0,0,0\r\n0,1,0,0\r\n")
PY
expect_error 'JSON has no NaN or Infinity; write it as the string "NaN"' trace "$dir/py_nan.json" --summary
expect_error "config.scale is 1e+39, too large for a float32" trace "$dir/scale.json" --summary
expect_error "with a mask fill of -1e-20 the full trace" decode "$dir/leaky.json" --json
expect_error "weights.w_k is 4x2 as written, but in torch layout (out x in) it must be 2x4" trace "$dir/torch.json" --summary
for good in floats bom_csv; do
  if ! "$bin" trace "$dir/$good.json" --summary >/dev/null; then
    echo "FAIL: $good.json did not trace"; failures=$((failures + 1))
  fi
done
printf '\xff\xfe{\0"\0' > "$dir/utf16.json"
expect_error "utf16.json is UTF-16 text; save it as UTF-8" trace "$dir/utf16.json" --summary

# Files that are not sessions at all.
: > "$dir/empty.json"
expect_error "empty.json is empty: it holds no JSON text" trace "$dir/empty.json" --json
head -c 4096 /dev/urandom > "$dir/random.json"
expect_error "error" trace "$dir/random.json" --json
expect_error "not a JSON object" trace <(echo '[1, 2, 3]') --json
expect_error "it is a folder" trace "$dir" --json
expect_error "does not exist" trace "$dir/nope.json" --json
expect_error "neither a session file nor a preset" trace no-such-preset --json

# Bad arguments.
expect_error "which session" trace
expect_error "unknown option --jsn" trace default --jsn
expect_error "choose one of --json or --summary" trace default
expect_error "more than one session" trace default causal-decoder --json

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "every bad input was refused cleanly"
