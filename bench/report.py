#!/usr/bin/python3
"""Prints the tables of docs/performance.md from the raw results bench/run.sh
leaves in a directory: bench/report.py <dir> <lengths, e.g. 128,512,1024,2048>."""
import glob, json, statistics, sys
out, lengths = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]

def medians(*paths):
    """Per benchmark: the median of its repetitions (in all the files) for every field, and min_ms, the best repetition."""
    runs = {}
    for path in paths:
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

def paired_ratio(prefix, name, peer):
    """Median over the alternating rounds (bench/torch_peer.py --alternate) of our repetition in
    round r (PREFIX_<r>.json) / torch's median in the same round."""
    return statistics.median(medians(f"{prefix}_{r}.json")[name]["real_time"] / torch_round
                             for r, torch_round in enumerate(peer["round_medians_ms"]))


def peer_flops(L, d=512, heads=8):
    """FLOPs of the GEMMs every implementation must do: Q, K, V and W_O projections, QKᵀ and ·V."""
    d_k = d // heads
    return 2.0 * (4 * L * d * d + 2 * heads * L * L * d_k)


def stage_bytes(L, d=512, heads=8):
    """The peer's stages by their shapes (bytes): Q, K, V, context, concat, output (1, L, d) each,
    scores, scaled and weights (1, h, L, L) — masked is scaled and dropped is weights (no mask,
    eval) — row max and row sum (1, h, L), and the fully-masked flags (one byte per row)."""
    return 4 * (6 * L * d + 3 * heads * L * L + 2 * heads * L) + L


def fresh_stage_bytes(L, heads=8):
    """What a fresh process must fault in at the least: scores, scaled and weights, (1, h, L, L)
    each. Those under malloc's mmap threshold (32 MiB) may come from the 8 MiB of heap that the
    app's warm-up faults in while the session loads (warm_up in core/numerics/attention.cpp);
    larger ones are fresh mmap pages."""
    stage = 4 * heads * L * L
    return max(0, 3 * stage - ((8 << 20) if stage < (32 << 20) else 0))


other = medians(f"{out}/other.json")
first_touch = other["FirstTouch/real_time"]
# The fastest repetition, as the floor takes the GEMM's best call: a bound must not sit above a fresh
# process that met a kind moment of the host (the median put it above one on a PVM guest, fiftieth pass).
touch_ms_per_mib = first_touch["min_ms"] / first_touch["MiB"]
touch_median_ms_per_mib = first_touch["real_time"] / first_touch["MiB"]
print("Per length, our full trace and torch's forward ran in alternating rounds (bench/torch_peer.py --alternate),")
print("each round also timing the GEMM rate, (2048, 512)·(512, 512) on both threads, the best of 20 calls after 3")
print("warm-up calls: ours (the projections' kernel) and OpenBLAS's (torch.mm), measured alike. The ratio and")
print("'of floor' are paired by round, then the median of the rounds is taken: ratio = our time / torch's median in")
print("the same round; GEMM floor = FLOPs of the projections, QKᵀ, ·V and W_O over the better of that round's two")
print("rates, 'of floor' = floor / our time. Paired, a round in which this VM ran at its slower speed judges ours")
print("against torch (and the GEMM) at that speed too.")
print()
print("Wall-clock medians of the repetitions, in brackets the best repetition; cpu = process CPU time")
print("of all threads (median), which other load on the machine inflates less.")
print()
print("| L | ours_ms (full trace) | torch_ms | ratio ours/torch | cpu ratio | GEMM rate ours, OpenBLAS GFLOP/s (best call) | GEMM floor ms | of floor | app's trace (+ head means, ranges) ms | cold_ms (fresh pages) | cold/torch | flash_ms | flash/torch | linear_ms | full trace: allocate / project / heads / output ms |")
print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
verdicts, memory = [], []
for L in lengths:
    ours = medians(f"{out}/ours_{L}.json", *glob.glob(f"{out}/ours_full_{L}_*.json"))
    peer = json.loads(open(f"{out}/torch_{L}.json").read())
    ours_gflops = ours["GemmRate/rows:2048/real_time"]["GFLOPs_best"]
    openblas_gflops = statistics.median(peer["round_gemm_gflops"])
    # Round by round: (our full trace ms, torch's median ms, the better GEMM rate).
    rounds = []
    for r, torch_round in enumerate(peer["round_medians_ms"]):
        mine = medians(f"{out}/ours_full_{L}_{r}.json")
        rounds.append((mine[f"FullTrace/L:{L}/real_time"]["real_time"], torch_round,
                       max(mine["GemmRate/rows:2048/real_time"]["GFLOPs_best"], peer["round_gemm_gflops"][r])))
    ratio = paired_ratio(f"{out}/ours_full_{L}", f"FullTrace/L:{L}/real_time", peer)
    of_floor = statistics.median(peer_flops(L) / (g * 1e9) * 1e3 / o for o, _, g in rounds)
    gemm_gflops = statistics.median(g for _, _, g in rounds)
    torch, torch_min, torch_cpu = peer["median_ms"], peer["min_ms"], peer["cpu_ms"]
    full_run = ours[f"FullTrace/L:{L}/real_time"]
    full, full_min, full_cpu = full_run["real_time"], full_run["min_ms"], full_run["cpu_time"]
    cold, cold_min = ours[f"FullTraceCold/L:{L}/real_time"]["real_time"], ours[f"FullTraceCold/L:{L}/real_time"]["min_ms"]
    flash, flash_min = ours[f"Flash/L:{L}/real_time"]["real_time"], ours[f"Flash/L:{L}/real_time"]["min_ms"]
    linear = ours[f"Linear/L:{L}/real_time"]["real_time"]
    st = ours[f"FullTraceStages/L:{L}/real_time"]
    stages = " / ".join(f'{st[k + "_ms"]:.1f}' for k in ("allocation", "projection", "heads", "output"))
    summarized = ours[f"FullTraceSummarized/L:{L}/real_time"]["real_time"]
    floor = peer_flops(L) / (gemm_gflops * 1e9) * 1e3
    verdicts.append((L, ratio, full_cpu / torch_cpu, of_floor, torch, floor))
    memory.append((L, stage_bytes(L), full_run["trace_memory_MiB"], full_run["trace_MiB"], full_run["peak_rss_MiB"]))
    print(f"| {L} | {full:.2f} ({full_min:.2f}) | {torch:.2f} ({torch_min:.2f}) | **{ratio:.2f}** ({full_min / torch_min:.2f}) "
          f"| {full_cpu / torch_cpu:.2f} | {ours_gflops:.0f}, {openblas_gflops:.0f} | {floor:.2f} | {100 * of_floor:.1f} % | {summarized:.1f} | {cold:.1f} ({cold_min:.1f}) "
          f"| **{cold / torch:.2f}** ({cold_min / torch_min:.2f}) "
          f"| {flash:.1f} ({flash_min:.1f}) | {flash / torch:.2f} ({flash_min / torch_min:.2f}) | {linear:.1f} | {stages} |")

# Fresh processes: our compute_ms, torch's first forward (bench/run.sh's cold.txt).
cold_runs = {}
for line in open(f"{out}/cold.txt"):
    who, rest = line.split(" ", 1)
    if who == "ours":
        L, ms = rest.split()
        cold_runs.setdefault((int(L), "ours"), []).append(float(ms))
    else:
        r = json.loads(rest)
        cold_runs.setdefault((r["L"], "torch"), []).append(r["first_call_ms"])
print()
print("A fresh process per run (median of the runs): our compute_ms from `attention-lab trace --summary`,")
print("torch's first forward after import, module and input exist; and ours against torch's warm median.")
print("Lower bound of a fresh process that keeps every stage: the GEMM floor plus the first touch of its")
print("scores, scaled and weights, (1, 8, L, L) each (less the 8 MiB of heap the warm-up leaves resident, below 32 MiB a stage), at the")
print(f"{touch_ms_per_mib:.3f} ms/MiB this machine takes to fault fresh stage memory in on both threads (FirstTouch's fastest")
print(f"repetition; its median {touch_median_ms_per_mib:.3f}).")
print()
print("| L | ours, fresh process ms | torch's first call ms | ratio | torch warm ms | ours fresh / torch warm | lower bound ms |")
print("|---:|---:|---:|---:|---:|---:|---:|")
cold_verdicts = []
for L, _, _, _, torch_warm, floor in verdicts:
    ours_cold = statistics.median(cold_runs[(L, "ours")])
    torch_cold = statistics.median(cold_runs[(L, "torch")])
    bound = floor + touch_ms_per_mib * fresh_stage_bytes(L) / 2**20
    cold_verdicts.append((L, ours_cold / torch_cold, ours_cold / torch_warm, bound / torch_cold, bound / torch_warm))
    print(f"| {L} | {ours_cold:.2f} | {torch_cold:.2f} | **{ours_cold / torch_cold:.2f}** | {torch_warm:.2f} | {ours_cold / torch_warm:.2f} "
          f"| {bound:.1f} |")

print()
print("| L | stages by their shapes MiB | trace's memory_bytes MiB | estimate before computing MiB | process peak RSS MiB |")
print("|---:|---:|---:|---:|---:|")
for L, by_shapes, held, estimate, rss in memory:
    print(f"| {L} | {by_shapes / 2**20:.1f} | {held:.1f} | {estimate:.1f} | {rss:.0f} |")

print()
print("| target (issue 16) | measured | verdict |")
print("|---|---:|---|")
def verdict(ratio, bound_ratio):
    """met, NOT met, or NOT met where even the lower bound is above the target on this machine."""
    if ratio <= 0.8:
        return "met"
    return f"NOT met (out of reach here: the lower bound is {bound_ratio:.2f})" if bound_ratio > 0.8 else "NOT met"

for L, wall, cpu, of_floor, _, _ in verdicts:
    print(f"| full trace <= 0.8 x torch at L = {L} | {wall:.2f} (cpu {cpu:.2f}) | {'met' if wall <= 0.8 else 'NOT met'} |")
for L, wall, cpu, of_floor, _, _ in verdicts:
    if L >= 512:
        print(f"| >= 75 % of the GEMM floor at L = {L} | {100 * of_floor:.1f} % | {'met' if of_floor >= 0.75 else 'NOT met'} |")
for L, vs_cold, vs_warm, bound_cold, bound_warm in cold_verdicts:
    print(f"| fresh process <= 0.8 x torch's first call at L = {L} | {vs_cold:.2f} | {verdict(vs_cold, bound_cold)} |")
for L, vs_cold, vs_warm, bound_cold, bound_warm in cold_verdicts:
    print(f"| fresh process <= 0.8 x torch warm at L = {L} | {vs_warm:.2f} | {verdict(vs_warm, bound_warm)} |")

import os
backward_lengths = [L for L in lengths if os.path.exists(f"{out}/ours_backward_{L}.json")]
if backward_lengths:
    print()
    print("Forward + backward: ours and torch's in alternating rounds too, the ratio paired by round.")
    print()
    print("| L | ours forward + backward ms | torch forward + backward() ms | ratio ours/torch | cpu ratio | ours, keeping every stage's gradient ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    backward_verdicts = []
    for L in backward_lengths:
        ours = medians(f"{out}/ours_backward_{L}.json", *glob.glob(f"{out}/ours_fb_{L}_*.json"))
        peer = json.loads(open(f"{out}/torch_backward_{L}.json").read())
        fb = ours[f"ForwardBackward/L:{L}/real_time"]
        stages = ours[f"ForwardBackwardStages/L:{L}/real_time"]["real_time"]
        wall = paired_ratio(f"{out}/ours_fb_{L}", f"ForwardBackward/L:{L}/real_time", peer)
        cpu = fb["cpu_time"] / peer["cpu_ms"]
        backward_verdicts.append((L, wall, cpu))
        print(f"| {L} | {fb['real_time']:.1f} ({fb['min_ms']:.1f}) | {peer['median_ms']:.1f} ({peer['min_ms']:.1f}) "
              f"| **{wall:.2f}** | {cpu:.2f} | {stages:.1f} |")
    print()
    print("| target (issue 13): forward + backward <= 1.0 x PyTorch autograd | wall ratio | cpu ratio | verdict |")
    print("|---|---:|---:|---|")
    for L, wall, cpu in backward_verdicts:
        print(f"| L = {L} | {wall:.2f} | {cpu:.2f} | {'met' if wall <= 1.0 else 'NOT met'} |")

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
