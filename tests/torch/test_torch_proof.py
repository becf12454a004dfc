#!/usr/bin/env python3
"""Proof against PyTorch: every stage of `attention-lab trace --json` agrees with PyTorch to 1e-5.

    python3 test_torch_proof.py --binary build/app/attention-lab --source .

1. Random sessions from a seed (tools/random_sessions.py): self and cross, projection and
   direct, several heads, biases on/off, math and torch layouts, fused W_qkv, causal /
   padding / custom masks with fully masked rows, every fill (-inf, -1e9, -1e20, -1e-20),
   dropout in eval and training. Each is traced and compared, stage by stage, with an
   independent float64 PyTorch reference (reference.py).
2. Real torch.nn.MultiheadAttention modules: the session is built from the module's own
   in_proj_weight (split into w_q/w_k/w_v, or whole as w_qkv) and out_proj; the module's
   per-head attention weights and its output must equal our "weights" and "output".
3. `attention-lab export-torch` scripts for those sessions and for every preset are run
   with --json and must agree with `trace --json` stage by stage.

Agreement: same shapes, NaN in the same cells, equal infinities, and elsewhere
|ours - theirs| <= 1e-5 * max(1, |theirs|). Exit 77 (ctest's skip) without PyTorch.
"""
import argparse
import contextlib
import io
import json
import os
import random
import runpy
import subprocess
import sys
import tempfile
import time

SKIP = 77
STAGES = ["q", "k", "v", "scores", "scaled", "masked", "weights", "dropped", "context", "concat", "output"]
# Presets whose trace is bigger than this many numbers are exported and run, but not
# compared through JSON (seed 000's trace as JSON is hundreds of megabytes).
MAX_JSON_NUMBERS = 2_000_000

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed for %s (Debian: apt-get install python3-torch)" % sys.executable)
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402


class Checker:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.sessions_dir = os.path.join(workdir, "sessions")
        self.scripts_dir = os.path.join(workdir, "scripts")
        os.makedirs(self.sessions_dir)
        os.makedirs(self.scripts_dir)
        self.failures = []
        self.comparisons = 0
        self.worst = {}  # (what, stage) -> largest scaled error

    def check(self, label, what, stage, actual, expected):
        self.comparisons += 1
        message = reference.compare(stage, actual, expected)
        if message:
            self.failures.append("%s [%s]: %s" % (label, what, message))
        else:
            key = (what, stage)
            self.worst[key] = max(self.worst.get(key, 0.0), reference.max_error(actual, expected))

    def run(self, args, label):
        result = subprocess.run([self.binary] + args, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            self.failures.append("%s: `attention-lab %s` exited %d: %s" % (
                label, " ".join(args), result.returncode, result.stderr.strip()))
            return None
        return result.stdout

    def trace(self, source, label):
        out = self.run(["trace", source, "--json"], label)
        if out is None:
            return None
        stages = json.loads(out).get("stages", {})
        missing = [s for s in STAGES if s not in stages]
        if missing:
            self.failures.append("%s: trace --json lacks stages %s" % (label, missing))
            return None
        return stages

    def export(self, source, label, file_name):
        path = os.path.join(self.scripts_dir, file_name + ".py")
        if self.run(["export-torch", source, "--out", path], label) is None:
            return None
        return path


def run_script(path, as_main):
    """Runs an exported script in this interpreter (importing torch once for all scripts
    instead of once per script). as_main: run it as `script.py --json` and return the
    stages it prints; otherwise import it and return its `stages` tensors."""
    captured = io.StringIO()
    saved_argv = sys.argv
    sys.argv = [path, "--json"]
    try:
        with contextlib.redirect_stdout(captured):
            names = runpy.run_path(path, run_name="__main__" if as_main else "exported_script")
    finally:
        sys.argv = saved_argv
        torch.set_grad_enabled(True)  # the script turns autograd off for its process
    return json.loads(captured.getvalue())["stages"] if as_main else names["stages"]


def check_session(checker, label, session, traced=None):
    """Writes the session, traces it, compares with the reference and with its exported script."""
    path = os.path.join(checker.sessions_dir, label + ".json")
    with open(path, "w") as f:
        json.dump(session, f)
    traced = checker.trace(path, label)
    if traced is None:
        return None
    expected = reference.stages(session)
    for stage in STAGES:
        checker.check(label, "trace vs reference", stage, traced[stage], expected[stage])
    script = checker.export(path, label, label)
    if script:
        exported = run_script(script, as_main=True)
        for stage in STAGES:
            checker.check(label, "script vs trace", stage, exported[stage], traced[stage])
    return path, traced


def check_summary(checker, name, tensors):
    """For a preset too big for JSON: each stage's shape, min and max as printed by
    `trace --summary` (6 significant digits, well inside the 1e-5 tolerance)."""
    summary = checker.run(["trace", name, "--summary"], "preset " + name) or ""
    seen = set()
    for line in summary.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[0] not in tensors:
            continue
        stage, shape, low, high = fields[0], fields[1], float(fields[2]), float(fields[3])
        t = tensors[stage]
        seen.add(stage)
        label = "preset " + name
        if shape != "x".join(str(n) for n in t.shape):
            checker.failures.append("%s: %s has shape %s in the summary, %s in the script" % (
                label, stage, shape, tuple(t.shape)))
            continue
        finite = t[torch.isfinite(t)]
        checker.check(label, "script vs trace --summary", stage,
                      torch.tensor([low, high]), torch.stack([finite.min(), finite.max()]))
    if seen != set(STAGES):
        checker.failures.append("preset %s: trace --summary lacks stages %s" % (name, sorted(set(STAGES) - seen)))


def multihead_attention_cases(rng):
    """(label, session dict, module output, module weights) for real nn.MultiheadAttention modules."""
    cases = []
    specs = [  # (attention, heads, d_k, bias, fused, causal, padding)
        ("self", 2, 4, True, False, False, False),
        ("self", 4, 2, True, True, True, True),
        ("self", 1, 3, False, False, True, False),
        ("cross", 2, 3, True, False, False, True),
        ("cross", 4, 4, True, True, False, False),
        ("self", 3, 2, True, False, False, "empty"),  # one batch item with every key padded: NaN rows
    ]
    for n, (attention, heads, d_k, bias, fused, causal, padding) in enumerate(specs):
        torch.manual_seed(1000 + n)
        embed = heads * d_k
        batch = rng.randint(1, 3) if padding != "empty" else 2
        len_q = rng.randint(2, 6)
        len_kv = rng.randint(2, 6) if attention == "cross" else len_q
        module = torch.nn.MultiheadAttention(embed, heads, bias=bias, batch_first=True).eval()
        if bias:  # PyTorch initialises the biases to 0; random ones test that they are used.
            with torch.no_grad():
                module.in_proj_bias.normal_(0.0, 0.5)
                module.out_proj.bias.normal_(0.0, 0.5)
        x_q = torch.randn(batch, len_q, embed)
        x_kv = torch.randn(batch, len_kv, embed) if attention == "cross" else x_q

        attend_keys = torch.ones(batch, len_kv)
        if padding:
            for b in range(batch):
                keep = 0 if padding == "empty" and b == 0 else rng.randint(1, len_kv)
                attend_keys[b, keep:] = 0
        causal_allowed = torch.ones(len_q, len_kv).tril().bool()
        with torch.no_grad():
            output, attn = module(
                x_q, x_kv, x_kv,
                key_padding_mask=(attend_keys == 0) if padding else None,  # True = ignore this key
                attn_mask=~causal_allowed if causal else None,             # True = not allowed
                need_weights=True, average_attn_weights=False)

        in_w = module.in_proj_weight.detach()  # (3E, E): W_q, W_k, W_v stacked, nn.Linear layout
        weights = {"layout": "torch", "w_o": module.out_proj.weight.detach().tolist()}
        if fused:
            weights["w_qkv"] = in_w.tolist()
        else:
            for name, block in zip("qkv", in_w.chunk(3)):
                weights["w_" + name] = block.tolist()
        if bias:
            weights["b_o"] = module.out_proj.bias.detach().tolist()
            if fused:
                weights["b_qkv"] = module.in_proj_bias.detach().tolist()
            else:
                for name, block in zip("qkv", module.in_proj_bias.detach().chunk(3)):
                    weights["b_" + name] = block.tolist()
        mask = {"causal": causal}
        if padding:
            mask["key_padding"] = attend_keys.tolist()
        session = {
            "format": "attention-lab/session", "version": 1,
            "config": {"mode": "projection", "attention": attention, "d_model": embed, "num_heads": heads,
                       "bias": bias, "scale": "sqrt_dk", "mask": mask, "mask_fill": "-inf",
                       "dropout": {"p": 0.0, "training": False, "seed": 0}},
            "weights": weights,
        }
        if attention == "cross":
            session["x_q"], session["x_kv"] = x_q.tolist(), x_kv.tolist()
        else:
            session["x"] = x_q.tolist()
        cases.append(("mha_%d_%s_h%d%s%s" % (n, attention, heads, "_fused" if fused else "",
                                             "_nobias" if not bias else ""), session, output, attn))
    return cases


def coverage(sessions):
    """How many sessions exercise each feature, so a different seed cannot silently drop one."""
    counts = {}

    def count(feature, present):
        counts[feature] = counts.get(feature, 0) + (1 if present else 0)
    for s in sessions:
        c, w = s["config"], s.get("weights", {})
        count("cross", c["attention"] == "cross")
        count("direct", c["mode"] == "direct")
        count("multi-head", c["num_heads"] > 1)
        count("fused w_qkv", "w_qkv" in w)
        count("torch layout", w.get("layout") == "torch" and len(w) > 1)
        count("no bias", not c["bias"])
        count("causal", c["mask"].get("causal"))
        count("key padding", "key_padding" in c["mask"])
        count("custom mask", "custom" in c["mask"])
        count("fully masked row", any(sum(row) == 0 for row in _rows(c["mask"].get("key_padding"))))
        count("training dropout", c["dropout"]["training"] and c["dropout"]["p"] > 0)
        count("2-D input (B = 1)", any(isinstance(s.get(k), list) and not isinstance(s[k][0][0], list)
                                       for k in ("x", "x_q", "q")))
        for fill in ["-inf", -1e9, -1e20, -1e-20]:
            count("fill %s" % fill, c["mask_fill"] == fill)
    return counts


def _rows(padding):
    if padding is None:
        return []
    return padding if isinstance(padding[0], list) else [padding]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the attention-lab executable")
    parser.add_argument("--source", required=True, help="the source tree (for tools/random_sessions.py)")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--random-cases", type=int, default=32)
    args = parser.parse_args()
    started = time.time()
    sys.path.insert(0, os.path.join(args.source, "tools"))
    import random_sessions

    torch.set_num_threads(1)  # tiny tensors: threads only add noise on a shared 2-core machine
    with tempfile.TemporaryDirectory(prefix="attention-lab-torch-") as workdir:
        checker = Checker(args.binary, workdir)
        rng = random.Random(args.seed)

        # 1. Random sessions: every (fill, attention, mode) combination, then fully random ones.
        sessions = []
        for fill in random_sessions.FILLS:
            for attention in ("self", "cross"):
                for mode in ("projection", "direct"):
                    sessions.append(random_sessions.random_session(rng, fill, attention, mode))
        sessions += [random_sessions.random_session(rng) for _ in range(args.random_cases)]
        counts = coverage(sessions)
        for feature, n in counts.items():
            if n == 0:
                checker.failures.append("coverage: no random session has %s (change the seed)" % feature)
        print("random sessions: %d; coverage: %s" % (
            len(sessions), ", ".join("%s %d" % kv for kv in counts.items())))
        subprocess_script = None
        for i, session in enumerate(sessions):
            checked = check_session(checker, "case_%03d" % i, session)
            if checked and subprocess_script is None and session["config"]["dropout"]["training"]:
                subprocess_script = checked[0]

        # 2. Real nn.MultiheadAttention modules.
        mha = multihead_attention_cases(rng)
        for label, session, output, attn in mha:
            checked = check_session(checker, label, session)
            if checked:
                traced = checked[1]
                checker.check(label, "trace vs nn.MultiheadAttention", "weights", traced["weights"], attn)
                checker.check(label, "trace vs nn.MultiheadAttention", "output", traced["output"], output)
        print("nn.MultiheadAttention modules: %d" % len(mha))

        # 3. Every preset through its exported script.
        listing = checker.run(["--list-presets"], "presets") or ""
        presets = [line.split()[0] for line in listing.splitlines() if line.strip()]
        if not presets:
            checker.failures.append("--list-presets printed no presets")
        for name in presets:
            script = checker.export(name, "preset " + name, "preset_" + name)
            if not script:
                continue
            tensors = run_script(script, as_main=False)
            numbers = sum(t.numel() for t in tensors.values())
            if numbers > MAX_JSON_NUMBERS:
                check_summary(checker, name, tensors)
                print("preset %s: %d numbers, too many for JSON: compared shapes and value ranges" % (
                    name, numbers))
                continue
            exported = run_script(script, as_main=True)
            traced = checker.trace(name, "preset " + name)
            if traced:
                for stage in STAGES:
                    checker.check("preset " + name, "script vs trace", stage, exported[stage], traced[stage])
        print("presets: %s" % ", ".join(presets))

        # The scripts are standalone programs: run two in a fresh python as a user would.
        for source in filter(None, [subprocess_script, presets[0] if presets else None]):
            script = checker.export(source, "standalone " + source, "standalone")
            if not script:
                continue
            run = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
            if run.returncode != 0 or "output" not in run.stdout:
                checker.failures.append("standalone %s: exit %d: %s" % (script, run.returncode, run.stderr[-2000:]))
            run = subprocess.run([sys.executable, script, "--json"], capture_output=True, text=True, timeout=120)
            if run.returncode != 0:
                checker.failures.append("standalone %s --json: exit %d: %s" % (script, run.returncode, run.stderr))
                continue
            traced = checker.trace(source, "standalone " + source)
            if traced:
                exported = json.loads(run.stdout)["stages"]
                for stage in STAGES:
                    checker.check("standalone " + source, "script vs trace", stage, exported[stage], traced[stage])

    print("worst scaled difference per comparison and stage (tolerance 1e-05):")
    for what in sorted({w for w, _ in checker.worst}):
        print("  %-32s %s" % (what, "  ".join("%s %.1e" % (s, checker.worst[(what, s)])
                                            for s in STAGES if (what, s) in checker.worst)))
    print("%d comparisons, %d failures, %.1f s (torch %s)" % (
        checker.comparisons, len(checker.failures), time.time() - started, torch.__version__))
    for failure in checker.failures[:40]:
        print("FAIL", failure)
    if len(checker.failures) > 40:
        print("... and %d more" % (len(checker.failures) - 40))
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
