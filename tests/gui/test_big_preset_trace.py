"""Seed 000's full-size preset (B=16, L=100, d_model=512, 8 heads, dropout 0.1 in
training mode), every element of every stage: the app's File > Export "whole trace"
(trace.<stage>.npy, clicked in the real window) against a float64 NumPy computation
written here from the preset's own recipe, not from anything the app computed:

- the inputs from the documented seeded generator (docs/session-format.md: element i
  is std·sqrt(−2·ln(1 − u(2i)))·cos(2π·u(2i+1)), u(c) = (splitmix64(splitmix64(seed) ^ c)
  >> 11)·2⁻⁵³), stored as float32 as the app stores them;
- the dropout keep decisions from the same generator (a weight survives when
  u(flat index) ≥ p), as tests/torch/reference.py ports them.

Agreement: |app − reference| ≤ 1e-5·max(1, |reference|) for every element of every
stage (1.28 million scores, weights, ...); for the scores (and scaled, masked) the scale
is Σ|q·k| instead of |score| when larger, since a dot product of 64 float32 terms that
cancels keeps the round-off of its terms. The worst error per stage is printed."""
import json
import os
import sys
import time

import wiring_util as wu
from gui_test_util import Failures, output_dir

np = wu.np
binary = sys.argv[1]
source = sys.argv[2]
out = output_dir("big-preset-trace")
failures = Failures()
STAGES = ["q", "k", "v", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "output"]
preset = json.load(open(os.path.join(source, "assets", "presets", "seed-000-usage.json")))


def splitmix64(x):
    """al::splitmix64, on uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def uniform01(seed, counters):
    key = splitmix64(np.array([seed], dtype=np.uint64))[0]
    return (splitmix64(key ^ counters) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def generated(spec):
    """A {"random": {...}} matrix: float32 as stored, then float64 for the computation."""
    r = spec["random"]
    n = int(np.prod(r["shape"]))
    i = np.arange(n, dtype=np.uint64)
    u1 = uniform01(r.get("seed", 0), np.uint64(2) * i)
    u2 = uniform01(r.get("seed", 0), np.uint64(2) * i + np.uint64(1))
    values = r.get("std", 1.0) * np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    return values.reshape(r["shape"]).astype(np.float32).astype(np.float64)


def reference_stages(p):
    c, w = p["config"], p["weights"]
    heads, d_model = c["num_heads"], c["d_model"]
    d_k = d_model // heads
    x = generated(p["x"])  # (B, L, d_model)
    B, L, _ = x.shape

    def split(t):  # (B, L, d_model) -> (B, h, L, d_k)
        return t.reshape(B, L, heads, d_k).transpose(0, 2, 1, 3)
    q, k, v = (split(x @ generated(w[f"w_{n}"]) + generated(w[f"b_{n}"])) for n in "qkv")
    scores = np.einsum("bhqd,bhkd->bhqk", q, k)
    scaled = scores / np.sqrt(d_k)
    e = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    p_drop = c["dropout"]["p"]
    keep = uniform01(c["dropout"]["seed"], np.arange(weights.size, dtype=np.uint64)) >= p_drop
    dropped = weights * keep.reshape(weights.shape) / (1.0 - p_drop)
    context = np.einsum("bhqk,bhkd->bhqd", dropped, v)
    concat = context.transpose(0, 2, 1, 3).reshape(B, L, d_model)
    output = concat @ generated(w["w_o"]) + generated(w["b_o"])
    return {"q": q, "k": k, "v": v, "scores": scores, "scaled": scaled, "masked": scaled, "weights": weights,
            "dropped": dropped, "context": context, "concat": concat, "output": output}


assert preset["config"]["dropout"]["training"] and "mask" not in preset["config"]
started = time.time()
expected = reference_stages(preset)
reference_seconds = time.time() - started
# Invariants of the reference itself: rows of weights sum to 1, about p of them dropped.
assert np.allclose(expected["weights"].sum(axis=-1), 1.0)
dropped_share = float((expected["dropped"] == 0).mean())
assert abs(dropped_share - 0.1) < 0.005, dropped_share

# A score sums 64 products of float32 q and k: it cancels down to far below its terms,
# so its round-off is measured against Σ|q·k| (the sum's own scale), not |score|.
d_k = expected["q"].shape[-1]
terms = np.einsum("bhqd,bhkd->bhqk", np.abs(expected["q"]), np.abs(expected["k"]))
magnitude = {"scores": terms, "scaled": terms / np.sqrt(d_k), "masked": terms / np.sqrt(d_k)}

export_dir = os.path.join(out, "exported")
os.makedirs(export_dir, exist_ok=True)
for name in os.listdir(export_dir):
    os.remove(os.path.join(export_dir, name))
app = wu.Wiring(binary, preset, out, "seed-000", failures, ["--open", "export", "--stage", "weights"])
try:
    app.type_into("export.folder", export_dir, select_all=True)
    app.click_widget("export.trace")
    app.wait_for(lambda s: "trace." in s.get("export_status", ""), "the whole trace is exported", 60)
finally:
    app.kill()

for stage in STAGES:
    path = os.path.join(export_dir, f"trace.{stage}.npy")
    if not os.path.exists(path):
        failures.check(False, f"{path} exported")
        continue
    got = np.load(path).astype(np.float64)
    want = expected[stage]
    if got.shape != want.shape:
        failures.check(False, f"{stage}: shape {got.shape}, expected {want.shape}")
        continue
    error = np.abs(got - want) / np.maximum(1.0, np.maximum(np.abs(want), magnitude.get(stage, 0.0)))
    worst = np.unravel_index(np.argmax(error), error.shape)
    print(f"{stage:8s} {want.size:8d} elements, worst scaled error {error[worst]:.2e} at {worst}")
    failures.check(np.isfinite(got).all() and error[worst] <= 1e-5,
                   f"{stage}{worst}: {got[worst]:.9g}, expected {want[worst]:.9g}")
print(f"reference computed in {reference_seconds:.1f} s")
failures.finish()
