#!/usr/bin/env bash
# The window measuring itself (attention-lab --frame-stats) under Xvfb at
# 1600x1000 with 8 heads visible, for the default example and the
# bench/sessions/frame-n*.json sessions (n = 256 ... 4096, d_model 512, 8 heads),
# then a table against the targets of issues 6 and 16 (idle, pan/zoom of an
# enlarged heatmap, edit -> visible over 20 edits), each met / NOT met, with the CPU.
#
#   bench/frame_stats.sh                  # build dir build-bench (configured with the GUI)
#   BUILD_DIR=build FRAMES=60 bench/frame_stats.sh
#   SIZES=256,512 bench/frame_stats.sh
#   NICE=-10 bench/frame_stats.sh         # on a shared machine: the app and its X server at a higher priority (root only)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-bench}
frames=${FRAMES:-120}
sizes=${SIZES:-256,512,1024,2048,4096}
python=/usr/bin/python3
priority=(nice -n "${NICE:-0}")  # xvfb-run, Xvfb and the app alike

# The window needs the GUI; bench/run.sh configures build-bench without it, so turn it on here.
if [ ! -f "$build_dir/CMakeCache.txt" ] || grep -q '^ATTENTION_LAB_BUILD_GUI:BOOL=OFF' "$build_dir/CMakeCache.txt"; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DATTENTION_LAB_BUILD_GUI=ON >/dev/null
fi
cmake --build "$build_dir" -j2 --target attention-lab >/dev/null
app="$build_dir/app/attention-lab"
command -v xvfb-run >/dev/null || { echo "frame_stats.sh needs xvfb-run (tools/deps.sh installs it)" >&2; exit 1; }

out=${OUT_DIR:-$build_dir/frame-stats}
rm -rf "$out" && mkdir -p "$out"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  "($(grep -m1 -o -w -e avx512f /proc/cpuinfo || grep -m1 -o -w -e avx2 /proc/cpuinfo || echo 'no AVX2'))"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg), nice ${NICE:-0}"

run() {  # run <name> <preset or session>
  # Each run gets its own X server; the window is 1600x1000 on a 1920x1080 screen.
  "${priority[@]}" xvfb-run -a -s "-screen 0 1920x1080x24" "$app" "$2" --frame-stats "$out/$1.json" \
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
print("| n | trace | in background | start-up s | idle fps | UI thread ms/idle frame | pan/zoom fps | p90 ms "
      "| recompute fps | edits shown/s | edit->visible median ms | p90 ms | edits | new-trace frame ms "
      "| of it uploads ms | computed in the frame ms |")
print("|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
stats = {}
for n in sizes:
    j = stats[n] = json.load(open(f"{out}/n{n}.json"))
    e, t, pz = j["edit_to_visible_ms"], j["new_trace_frame"], j["pan_zoom"]
    print(f"| {n} | {j['trace_bytes'] / 2**20:.0f} MiB | {'yes' if j['computes_in_background'] else 'no'} "
          f"| {j['startup_s']:.2f} | {j['idle']['fps']:.1f} | {j['idle']['ui_thread_cpu_ms_median']:.1f} "
          f"| {pz['fps']:.1f} | {pz['frame_ms_p90']:.0f} "
          f"| {j['recompute']['fps']:.1f} | {j['recompute']['edits_shown_per_s']:.1f} | {e['median']:.0f} | {e['p90']:.0f} "
          f"| {e['samples']} | {t['frame_ms_median']:.0f} | {t['upload_ms_median']:.0f} | {t['compute_in_frame_ms_median']:.0f} |")
print()
print("Where an edit's time goes (medians, ms): the edit call / until the frame showing it starts / "
      "the computation itself / that frame")
for n in sizes:
    b = stats[n]["edit_breakdown_ms"]
    print(f"  n = {n}: {b['edit_call_median']:.1f} / {b['until_showing_frame_median']:.0f} / "
          f"{b['compute_median']:.0f} / {b['showing_frame_median']:.0f}")
for n in sizes:
    pz = stats[n]["pan_zoom"]
    if pz["error"]:
        print(f"  n = {n}: the pan/zoom script did not run: {pz['error']}")
print()

def verdict(label, value, ok, unit=""):
    print(f"| {label} | {value}{unit} | {'met' if ok else 'NOT met'} |")

print("| target (issue 6) | measured | verdict |")
print("|---|---:|---|")
verdict("start-up of the default example <= 0.5 s", f"{default['startup_s']:.2f}", default["startup_s"] <= 0.5, " s")
for n in sizes:
    if n <= 2048:
        fps = stats[n]["idle"]["fps"]
        verdict(f"idle redraw >= 60 fps at n = {n}", f"{fps:.1f}", fps >= 60, " fps")
for n, need in ((256, 60), (512, 30)):
    if n in stats:
        r = stats[n]["recompute"]
        verdict(f"recomputing every frame >= {need} fps at n = {n} (frames/s)", f"{r['fps']:.1f}", r["fps"] >= need, " fps")
        verdict(f"... the same counted as edits shown/s at n = {n}", f"{r['edits_shown_per_s']:.1f}",
                r["edits_shown_per_s"] >= need, "/s")
if 512 in stats:
    m = stats[512]["edit_to_visible_ms"]["median"]
    verdict("edit -> visible <= 50 ms median at n = 512", f"{m:.0f}", m <= 50, " ms")
if 1024 in stats:
    p = stats[1024]["edit_to_visible_ms"]["p90"]
    verdict("edit -> visible <= 100 ms p90 at n = 1024", f"{p:.0f}", p <= 100, " ms")
print()

print(f"| target (issue 16), CPU: {r0['cpu']} ({r0['nproc']} cores) | measured | verdict |")
print("|---|---:|---|")
if 4096 in stats:
    fps = stats[4096]["idle"]["fps"]
    verdict("idle redraw >= 60 fps at n = 4096", f"{fps:.1f}", fps >= 60, " fps")
    pz = stats[4096]["pan_zoom"]
    verdict(f"panning/zooming the enlarged 4096 x 4096 heatmap >= 30 fps ({pz['frames']} frames)", f"{pz['fps']:.1f}",
            pz["fps"] >= 30 and not pz["error"], " fps")
    verdict("... zoomed in, one texel per cell wherever a cell covers a pixel",
            f"{pz['of_them_one_texel_per_cell']} of {pz['frames_cells_cover_a_pixel']} frames",
            pz["frames_cells_cover_a_pixel"] > 0 and pz["of_them_one_texel_per_cell"] == pz["frames_cells_cover_a_pixel"])
if 1024 in stats:
    e = stats[1024]["edit_to_visible_ms"]
    verdict(f"edit -> new pixels <= 100 ms at n = 1024 (median of {e['samples']} edits, 20 needed)", f"{e['median']:.0f}",
            e["median"] <= 100 and e["samples"] >= 20, " ms")
print()
print("load while measuring (from the JSON): " + ", ".join(f"n={n}: {stats[n]['machine']['load']}" for n in sizes))
PY
