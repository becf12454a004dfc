#!/usr/bin/env python3
"""Random Attention Lab sessions (the JSON format of docs/session-format.md), reproducible from a seed.

Covers what the core must get right: self and cross attention, projection and direct mode,
several heads, biases on and off, math and torch weight layouts, fused W_qkv, every scale
mode, causal / key-padding / custom masks (with fully masked rows), the fill values
-inf, -1e9, -1e20, -1e-20, dropout in eval and training, and 2-D inputs meaning B = 1.

    python3 tools/random_sessions.py --seed 1 --count 20 --out /tmp/sessions

Only the standard library: the PyTorch proof test (tests/torch) imports random_session().
"""
import argparse
import json
import math
import os
import random

FILLS = ["-inf", -1e9, -1e20, -1e-20]


def matrix(rng, rows, cols, std=1.0):
    return [[rng.gauss(0.0, std) for _ in range(cols)] for _ in range(rows)]


def batch_of_matrices(rng, batch, rows, cols, as_2d, std=1.0):
    """(B, rows, cols) nested lists; (rows, cols) when as_2d (the format's "B = 1" shorthand)."""
    if as_2d:
        return matrix(rng, rows, cols, std)
    return [matrix(rng, rows, cols, std) for _ in range(batch)]


def transpose(m):
    return [list(column) for column in zip(*m)]


def random_session(rng, fill=None, attention=None, mode=None):
    """One random session dict. `fill`, `attention` ("self"/"cross") and `mode`
    ("projection"/"direct") can be pinned so a test covers every combination."""
    attention = attention or rng.choice(["self", "cross"])
    mode = mode or rng.choice(["projection", "direct"])
    fill = fill if fill is not None else rng.choice(FILLS)
    heads = rng.choice([1, 2, 3, 4])
    d_k = rng.choice([1, 2, 3, 4])
    d_model = heads * d_k
    batch = rng.choice([1, 1, 2, 3])
    len_q = rng.randint(1, 6)
    len_kv = rng.randint(1, 6) if attention == "cross" else len_q
    as_2d = batch == 1 and rng.random() < 0.5
    bias = rng.random() < 0.7
    layout = rng.choice(["math", "torch"])

    scale_choice = rng.random()
    scale = "sqrt_dk" if scale_choice < 0.6 else ("none" if scale_choice < 0.8 else round(rng.uniform(0.1, 2.0), 3))

    mask = {}
    if rng.random() < 0.5:
        mask["causal"] = True
    if rng.random() < 0.5:
        # Each batch item attends to its first n keys; n = 0 makes every row fully masked.
        lengths = [rng.randint(0, len_kv) for _ in range(batch)]
        padding = [[1 if j < n else 0 for j in range(len_kv)] for n in lengths]
        mask["key_padding"] = padding[0] if as_2d and rng.random() < 0.5 else padding
    if rng.random() < 0.4:
        def cells():
            return [[1 if rng.random() < 0.7 else 0 for _ in range(len_kv)] for _ in range(len_q)]
        mask["custom"] = cells() if rng.random() < 0.5 else [cells() for _ in range(batch)]

    dropout = {"p": 0.0, "training": False, "seed": 0}
    dropout_choice = rng.random()
    if dropout_choice < 0.3:
        dropout = {"p": rng.choice([0.1, 0.25, 0.5]), "training": True, "seed": rng.randint(0, 2**31)}
    elif dropout_choice < 0.4:
        dropout = {"p": 0.3, "training": False, "seed": 5}  # eval: the identity

    session = {
        "format": "attention-lab/session", "version": 1,
        "config": {"mode": mode, "attention": attention, "d_model": d_model, "num_heads": heads,
                   "bias": bias, "scale": scale, "mask": mask, "mask_fill": fill, "dropout": dropout},
    }
    # Weights like nn.Linear's initialisation (std ~ 1/sqrt(d_model)) keep every stage
    # of order 1, where float32 round-off is far below the test's 1e-5.
    weight_std = 1.0 / math.sqrt(d_model)
    if mode == "direct":
        session["q"] = batch_of_matrices(rng, batch, len_q, d_model, as_2d)
        session["k"] = batch_of_matrices(rng, batch, len_kv, d_model, as_2d)
        session["v"] = batch_of_matrices(rng, batch, len_kv, d_model, as_2d)
        weights = {"layout": layout}
        if rng.random() < 0.5:
            weights.update(output_weights(rng, d_model, bias, layout, weight_std))
        if len(weights) > 1:
            session["weights"] = weights
        return session

    if attention == "cross":
        session["x_q"] = batch_of_matrices(rng, batch, len_q, d_model, as_2d)
        session["x_kv"] = batch_of_matrices(rng, batch, len_kv, d_model, as_2d)
    else:
        session["x"] = batch_of_matrices(rng, batch, len_q, d_model, as_2d)
    weights = {"layout": layout}
    if rng.random() < 0.3:
        w_qkv = matrix(rng, d_model, 3 * d_model, weight_std)  # math layout (in, 3*out)
        weights["w_qkv"] = transpose(w_qkv) if layout == "torch" else w_qkv
        if bias:
            weights["b_qkv"] = [rng.gauss(0.0, 0.5) for _ in range(3 * d_model)]
    else:
        for name in "qkv":
            w = matrix(rng, d_model, d_model, weight_std)
            weights["w_" + name] = transpose(w) if layout == "torch" else w
            if bias:
                weights["b_" + name] = [rng.gauss(0.0, 0.5) for _ in range(d_model)]
    weights.update(output_weights(rng, d_model, bias, layout, weight_std))
    session["weights"] = weights
    return session


def output_weights(rng, d_model, bias, layout, std):
    w = matrix(rng, d_model, d_model, std)
    out = {"w_o": transpose(w) if layout == "torch" else w}
    if bias:
        out["b_o"] = [rng.gauss(0.0, 0.5) for _ in range(d_model)]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--out", required=True, help="folder for case_000.json, case_001.json, ...")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.count):
        path = os.path.join(args.out, "case_%03d.json" % i)
        with open(path, "w") as f:
            json.dump(random_session(rng, fill=FILLS[i % len(FILLS)]), f)
        print(path)


if __name__ == "__main__":
    main()
