#!/usr/bin/env python3
"""tools/export_model_session.py against PyTorch itself.

    /usr/bin/python3 test_export_model_session.py --binary build/app/attention-lab --source .

1. nn.MultiheadAttention (from --demo, and from a saved state_dict, with and without a causal
   mask, B = 2): `attention-lab trace <exported session> --json` must give the module's output
   and per-head weights (need_weights=True, average_attn_weights=False) to 1e-5.
2. GPT-2 layout without transformers: a hand-built state dict with c_attn (Conv1D, E x 3E,
   Q|K|V fused, math layout) and c_proj, traced and compared with GPT-2's attention written
   out here (x @ W + b, split heads, causal mask, softmax, merge, c_proj), in float64.
3. BERT layout (separate query/key/value/output.dense nn.Linear) from a hand-built state dict.
4. Bad input: a state dict of the wrong size, heads not dividing E: a message, exit 1.
Exit 77 (ctest's skip) when PyTorch is not installed for this python.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import numpy as np
    import torch
except ImportError:
    print("SKIP: PyTorch/numpy not installed for %s (Debian: python3-torch, use /usr/bin/python3)" % sys.executable)
    sys.exit(SKIP)

failures = []


def check_close(what, ours, theirs, tol=1e-5):
    ours = torch.as_tensor(ours, dtype=torch.float64)
    theirs = torch.as_tensor(theirs, dtype=torch.float64)
    if ours.shape != theirs.shape:
        failures.append("%s: shape %s vs %s" % (what, tuple(ours.shape), tuple(theirs.shape)))
        return
    err = ((ours - theirs).abs() / theirs.abs().clamp(min=1)).max().item()
    status = "ok" if err <= tol else "FAIL"
    print("%-55s max rel err %.2e %s" % (what, err, status))
    if err > tol:
        failures.append("%s: error %.3g > %g" % (what, err, tol))


class Runner:
    def __init__(self, binary, source, workdir):
        self.binary, self.workdir = binary, workdir
        self.script = os.path.join(source, "tools", "export_model_session.py")
        self.count = 0

    def export(self, *args, expect_ok=True):
        self.count += 1
        out = os.path.join(self.workdir, "export%d" % self.count)
        r = subprocess.run([sys.executable, self.script, *args, "--out", out], capture_output=True, text=True)
        if expect_ok and r.returncode != 0:
            raise SystemExit("export failed: %s\n%s" % (" ".join(args), r.stderr))
        return out, r

    def trace(self, folder):
        r = subprocess.run([self.binary, "trace", os.path.join(folder, "session.json"), "--json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("trace failed: %s" % r.stderr)
        stages = json.loads(r.stdout)["stages"]
        return {k: torch.tensor(v, dtype=torch.float64) for k, v in stages.items() if k in ("weights", "output")}


def causal_bool_mask(length):
    """nn.MultiheadAttention's attn_mask: True = not allowed to attend."""
    return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)


def test_mha(run):
    for label, causal in (("", False), (" causal", True)):
        torch.manual_seed(3)
        module = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        x = torch.randn(2, 5, 8)
        np.save(os.path.join(run.workdir, "hidden.npy"), x.numpy())
        mask = causal_bool_mask(5) if causal else None
        with torch.no_grad():
            out, weights = module(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
        pt = os.path.join(run.workdir, "mha.pt")
        torch.save(module.state_dict(), pt)
        extra = ["--causal"] if causal else []
        folder, _ = run.export("--state-dict", pt, "--embed-dim", "8", "--num-heads", "2",
                               "--hidden", os.path.join(run.workdir, "hidden.npy"), *extra)
        stages = run.trace(folder)
        check_close("MHA state_dict%s: output" % label, stages["output"], out)
        check_close("MHA state_dict%s: per-head weights" % label, stages["weights"], weights)

    # --demo builds the module from the seed: rebuild it the same way here.
    folder, _ = run.export("--demo", "11", "--embed-dim", "12", "--num-heads", "3", "--seed", "4",
                           "--batch", "1", "--seq-len", "7", "--tokens", "a,b,c,d,e,f,g")
    torch.manual_seed(11)
    module = torch.nn.MultiheadAttention(12, 3, batch_first=True).eval()
    x = torch.randn(1, 7, 12, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        out, weights = module(x, x, x, need_weights=True, average_attn_weights=False)
    stages = run.trace(folder)
    check_close("MHA --demo: output", stages["output"], out)
    check_close("MHA --demo: per-head weights", stages["weights"], weights)
    session = json.load(open(os.path.join(folder, "session.json")))
    if session["tokens"] != list("abcdefg") or session["weights"]["layout"] != "torch":
        failures.append("--demo session: tokens or layout wrong: %s" % session)


def gpt2_attention(x, c_attn_w, c_attn_b, c_proj_w, c_proj_b, heads):
    """GPT-2's attention as its paper/code define it, in float64, written independently."""
    x, c_attn_w, c_attn_b, c_proj_w, c_proj_b = (t.double() for t in (x, c_attn_w, c_attn_b, c_proj_w, c_proj_b))
    batch, length, e = x.shape
    d = e // heads
    qkv = x @ c_attn_w + c_attn_b                           # Conv1D: (B, L, 3E)
    q, k, v = qkv[..., :e], qkv[..., e:2 * e], qkv[..., 2 * e:]
    split = lambda t: t.reshape(batch, length, heads, d).permute(0, 2, 1, 3)  # (B, h, L, d)
    q, k, v = split(q), split(k), split(v)
    scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(d)
    future = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(future, float("-inf"))
    weights = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    context = torch.einsum("bhij,bhjd->bhid", weights, v).permute(0, 2, 1, 3).reshape(batch, length, e)
    return context @ c_proj_w + c_proj_b, weights


def test_gpt2(run):
    e, heads, layer = 16, 4, 1
    g = torch.Generator().manual_seed(21)
    state = {}
    for n in range(2):  # two layers, so --layer must pick the right one
        p = "transformer.h.%d.attn." % n
        state[p + "c_attn.weight"] = torch.randn(e, 3 * e, generator=g) * 0.3
        state[p + "c_attn.bias"] = torch.randn(3 * e, generator=g) * 0.1
        state[p + "c_proj.weight"] = torch.randn(e, e, generator=g) * 0.3
        state[p + "c_proj.bias"] = torch.randn(e, generator=g) * 0.1
        state["transformer.h.%d.attn.masked_bias" % n] = torch.tensor(-1e4)
    pt = os.path.join(run.workdir, "gpt2.pt")
    torch.save(state, pt)
    folder, _ = run.export("--state-dict", pt, "--arch", "gpt2", "--layer", str(layer), "--embed-dim", str(e),
                           "--num-heads", str(heads), "--seed", "5", "--batch", "2", "--seq-len", "6")
    session = json.load(open(os.path.join(folder, "session.json")))
    if not session["config"]["mask"]["causal"] or session["weights"]["layout"] != "math":
        failures.append("GPT-2 session must be causal and in math layout: %s" % session["config"])
    x = torch.randn(2, 6, e, generator=torch.Generator().manual_seed(5))
    p = "transformer.h.%d.attn." % layer
    out, weights = gpt2_attention(x, state[p + "c_attn.weight"], state[p + "c_attn.bias"],
                                  state[p + "c_proj.weight"], state[p + "c_proj.bias"], heads)
    stages = run.trace(folder)
    check_close("GPT-2 fused Conv1D (layer 1): output", stages["output"], out)
    check_close("GPT-2 fused Conv1D (layer 1): per-head weights", stages["weights"], weights)
    if stages["weights"][0, 0, 0, 1:].abs().max().item() != 0.0:
        failures.append("GPT-2: the first token attends to later ones")


def test_bert(run):
    e, heads = 8, 2
    g = torch.Generator().manual_seed(8)
    linears = {name: torch.nn.Linear(e, e) for name in ("self.query", "self.key", "self.value", "output.dense")}
    state = {}
    for name, lin in linears.items():
        with torch.no_grad():
            lin.weight.copy_(torch.randn(e, e, generator=g) * 0.4)
        state["bert.encoder.layer.0.attention.%s.weight" % name] = lin.weight.detach().clone()
        state["bert.encoder.layer.0.attention.%s.bias" % name] = lin.bias.detach().clone()
    pt = os.path.join(run.workdir, "bert.pt")
    torch.save(state, pt)
    folder, _ = run.export("--state-dict", pt, "--arch", "bert", "--embed-dim", str(e), "--num-heads", str(heads),
                           "--seed", "9", "--seq-len", "4")
    x = torch.randn(1, 4, e, generator=torch.Generator().manual_seed(9)).double()
    # BERT's self-attention with nn.Linear's y = x W^T + b, per head, no mask.
    with torch.no_grad():
        q, k, v = (linears[n].double()(x).reshape(1, 4, heads, e // heads).transpose(1, 2)
                   for n in ("self.query", "self.key", "self.value"))
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(e // heads), dim=-1)
        out = linears["output.dense"].double()((weights @ v).transpose(1, 2).reshape(1, 4, e))
    stages = run.trace(folder)
    check_close("BERT separate q/k/v Linear: output", stages["output"], out)
    check_close("BERT separate q/k/v Linear: per-head weights", stages["weights"], weights)


def test_bad_input(run):
    pt = os.path.join(run.workdir, "mha.pt")
    _, r = run.export("--state-dict", pt, "--embed-dim", "16", "--num-heads", "2", expect_ok=False)
    if r.returncode != 1 or "in_proj_weight has shape (24, 8) but embed_dim 16 needs (48, 16)" not in r.stderr:
        failures.append("wrong embed_dim: exit %d, %r" % (r.returncode, r.stderr))
    _, r = run.export("--demo", "0", "--embed-dim", "8", "--num-heads", "3", expect_ok=False)
    if r.returncode != 1 or "does not divide" not in r.stderr:
        failures.append("heads not dividing: exit %d, %r" % (r.returncode, r.stderr))
    _, r = run.export("--state-dict", os.path.join(run.workdir, "gpt2.pt"), "--arch", "gpt2", "--layer", "5",
                      "--embed-dim", "16", "--num-heads", "4", expect_ok=False)
    if r.returncode != 1 or "h.5.attn.c_attn.weight" not in r.stderr:
        failures.append("missing layer: exit %d, %r" % (r.returncode, r.stderr))
    print("bad input: clear messages, exit 1")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="al-export-model-") as workdir:
        run = Runner(args.binary, args.source, workdir)
        test_mha(run)
        test_gpt2(run)
        test_bert(run)
        test_bad_input(run)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("all exported layers agree with PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
