#!/usr/bin/env bash
# Times our full trace (and FlashAttention) against PyTorch's nn.MultiheadAttention
# in the same run on this machine, one length at a time (ours, then torch, so
# both see the same load), and prints the tables of docs/performance.md.
#
#   bench/run.sh                 # build dir build-bench, 5 repetitions
#   BUILD_DIR=build REPS=9 bench/run.sh
#   LENGTHS=128,512 bench/run.sh
#   NICE=-10 bench/run.sh        # on a shared machine: both sides at a higher priority (root only)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-bench}
reps=${REPS:-5}
lengths=${LENGTHS:-128,512,1024,2048}
priority=(nice -n "${NICE:-0}")  # applied to ours and torch alike
python=/usr/bin/python3  # Debian's, with python3-torch (the pyenv python3 on PATH has no torch)

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DATTENTION_LAB_BUILD_GUI=OFF >/dev/null
fi
cmake --build "$build_dir" -j2 --target attention_bench attention-lab >/dev/null
bench="$build_dir/bench/attention_bench"
app="$build_dir/app/attention-lab"

# The app must not starve its renderer: OpenMP threads sleep instead of spinning when idle.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
  *openblas*) ;;
  *) echo "warning: libblas.so.3 is $blas, not OpenBLAS: torch runs on the reference BLAS and is not a fair peer" \
          "(sudo update-alternatives --set libblas.so.3-x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3)" >&2 ;;
esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "nice ${NICE:-0}, OMP_WAIT_POLICY=$OMP_WAIT_POLICY, BLAS: $blas, torch $("$python" -c 'import torch; print(torch.__version__)')"
echo

bench_args=(--benchmark_repetitions="$reps" --benchmark_out_format=json)
IFS=, read -ra length_list <<<"$lengths"
for len in "${length_list[@]}"; do
  "${priority[@]}" "$bench" --benchmark_filter="^(FullTrace|FullTraceStages|Flash|Linear)/L:$len/" "${bench_args[@]}" \
    --benchmark_out="$out/ours_$len.json" >/dev/null 2>&1
  "${priority[@]}" "$python" bench/torch_peer.py --lengths "$len" --runs $((reps * 3)) >"$out/torch_$len.json"
done
"${priority[@]}" "$bench" --benchmark_filter='^(Incremental|Seed000)/' "${bench_args[@]}" --benchmark_out="$out/other.json" >/dev/null 2>&1

# compute_ms as the app reports it (one process per run: includes cold caches, as a learner sees it).
for preset in default seed-003-example seed-000-usage; do
  for _ in 1 2 3; do
    "${priority[@]}" "$app" trace "$preset" --summary | sed -n "s/^compute_ms: /$preset /p"
  done
done >"$out/presets.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

"$python" - "$out" "$lengths" <<'EOF'
import json, statistics, sys
out, lengths = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]

def medians(path):
    """Per benchmark: the median of its repetitions for every field, and min_ms, the best repetition."""
    runs = {}
    for r in json.load(open(path))["benchmarks"]:
        if r.get("run_type") == "iteration":
            runs.setdefault(r["run_name"], []).append(r)
    out = {}
    for name, reps in runs.items():
        fields = {k: statistics.median(r[k] for r in reps) for k in reps[0] if isinstance(reps[0][k], (int, float))}
        fields["min_ms"] = min(r["real_time"] for r in reps)
        out[name] = fields
    return out

print("Wall-clock medians of the repetitions, in brackets the best repetition; cpu = process CPU time")
print("of all threads (median), which other load on the machine inflates less.")
print()
print("| L | ours_ms (full trace) | torch_ms | ratio ours/torch | cpu ratio | flash_ms | flash/torch | linear_ms | full trace: allocate / project / heads / output ms |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for L in lengths:
    ours = medians(f"{out}/ours_{L}.json")
    peer = json.loads(open(f"{out}/torch_{L}.json").read())
    torch, torch_min, torch_cpu = peer["median_ms"], peer["min_ms"], peer["cpu_ms"]
    full_cpu = ours[f"FullTrace/L:{L}/real_time"]["cpu_time"]
    full, full_min = ours[f"FullTrace/L:{L}/real_time"]["real_time"], ours[f"FullTrace/L:{L}/real_time"]["min_ms"]
    flash, flash_min = ours[f"Flash/L:{L}/real_time"]["real_time"], ours[f"Flash/L:{L}/real_time"]["min_ms"]
    linear = ours[f"Linear/L:{L}/real_time"]["real_time"]
    st = ours[f"FullTraceStages/L:{L}/real_time"]
    stages = " / ".join(f'{st[k + "_ms"]:.1f}' for k in ("allocation", "projection", "heads", "output"))
    print(f"| {L} | {full:.1f} ({full_min:.1f}) | {torch:.1f} ({torch_min:.1f}) | **{full / torch:.2f}** ({full_min / torch_min:.2f}) "
          f"| {full_cpu / torch_cpu:.2f} "
          f"| {flash:.1f} ({flash_min:.1f}) | {flash / torch:.2f} ({flash_min / torch_min:.2f}) | {linear:.1f} | {stages} |")

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
EOF
