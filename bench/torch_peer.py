#!/usr/bin/python3
"""The PyTorch peer of bench/attention_bench's FullTrace: nn.MultiheadAttention
forward, E=512, 8 heads, batch 1, eval, need_weights=True with per-head weights
(average_attn_weights=False, so it too keeps a (1, 8, L, L) tensor), no_grad,
two threads. Prints one JSON object per length: the median and best wall time
of the runs, and the median process CPU time (all threads) of a run.

With --backward, the peer of ForwardBackward (issue 13): the same forward in
training mode (dropout 0) with x and every parameter requiring grad, then
backward() of sum(output * G): autograd's gradients of x and every weight.

With --cold, the first forward of a fresh process.

With --alternate BENCH, rounds of: our FullTrace and GemmRate (one repetition, a run of
bench/attention_bench BENCH, written to --ours-out PREFIX_<round>.json), then torch's runs
and OpenBLAS's sgemm rate (bench/report.py's GEMM floor takes the better of it and ours);
with --backward too, rounds of our ForwardBackward and torch's forward + backward().
Both sides then see the same state of the machine: this VM runs at one of two speeds about
25 % apart for seconds at a time, so timing ours first and torch a few seconds later could
compare one speed with the other (docs/performance.md, issue 16's sixth pass).

Run with Debian's /usr/bin/python3 (python3-torch); torch is a fair peer only
when libblas.so.3 is OpenBLAS (bench/run.sh checks).
"""
import argparse
import json
import statistics
import subprocess
import time

import torch


def time_forward(mha, x, runs, warmup):
    with torch.no_grad():
        for _ in range(warmup):
            mha(x, x, x, need_weights=True, average_attn_weights=False)
        times, cpu_times = [], []
        for _ in range(runs):
            start, cpu_start = time.perf_counter(), time.process_time()
            out, weights = mha(x, x, x, need_weights=True, average_attn_weights=False)
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu_start) * 1e3)
    assert weights.shape == (1, 8, x.shape[1], x.shape[1])
    return times, cpu_times


def time_forward_backward(mha, x, runs, warmup):
    mha.train()
    x = x.clone().requires_grad_(True)
    upstream = torch.randn(x.shape)
    times, cpu_times = [], []
    for run in range(warmup + runs):
        mha.zero_grad(set_to_none=True)
        x.grad = None
        start, cpu_start = time.perf_counter(), time.process_time()
        out, weights = mha(x, x, x, need_weights=True, average_attn_weights=False)
        (out * upstream).sum().backward()
        if run >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu_start) * 1e3)
    assert x.grad is not None and mha.in_proj_weight.grad is not None
    return times, cpu_times


def first_call(mha, length):
    """The first forward of this fresh process (what a user opening a file waits for), after
    torch, the module and the input exist."""
    x = torch.randn(1, length, 512)
    with torch.no_grad():
        start = time.perf_counter()
        mha(x, x, x, need_weights=True, average_attn_weights=False)
        return (time.perf_counter() - start) * 1e3


def alternate(mha, length, args):
    """Our FullTrace and GemmRate, then torch's forward and sgemm, round after round (see above);
    with --backward, our ForwardBackward, then torch's forward + backward()."""
    x = torch.randn(1, length, 512)
    ours = f"ForwardBackward/L:{length}" if args.backward else f"(FullTrace/L:{length}|GemmRate/rows:2048)"
    timer = time_forward_backward if args.backward else time_forward
    times, cpu_times, gemm, round_medians = [], [], [], []
    for round_ in range(args.rounds):
        subprocess.run([args.alternate, f"--benchmark_filter=^{ours}/",
                        "--benchmark_repetitions=1", "--benchmark_out_format=json",
                        f"--benchmark_out={args.ours_out}_{round_}.json"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        # As many runs as fill about half a second (at least --runs), as Google Benchmark times ours.
        round_times, round_cpu = timer(mha, x, args.runs, args.warmup if round_ == 0 else 0)
        if sum(round_times) < 500:
            more, more_cpu = timer(mha, x, int(500 / statistics.median(round_times)), 0)
            round_times, round_cpu = round_times + more, round_cpu + more_cpu
        times += round_times
        round_medians.append(statistics.median(round_times))
        cpu_times += round_cpu
        if not args.backward:
            gemm.append(gemm_rate(2048, 20))
    return times, cpu_times, gemm, round_medians


def gemm_rate(rows, runs):
    """OpenBLAS's sgemm rate (GFLOP/s) for (rows, 512) . (512, 512) into a kept output, best of runs."""
    a, b = torch.randn(rows, 512), torch.randn(512, 512)
    out = torch.empty(rows, 512)
    for _ in range(3):
        torch.mm(a, b, out=out)
    best = min(timed(lambda: torch.mm(a, b, out=out)) for _ in range(runs))
    return 2.0 * rows * 512 * 512 / best / 1e9


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", default="128,512,1024,2048")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backward", action="store_true", help="time forward + backward() instead")
    parser.add_argument("--cold", action="store_true", help="time only the first forward of this process (one length)")
    parser.add_argument("--alternate", metavar="BENCH", help="alternate with our attention_bench (one length)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --alternate; --runs is the least per round")
    parser.add_argument("--ours-out", help="--alternate: our results go to OURS_OUT_<round>.json")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(512, 8, batch_first=True).eval()
    if args.cold:
        length = int(args.lengths.split(",")[0])
        print(json.dumps({"L": length, "first_call_ms": first_call(mha, length)}))
        return
    if args.alternate:
        length = int(args.lengths.split(",")[0])
        times, cpu_times, gemm, round_medians = alternate(mha, length, args)
        print(json.dumps({"L": length, "median_ms": statistics.median(times), "min_ms": min(times),
                          "cpu_ms": statistics.median(cpu_times), "round_gemm_gflops": gemm,
                          "round_medians_ms": round_medians,
                          "runs": len(times), "threads": torch.get_num_threads()}))
        return
    for length in (int(v) for v in args.lengths.split(",")):
        x = torch.randn(1, length, 512)
        timer = time_forward_backward if args.backward else time_forward
        times, cpu_times = timer(mha, x, args.runs, args.warmup)
        print(json.dumps({"L": length, "median_ms": statistics.median(times), "min_ms": min(times),
                          "cpu_ms": statistics.median(cpu_times),
                          "runs": args.runs, "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
