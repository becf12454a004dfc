#!/usr/bin/env bash
# Times our full trace (and FlashAttention), and forward + backward, against PyTorch's
# nn.MultiheadAttention (and its autograd) in the same run on this machine, one length at a time (the full trace and
# torch's forward in alternating rounds, so both see the same load), and prints the tables of docs/performance.md.
#
#   bench/run.sh                 # build dir build-bench, 5 repetitions
#   BUILD_DIR=build REPS=9 bench/run.sh
#   LENGTHS=128,512 bench/run.sh   # default 64,128,...,4096
#   COLD_RUNS=3 bench/run.sh       # fresh processes per length for the cold table (default 5)
#   NICE=-10 bench/run.sh        # on a shared machine: both sides at a higher priority (root only)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-bench}
reps=${REPS:-5}
lengths=${LENGTHS:-64,128,256,512,1024,2048,4096}
cold_runs=${COLD_RUNS:-5}  # fresh processes per length, ours and torch's
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

# OpenBLAS picks its kernels from the CPU's family and model, and Debian 12's (0.3.21) does not know CPUs newer than
# itself: on an Intel Xeon of family 6 model 207 it falls back to its SSE3 "Prescott" kernels, a fifth of the speed of
# the AVX-512 ones there (27 against 144 GFLOP/s), and torch would be no fair peer. Then name the newest kernels it has
# that this CPU runs (OPENBLAS_CORETYPE; set by hand, it is kept).
openblas_core() { OPENBLAS_VERBOSE=2 "$python" -c 'import torch' 2>&1 | sed -n 's/^Core: //p' | head -n 1; }
cpu_has() { grep -m1 '^flags' /proc/cpuinfo | grep -qw "$1"; }
openblas_note=""
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ "$(openblas_core)" = Prescott ]; then
  if cpu_has avx512_bf16 && cpu_has avx512vl && cpu_has avx512bw && cpu_has avx512dq; then export OPENBLAS_CORETYPE=Cooperlake
  elif cpu_has avx512vl && cpu_has avx512bw && cpu_has avx512dq; then export OPENBLAS_CORETYPE=SkylakeX
  elif cpu_has avx2 && cpu_has fma; then export OPENBLAS_CORETYPE=Haswell
  fi
  if [ -n "${OPENBLAS_CORETYPE:-}" ]; then openblas_note=" (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE: its own detection gave Prescott)"; fi
fi

# Raw results (Google Benchmark JSON, torch JSON lines) stay here for a later look.
out=${OUT_DIR:-$build_dir/bench-results}
rm -rf "$out" && mkdir -p "$out"

# A VM's model name can be as short as "AMD EPYC": family, model and vector width tell the machines apart.
cpu_field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
vector_isa=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || { grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo "no AVX2"; })
caches=$(lscpu 2>/dev/null | sed -n 's/^\(L[23]\) cache: *\([^(]*\).*/\1 \2/p' | sed 's/ *$//' | paste -sd, - | sed 's/,/, /g')
echo "machine: $(nproc) cores, $(cpu_field 'model name') (family $(cpu_field 'cpu family') model $(cpu_field model), $vector_isa${caches:+, $caches})"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "nice ${NICE:-0}, OMP_WAIT_POLICY=$OMP_WAIT_POLICY, BLAS: $blas, OpenBLAS kernels: $(openblas_core)$openblas_note," \
  "torch $("$python" -c 'import torch; print(torch.__version__)')"
echo "our kernels: $("$app" --version | sed -n 's/^kernels: \(.*\) (ATTENTION_LAB_CPU.*/\1/p')${ATTENTION_LAB_CPU:+ (ATTENTION_LAB_CPU=$ATTENTION_LAB_CPU)}"
echo

bench_args=(--benchmark_repetitions="$reps" --benchmark_out_format=json)
IFS=, read -ra length_list <<<"$lengths"
for len in "${length_list[@]}"; do
  "${priority[@]}" "$bench" --benchmark_filter="^(FullTraceSummarized|FullTraceCold|FullTraceStages|Flash|Linear)/L:$len/" "${bench_args[@]}" \
    --benchmark_out="$out/ours_$len.json" >/dev/null 2>&1
  # The ratios' pair: our FullTrace (and the GEMM rate, for the floor) and torch's forward in
  # alternating rounds, so that both see the same state of the machine (bench/torch_peer.py).
  "${priority[@]}" "$python" bench/torch_peer.py --lengths "$len" --runs 3 --rounds "$reps" \
    --alternate "$bench" --ours-out "$out/ours_full_$len" >"$out/torch_$len.json"
  # Forward + backward (issue 13) at the lengths gradient_bench.cpp registers: ours and torch's
  # in alternating rounds as well (ours to ours_fb_<L>_<round>.json).
  if [ "$len" = 128 ] || [ "$len" = 512 ]; then
    "${priority[@]}" "$bench" --benchmark_filter="^ForwardBackwardStages/L:$len/" "${bench_args[@]}" \
      --benchmark_out="$out/ours_backward_$len.json" >/dev/null 2>&1
    "${priority[@]}" "$python" bench/torch_peer.py --backward --lengths "$len" --runs 3 --rounds "$reps" \
      --alternate "$bench" --ours-out "$out/ours_fb_$len" >"$out/torch_backward_$len.json"
  fi
done
"${priority[@]}" "$bench" --benchmark_filter='^(Incremental|Seed000|TrainingStep|FirstTouch)/' "${bench_args[@]}" --benchmark_out="$out/other.json" >/dev/null 2>&1

# A fresh process per run (what a user who opens a file sees): our compute_ms from
# `attention-lab trace --summary` on the peer's shape, and torch's first forward.
peer_session() {  # peer_session <L>: the peer's shape as a session file, seeded random numbers
  local w='"std": 0.0442' b='"std": 0.1'
  cat <<JSON
{"format": "attention-lab/session", "version": 1,
 "config": {"mode": "projection", "attention": "self", "d_model": 512, "num_heads": 8, "bias": true, "scale": "sqrt_dk"},
 "x": {"random": {"shape": [1, $1, 512], "seed": 1, "std": 1.0}},
 "weights": {"layout": "math",
  "w_q": {"random": {"shape": [512, 512], "seed": 2, $w}}, "w_k": {"random": {"shape": [512, 512], "seed": 3, $w}},
  "w_v": {"random": {"shape": [512, 512], "seed": 4, $w}}, "w_o": {"random": {"shape": [512, 512], "seed": 5, $w}},
  "b_q": {"random": {"shape": [512], "seed": 6, $b}}, "b_k": {"random": {"shape": [512], "seed": 7, $b}},
  "b_v": {"random": {"shape": [512], "seed": 8, $b}}, "b_o": {"random": {"shape": [512], "seed": 9, $b}}}}
JSON
}
for len in "${length_list[@]}"; do
  peer_session "$len" >"$out/peer-$len.json"
  for _ in $(seq "$cold_runs"); do
    "${priority[@]}" "$app" trace "$out/peer-$len.json" --summary | sed -n "s/^compute_ms: /ours $len /p"
    "${priority[@]}" "$python" bench/torch_peer.py --cold --lengths "$len" | sed "s/^/torch /"
  done
done >"$out/cold.txt"

# compute_ms as the app reports it (one process per run: includes cold caches, as a learner sees it).
for preset in default seed-003-example seed-000-usage; do
  for _ in 1 2 3; do
    "${priority[@]}" "$app" trace "$preset" --summary | sed -n "s/^compute_ms: /$preset /p"
  done
done >"$out/presets.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw results: $out"
echo

"$python" bench/report.py "$out" "$lengths"
