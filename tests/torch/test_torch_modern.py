#!/usr/bin/env python3
"""Today's attention against independent references (issue 14): grouped-query heads (HF's
repeat_kv), sinusoidal positions (the Annotated Transformer's table), RoPE in HF Llama's
rotate_half and GPT-J's interleaved form, ALiBi with Press et al.'s slopes (8 and 6 heads),
sliding windows and global tokens by explicit loops, and their combinations (Llama, Mistral,
Longformer). Every stage `attention-lab trace --json` prints must agree with reference.py to
1e-5, and a trace must hold exactly the stages its options call for. The script
`attention-lab export-torch` writes rebuilds every stage with plain torch ops and must agree
with the trace; `attention-lab decode --json` (token by token with a KV cache) must give row t
of the trace at every step for the causal sessions.

    python3 test_torch_modern.py --binary build/app/attention-lab

Exit 77 (ctest's skip) without PyTorch.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

SKIP = 77
BASE_STAGES = {"q", "k", "v", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "output"}

try:
    import torch  # noqa: F401
except ImportError:
    print("SKIP: PyTorch is not installed for %s (Debian: apt-get install python3-torch)" % sys.executable)
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402


def matrix(rng, rows, cols, std=1.0):
    return [[rng.gauss(0.0, std) for _ in range(cols)] for _ in range(rows)]


def session(rng, d_model=16, heads=4, kv_heads=None, length=7, batch=1, positional=None, mask=None,
            attention="self", mode="projection", fused=False, torch_layout=False, bias=True, fill="-inf",
            dropout=None, length_kv=None):
    """A random session with the given options; weights sized for grouped-query heads."""
    kv_heads = kv_heads or heads
    d_k = d_model // heads
    kv = kv_heads * d_k
    length_kv = length_kv or length
    config = {"mode": mode, "attention": attention, "d_model": d_model, "num_heads": heads, "bias": bias,
              "scale": "sqrt_dk", "mask": mask or {"causal": False}, "mask_fill": fill,
              "dropout": dropout or {"p": 0.0, "training": False, "seed": 0}}
    if kv_heads != heads:
        config["num_kv_heads"] = kv_heads
    if positional:
        config["positional"] = positional
    s = {"format": "attention-lab/session", "version": 1, "config": config}

    def seq(n, width):
        return [matrix(rng, n, width) for _ in range(batch)]
    if mode == "direct":
        s["q"], s["k"], s["v"] = seq(length, d_model), seq(length_kv, kv), seq(length_kv, kv)
        return s
    if attention == "cross":
        s["x_q"], s["x_kv"] = seq(length, d_model), seq(length_kv, d_model)
    else:
        s["x"] = seq(length, d_model)
    w = {}

    def weight(rows, cols):  # math layout (rows in, cols out); torch layout stores the transpose
        m = matrix(rng, rows, cols, std=rows ** -0.5)  # nn.Linear's scale: outputs of about unit size
        return [list(c) for c in zip(*m)] if torch_layout else m
    if fused:
        w["w_qkv"] = weight(d_model, d_model + 2 * kv)
        if bias:
            w["b_qkv"] = [rng.gauss(0, 1) for _ in range(d_model + 2 * kv)]
    else:
        w["w_q"], w["w_k"], w["w_v"] = weight(d_model, d_model), weight(d_model, kv), weight(d_model, kv)
        if bias:
            w["b_q"] = [rng.gauss(0, 1) for _ in range(d_model)]
            w["b_k"] = [rng.gauss(0, 1) for _ in range(kv)]
            w["b_v"] = [rng.gauss(0, 1) for _ in range(kv)]
    w["w_o"] = weight(d_model, d_model)
    if bias:
        w["b_o"] = [rng.gauss(0, 1) for _ in range(d_model)]
    if torch_layout:
        w["layout"] = "torch"
    s["weights"] = w
    return s


def cases(rng):
    rope_half = {"type": "rope", "rope_style": "half"}
    return [
        ("gqa_8_2_causal", session(rng, d_model=16, heads=8, kv_heads=2, mask={"causal": True})),
        ("mqa_4_1_direct", session(rng, heads=4, kv_heads=1, mode="direct", batch=2)),
        ("gqa_fused_torch_layout", session(rng, heads=4, kv_heads=2, fused=True, torch_layout=True)),
        ("gqa_cross", session(rng, heads=4, kv_heads=2, attention="cross", length_kv=5)),
        ("rope_half", session(rng, positional=rope_half, batch=2)),
        ("rope_interleaved_base100", session(rng, positional={"type": "rope", "rope_style": "interleaved",
                                                               "rope_base": 100.0})),
        ("rope_cross", session(rng, positional=rope_half, attention="cross", length_kv=9)),
        ("rope_direct_gqa", session(rng, heads=4, kv_heads=2, positional=rope_half, mode="direct")),
        ("alibi_8_causal", session(rng, d_model=16, heads=8, positional={"type": "alibi"}, mask={"causal": True})),
        ("alibi_6_bidirectional", session(rng, d_model=12, heads=6, positional={"type": "alibi"})),
        ("sinusoidal_self", session(rng, d_model=10, heads=2, positional={"type": "sinusoidal"}, batch=2)),
        ("sinusoidal_cross", session(rng, positional={"type": "sinusoidal"}, attention="cross", length_kv=4)),
        ("window_3_causal", session(rng, mask={"causal": True, "window": 3}, length=9)),
        ("window_2_bidirectional", session(rng, mask={"causal": False, "window": 2}, length=8)),
        ("window_global", session(rng, mask={"causal": False, "window": 2, "global_tokens": [0, 5]}, length=9)),
        ("window_global_causal_padding", session(rng, mask={"causal": True, "window": 2, "global_tokens": [0],
                                                            "key_padding": [[1, 1, 1, 1, 1, 0, 0]]})),
        ("window_fill_1e9", session(rng, mask={"causal": True, "window": 2}, fill=-1e9)),
        ("mistral_like", session(rng, d_model=16, heads=4, kv_heads=1, positional=rope_half,
                                 mask={"causal": True, "window": 3}, length=10)),
        ("llama_like", session(rng, d_model=32, heads=8, kv_heads=2, positional=rope_half, mask={"causal": True},
                               bias=False)),
        ("longformer_like", session(rng, mask={"causal": False, "window": 3, "global_tokens": [0]}, length=10,
                                    dropout={"p": 0.2, "training": True, "seed": 7})),
        ("alibi_gqa_window", session(rng, d_model=12, heads=6, kv_heads=3, positional={"type": "alibi"},
                                     mask={"causal": True, "window": 4}, length=8)),
    ]


def expected_stages(s):
    c = s["config"]
    kind = (c.get("positional") or {}).get("type", "none")
    stages = set(BASE_STAGES)
    if kind == "sinusoidal":
        stages |= {"x_pos", "x_kv_pos"} if c["attention"] == "cross" else {"x_pos"}
    if kind == "rope":
        stages |= {"q_rot", "k_rot"}
    if kind == "alibi":
        stages.add("biased")
    return stages


def check_decode(binary, path, label, traced, failures):
    """Each decode step's weights over the cache and output equal row t of the trace; the trace's
    weights outside the cache are exactly 0. Returns the number of comparisons."""
    run = subprocess.run([binary, "decode", path, "--json"], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        failures.append("%s: decode exited %d: %s" % (label, run.returncode, run.stderr.strip()))
        return 0
    weights = reference.as_tensor(traced["weights"])  # (B, h, L, L)
    output = reference.as_tensor(traced["output"])    # (B, L, d_model)
    count = 0
    for step in json.loads(run.stdout)["steps"]:
        t, positions = step["t"], step["positions"]
        row = weights[:, :, t, :]
        outside = [j for j in range(row.shape[-1]) if j not in positions]
        if outside and row[..., outside].abs().max() != 0:
            failures.append("%s: decode step %d: the trace gives weight outside the cache" % (label, t))
        for name, ours, theirs in (("weights", step["weights"], row[:, :, None, positions]),
                                   ("output", step["output"], output[:, t:t + 1, :])):
            count += 1
            message = reference.compare("decode step %d %s" % (t, name), ours, theirs)
            if message:
                failures.append("%s: %s" % (label, message))
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = random.Random(14)
    failures, comparisons = [], 0
    with tempfile.TemporaryDirectory(prefix="attention-lab-modern-") as workdir:
        for label, s in cases(rng):
            path = os.path.join(workdir, label + ".json")
            with open(path, "w") as f:
                json.dump(s, f)
            run = subprocess.run([args.binary, "trace", path, "--json"], capture_output=True, text=True, timeout=120)
            if run.returncode != 0:
                failures.append("%s: trace exited %d: %s" % (label, run.returncode, run.stderr.strip()))
                continue
            traced = json.loads(run.stdout)["stages"]
            if set(traced) != expected_stages(s):
                failures.append("%s: stages %s, expected %s" % (label, sorted(traced), sorted(expected_stages(s))))
            expected = reference.stages(s)
            for stage in sorted(set(traced) & set(expected)):
                comparisons += 1
                message = reference.compare(stage, traced[stage], expected[stage])
                if message:
                    failures.append("%s: %s" % (label, message))
            script = os.path.join(workdir, label + ".py")
            exported = subprocess.run([args.binary, "export-torch", path, "--out", script], capture_output=True,
                                      text=True, timeout=120)
            ran = subprocess.run([sys.executable, script, "--json"], capture_output=True, text=True, timeout=120) \
                if exported.returncode == 0 else exported
            if ran.returncode != 0:
                failures.append("%s: export-torch or its script failed: %s" % (label, ran.stderr.strip()[-400:]))
            else:
                rebuilt = json.loads(ran.stdout)["stages"]
                if set(rebuilt) != set(traced):
                    failures.append("%s: script stages %s, trace %s" % (label, sorted(rebuilt), sorted(traced)))
                for stage in sorted(set(traced) & set(rebuilt)):
                    comparisons += 1
                    message = reference.compare(stage, rebuilt[stage], traced[stage])
                    if message:
                        failures.append("%s: script vs trace: %s" % (label, message))
            if s["config"]["mask"].get("causal") and s["config"]["attention"] == "self":
                comparisons += check_decode(args.binary, path, label, traced, failures)
    for f in failures:
        print("FAIL", f)
    print("%d comparisons, %d failures" % (comparisons, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
