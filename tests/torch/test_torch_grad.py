#!/usr/bin/env python3
"""Gradients against PyTorch autograd: `attention-lab grad --upstream G.npy --json` agrees
with torch to 1e-5 for every input, weight and stage.

    python3 test_torch_grad.py --binary build/app/attention-lab --source .

1. Random sessions (tools/random_sessions.py: self/cross, projection/direct, fused W_qkv,
   torch and math layouts, bias on/off, every scale, causal/padding/custom masks with fully
   masked rows, every fill, dropout in training): the independent float64 reference
   (reference.py) is rebuilt with every input and weight an autograd leaf and every stage's
   gradient retained, and L = sum(output * G) is backpropagated for a random G.
   Fully masked rows with -inf fill follow the documented convention (they attend
   nothing), so ours is finite where PyTorch's plain autograd would spread NaN.
2. Real nn.MultiheadAttention modules: forward, backward(G); the grads of in_proj_weight,
   in_proj_bias, out_proj and the inputs must equal ours (transposed to math layout).
3. Without --upstream, G is all ones.
4. The sessions of test_torch_modern.py: grouped-query heads, sinusoidal positions, RoPE
   (both styles), ALiBi, sliding windows and global tokens, and their combinations.

Agreement as in test_torch_proof.py: |ours - torch| <= 1e-5 * max(1, |torch|).
Exit 77 (ctest's skip) without PyTorch or NumPy.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

SKIP = 77

try:
    import numpy
    import torch
except ImportError:
    print("SKIP: PyTorch or NumPy is not installed for %s" % sys.executable)
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402


def autograd(session, upstream):
    """(loss, input grads by name, stage grads) of L = sum(output * G) by torch autograd."""
    leaves = {}

    def leaf(name, t):
        t = t.detach().clone().requires_grad_(True)
        leaves[name] = t
        return t
    stages = reference.stages(session, leaf=leaf, absent_rows_attend_nothing=True)
    for t in stages.values():
        t.retain_grad()
    loss = (stages["output"] * upstream.reshape(stages["output"].shape)).sum()
    loss.backward()
    return loss.item(), {n: t.grad for n, t in leaves.items()}, {n: t.grad for n, t in stages.items()}


class Checker:
    def __init__(self, binary, workdir):
        self.binary, self.workdir = binary, workdir
        self.failures, self.comparisons, self.worst = [], 0, {}

    def check(self, label, name, ours, expected):
        self.comparisons += 1
        message = reference.compare(name, ours, expected)
        if message:
            self.failures.append("%s: %s" % (label, message))
        else:
            self.worst[name] = max(self.worst.get(name, 0.0), reference.max_error(ours, expected))

    def grad(self, source, label, upstream=None):
        args = [self.binary, "grad", source, "--json"]
        if upstream is not None:
            path = os.path.join(self.workdir, label + "_g.npy")
            numpy.save(path, upstream.numpy().astype(numpy.float32))
            args += ["--upstream", path]
        run = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            self.failures.append("%s: grad exited %d: %s" % (label, run.returncode, run.stderr.strip()))
            return None
        return json.loads(run.stdout)

    def compare_session(self, label, session, source, upstream, send_upstream=True):
        ours = self.grad(source, label, upstream if send_upstream else None)
        if ours is None:
            return
        loss, inputs, stages = autograd(session, upstream)
        if set(ours["inputs"]) != set(inputs):
            self.failures.append("%s: inputs %s, expected %s" % (label, sorted(ours["inputs"]), sorted(inputs)))
        for name, g in inputs.items():
            if name in ours["inputs"]:
                self.check(label, name, ours["inputs"][name], g)
        if set(ours["stages"]) != set(stages):
            self.failures.append("%s: stages %s, expected %s" % (label, sorted(ours["stages"]), sorted(stages)))
        for name in stages:
            if name in ours["stages"]:
                self.check(label, name, ours["stages"][name], stages[name])
        if ours["loss"] != "NaN":
            self.check(label, "loss", [ours["loss"]], torch.tensor([loss], dtype=torch.float64))


def output_shape(session):
    traced = reference.stages(session)
    return traced["output"].shape


def module_cases(checker, rng):
    """nn.MultiheadAttention itself: its parameters' .grad against ours."""
    for n, (attention, heads, d_k, causal) in enumerate([("self", 2, 3, True), ("cross", 4, 2, False)]):
        torch.manual_seed(2000 + n)
        embed = heads * d_k
        module = torch.nn.MultiheadAttention(embed, heads, batch_first=True).double()
        with torch.no_grad():
            module.in_proj_bias.normal_(0.0, 0.5)
            module.out_proj.bias.normal_(0.0, 0.5)
        len_q = rng.randint(2, 5)
        len_kv = rng.randint(2, 5) if attention == "cross" else len_q
        x_q = torch.randn(2, len_q, embed, dtype=torch.float64).float().double().requires_grad_(True)
        x_kv = (torch.randn(2, len_kv, embed, dtype=torch.float64).float().double().requires_grad_(True)
                if attention == "cross" else x_q)
        # The session holds float32: round the parameters to float32 first so both see the same numbers.
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(p.float().double())
        mask = ~torch.ones(len_q, len_kv).tril().bool() if causal else None
        output, _ = module(x_q, x_kv, x_kv, attn_mask=mask, need_weights=False)
        upstream = torch.randn(output.shape, dtype=torch.float64).float().double()
        (output * upstream).sum().backward()

        in_w = module.in_proj_weight.detach()
        session = {
            "format": "attention-lab/session", "version": 1,
            "config": {"mode": "projection", "attention": attention, "d_model": embed, "num_heads": heads,
                       "bias": True, "mask": {"causal": causal}},
            "weights": {"layout": "torch", "w_o": module.out_proj.weight.detach().tolist(),
                        "b_o": module.out_proj.bias.detach().tolist()},
        }
        for name, block, bias in zip("qkv", in_w.chunk(3), module.in_proj_bias.detach().chunk(3)):
            session["weights"]["w_" + name] = block.tolist()
            session["weights"]["b_" + name] = bias.tolist()
        if attention == "cross":
            session["x_q"], session["x_kv"] = x_q.detach().tolist(), x_kv.detach().tolist()
        else:
            session["x"] = x_q.detach().tolist()
        label = "mha_%d_%s" % (n, attention)
        path = os.path.join(checker.workdir, label + ".json")
        with open(path, "w") as f:
            json.dump(session, f)
        ours = checker.grad(path, label, upstream)
        if ours is None:
            continue
        g = ours["inputs"]
        expected = {"w_o": module.out_proj.weight.grad.t(), "b_o": module.out_proj.bias.grad}
        for name, w, b in zip("qkv", module.in_proj_weight.grad.chunk(3), module.in_proj_bias.grad.chunk(3)):
            expected["w_" + name], expected["b_" + name] = w.t(), b  # math layout: (in, out)
        if attention == "cross":
            expected["x_q"], expected["x_kv"] = x_q.grad, x_kv.grad
        else:
            expected["x"] = x_q.grad
        for name, t in expected.items():
            checker.check(label + " (nn.MultiheadAttention)", name, g[name], t)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--random-cases", type=int, default=24)
    args = parser.parse_args()
    started = time.time()
    sys.path.insert(0, os.path.join(args.source, "tools"))
    import random_sessions

    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="attention-lab-grad-") as workdir:
        checker = Checker(args.binary, workdir)
        sessions = [random_sessions.random_session(rng, fill, attention, mode)
                    for fill in random_sessions.FILLS for attention in ("self", "cross")
                    for mode in ("projection", "direct")]
        sessions += [random_sessions.random_session(rng) for _ in range(args.random_cases)]
        for i, session in enumerate(sessions):
            label = "case_%03d" % i
            path = os.path.join(workdir, label + ".json")
            with open(path, "w") as f:
                json.dump(session, f)
            upstream = torch.randn(output_shape(session), dtype=torch.float64).float().double()
            checker.compare_session(label, session, path, upstream)
            if i % 8 == 0:  # without --upstream, G is all ones
                ones = torch.ones(output_shape(session), dtype=torch.float64)
                checker.compare_session(label + " (G = ones)", session, path, ones, send_upstream=False)
        print("random sessions: %d" % len(sessions))

        # Today's attention (issue 14): GQA, sinusoidal, RoPE, ALiBi, windows, global tokens.
        import test_torch_modern
        modern = test_torch_modern.cases(random.Random(14))
        for label, session in modern:
            path = os.path.join(workdir, label + ".json")
            with open(path, "w") as f:
                json.dump(session, f)
            upstream = torch.randn(output_shape(session), dtype=torch.float64).float().double()
            checker.compare_session(label, session, path, upstream)
        print("modern sessions: %d" % len(modern))

        module_cases(checker, rng)


    print("worst scaled difference per gradient (tolerance 1e-05): %s" % "  ".join(
        "%s %.1e" % kv for kv in sorted(checker.worst.items())))
    print("%d comparisons, %d failures, %.1f s (torch %s)" % (
        checker.comparisons, len(checker.failures), time.time() - started, torch.__version__))
    for failure in checker.failures[:40]:
        print("FAIL", failure)
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
