#!/usr/bin/python3
"""Prints the tables of docs/performance.md from the raw results bench/run.sh
leaves in a directory: bench/report.py <dir> <lengths, e.g. 128,512,1024,2048>."""
import json, statistics, sys
out, lengths = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]

def medians(path):
    """Per benchmark: the median of its repetitions for every field, and min_ms, the best repetition."""
    runs = {}
    for r in json.load(open(path))["benchmarks"]:
        if r.get("run_type") == "iteration":
            # MeasureProcessCPUTime adds "/process_time" to the names.
            runs.setdefault(r["run_name"].replace("/process_time", ""), []).append(r)
    out = {}
    for name, reps in runs.items():
        fields = {k: statistics.median(r[k] for r in reps) for k in reps[0] if isinstance(reps[0][k], (int, float))}
        fields["min_ms"] = min(r["real_time"] for r in reps)
        out[name] = fields
    return out

print("Wall-clock medians of the repetitions, in brackets the best repetition; cpu = process CPU time")
print("of all threads (median), which other load on the machine inflates less.")
print()
print("| L | ours_ms (full trace) | torch_ms | ratio ours/torch | cpu ratio | app's trace (+ head means, ranges) ms | cold_ms (fresh pages) | cold/torch | flash_ms | flash/torch | linear_ms | full trace: allocate / project / heads / output ms |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
verdicts = []
for L in lengths:
    ours = medians(f"{out}/ours_{L}.json")
    peer = json.loads(open(f"{out}/torch_{L}.json").read())
    torch, torch_min, torch_cpu = peer["median_ms"], peer["min_ms"], peer["cpu_ms"]
    full_cpu = ours[f"FullTrace/L:{L}/real_time"]["cpu_time"]
    full, full_min = ours[f"FullTrace/L:{L}/real_time"]["real_time"], ours[f"FullTrace/L:{L}/real_time"]["min_ms"]
    cold, cold_min = ours[f"FullTraceCold/L:{L}/real_time"]["real_time"], ours[f"FullTraceCold/L:{L}/real_time"]["min_ms"]
    flash, flash_min = ours[f"Flash/L:{L}/real_time"]["real_time"], ours[f"Flash/L:{L}/real_time"]["min_ms"]
    linear = ours[f"Linear/L:{L}/real_time"]["real_time"]
    st = ours[f"FullTraceStages/L:{L}/real_time"]
    stages = " / ".join(f'{st[k + "_ms"]:.1f}' for k in ("allocation", "projection", "heads", "output"))
    summarized = ours[f"FullTraceSummarized/L:{L}/real_time"]["real_time"]
    verdicts.append((L, full / torch, full_cpu / torch_cpu))
    print(f"| {L} | {full:.1f} ({full_min:.1f}) | {torch:.1f} ({torch_min:.1f}) | **{full / torch:.2f}** ({full_min / torch_min:.2f}) "
          f"| {full_cpu / torch_cpu:.2f} | {summarized:.1f} | {cold:.1f} ({cold_min:.1f}) | **{cold / torch:.2f}** ({cold_min / torch_min:.2f}) "
          f"| {flash:.1f} ({flash_min:.1f}) | {flash / torch:.2f} ({flash_min / torch_min:.2f}) | {linear:.1f} | {stages} |")

print()
print("| target (issue 6): full trace <= 1.0 x PyTorch | wall ratio | cpu ratio | verdict |")
print("|---|---:|---:|---|")
for L, wall, cpu in verdicts:
    print(f"| L = {L} | {wall:.2f} | {cpu:.2f} | {'met' if wall <= 1.0 else 'NOT met'} |")

import os
backward_lengths = [L for L in lengths if os.path.exists(f"{out}/ours_backward_{L}.json")]
if backward_lengths:
    print()
    print("| L | ours forward + backward ms | torch forward + backward() ms | ratio ours/torch | cpu ratio | ours, keeping every stage's gradient ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    backward_verdicts = []
    for L in backward_lengths:
        ours = medians(f"{out}/ours_backward_{L}.json")
        peer = json.loads(open(f"{out}/torch_backward_{L}.json").read())
        fb = ours[f"ForwardBackward/L:{L}/real_time"]
        stages = ours[f"ForwardBackwardStages/L:{L}/real_time"]["real_time"]
        wall, cpu = fb["real_time"] / peer["median_ms"], fb["cpu_time"] / peer["cpu_ms"]
        backward_verdicts.append((L, wall, cpu))
        print(f"| {L} | {fb['real_time']:.1f} ({fb['min_ms']:.1f}) | {peer['median_ms']:.1f} ({peer['min_ms']:.1f}) "
              f"| **{wall:.2f}** | {cpu:.2f} | {stages:.1f} |")
    print()
    print("| target (issue 13): forward + backward <= 1.0 x PyTorch autograd | wall ratio | cpu ratio | verdict |")
    print("|---|---:|---:|---|")
    for L, wall, cpu in backward_verdicts:
        print(f"| L = {L} | {wall:.2f} | {cpu:.2f} | {'met' if wall <= 1.0 else 'NOT met'} |")

other = medians(f"{out}/other.json")
print()
print("| L=512, one edit | ms | vs full recompute |")
print("|---|---:|---:|")
base = other["Incremental/full_recompute/real_time"]["real_time"]
for name, label in [("full_recompute", "full recompute (no previous trace)"), ("edit_x", "edit X (everything downstream)"),
                    ("edit_w_v", "edit W_V (V, context, concat, output)"), ("edit_mask", "edit the mask (causal on: masked onwards)"),
                    ("edit_w_o", "edit W_O (output only)")]:
    t = other[f"Incremental/{name}/real_time"]["real_time"]
    print(f"| {label} | {t:.2f} | {t / base:.2f} |")
print()
print("| training lab, one Adam step at the default size (B=64, L=8, d_model=32, 2 heads) | ms | cpu ms | target <= 5 ms |")
print("|---|---:|---:|---|")
for task in ("previous_token", "duplicate"):
    r = other.get(f"TrainingStep/{task}/real_time")
    if r:
        print(f"| {task} | {r['real_time']:.2f} ({r['min_ms']:.2f}) | {r['cpu_time']:.2f} | {'met' if r['real_time'] <= 5 else 'NOT met'} |")
print()
print("| seed 000 usage (B=16, L=100, d=512, h=8, dropout 0.1 training) | ms |")
print("|---|---:|")
print(f'| full trace (bench median) | {other["Seed000/full_trace/real_time"]["real_time"]:.2f} |')
print(f'| FlashAttention output (bench median) | {other["Seed000/flash/real_time"]["real_time"]:.2f} |')
print()
print("| `attention-lab trace <preset> --summary` | compute_ms (3 runs) |")
print("|---|---|")
runs = {}
for line in open(f"{out}/presets.txt"):
    name, ms = line.split()
    runs.setdefault(name, []).append(float(ms))
for name, ms in runs.items():
    print(f"| {name} | {', '.join(f'{v:.2f}' for v in ms)} |")
