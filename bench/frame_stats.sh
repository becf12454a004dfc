#!/usr/bin/env bash
# The window measuring itself (attention-lab --frame-stats) under Xvfb at
# 1600x1000 with 8 heads visible, for the default example and the
# bench/sessions/frame-n*.json sessions (n = 256 ... 2048, d_model 512, 8 heads),
# then a table against the targets of issue 6.
#
#   bench/frame_stats.sh                  # build dir build-bench (configured with the GUI)
#   BUILD_DIR=build FRAMES=60 bench/frame_stats.sh
#   SIZES=256,512 bench/frame_stats.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-bench}
frames=${FRAMES:-120}
sizes=${SIZES:-256,512,1024,2048}
python=/usr/bin/python3

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build_dir" -j2 --target attention-lab >/dev/null
app="$build_dir/app/attention-lab"
command -v xvfb-run >/dev/null || { echo "frame_stats.sh needs xvfb-run (tools/deps.sh installs it)" >&2; exit 1; }

out=${OUT_DIR:-$build_dir/frame-stats}
rm -rf "$out" && mkdir -p "$out"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {  # run <name> <preset or session>
  # Each run gets its own X server; the window is 1600x1000 on a 1920x1080 screen.
  xvfb-run -a -s "-screen 0 1920x1080x24" "$app" "$2" --frame-stats "$out/$1.json" \
    --size 1600x1000 --frames "$frames" >"$out/$1.txt" 2>&1 || { cat "$out/$1.txt" >&2; exit 1; }
}
run default default
IFS=, read -ra size_list <<<"$sizes"
for n in "${size_list[@]}"; do run "n$n" "bench/sessions/frame-n$n.json"; done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw results: $out"
echo

"$python" - "$out" "$sizes" <<'PY'
import json, sys
out, sizes = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
default = json.load(open(f"{out}/default.json"))
r0 = default["machine"]
print(f"renderer: {r0['renderer']}; start-up of the default example: {default['startup_s']:.2f} s (target <= 0.5 s)")
print()
print("| n | trace | in background | start-up s | idle fps | recompute fps | edits shown/s | edit->visible median ms | p90 ms |")
print("|---:|---:|:---:|---:|---:|---:|---:|---:|---:|")
for n in sizes:
    j = json.load(open(f"{out}/n{n}.json"))
    e = j["edit_to_visible_ms"]
    print(f"| {n} | {j['trace_bytes'] / 2**20:.0f} MiB | {'yes' if j['computes_in_background'] else 'no'} "
          f"| {j['startup_s']:.2f} | {j['idle']['fps']:.1f} | {j['recompute']['fps']:.1f} "
          f"| {j['recompute']['edits_shown_per_s']:.1f} | {e['median']:.0f} | {e['p90']:.0f} |")
print()
print("targets (issue 6): idle >= 60 fps up to n = 2048; recompute >= 60 fps up to n = 256 and >= 30 at n = 512;")
print("edit->visible <= 50 ms median at n = 512 and <= 100 ms p90 at n = 1024")
PY
