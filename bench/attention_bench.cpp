// Google Benchmark programs for issue 6. Wall-clock time (UseRealTime) because
// the work runs on an OpenMP team, and the CPU time of the whole process (all
// threads), which a shared, loaded machine inflates less. Run through
// bench/run.sh, which also times the PyTorch peer in the same run and prints the ratios.
//
//   FullTrace/L     every stage kept, B=1, d_model=512, 8 heads, eval (the PyTorch peer's shape)
//   FullTraceSummarized/L  the same plus the views' head means and ranges (what the app computes)
//   FullTraceCold/L the same, with the recycled stage buffers freed after each trace
//                   (every stage on fresh pages, as torch allocates its weights each call)
//   FullTraceStages/L  the same, with the time of each pass from the progress callback
//   Flash/L         FlashAttention: the same output, O(n) extra memory
//   FlashTileSizes  FlashAttention at L=1024 for several query x key tiles
//   Linear/L        linear attention (elu+1) output, for scale
//   GemmRate        the GEMM rate of this machine, for the floor of the full trace
//   FirstTouch      the first touch of fresh stage memory on both threads, for the fresh
//                   process's lower bound (bench/report.py)
//   Incremental/... one edit at L=512 recomputed from the previous trace vs from scratch
//   Seed000/...     seed 000's usage example (B=16, L=100, d=512, h=8, dropout 0.1 training)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "numerics/attention.hpp"
#include "editing/edits.hpp"
#include "numerics/flash_attention.hpp"
#include "numerics/linear_attention.hpp"
#include "io/session_io.hpp"
#include "base/heap_policy.hpp"
#include "base/random.hpp"
#include "base/thread_team.hpp"
#include "numerics/attention_kernels.hpp"
#include "page_faults.hpp"
#include "peer_session.hpp"

namespace {

// Sessions are built once per length: generating 2048x512 normals is not what we time.
const al::Session& cached_session(al::Index len) {
  static std::map<al::Index, al::Session> sessions;
  auto it = sessions.find(len);
  if (it == sessions.end()) it = sessions.emplace(len, al::bench::peer_session(len)).first;
  return it->second;
}

// This process's peak resident memory (VmHWM). Not getrusage's ru_maxrss: across exec it
// keeps the parent's peak, and bench/torch_peer.py (torch loaded: 250 MiB) starts us.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // in kB
  return 0;
}

std::shared_ptr<const al::Trace> compute_or_skip(benchmark::State& state, const al::Session& s,
                                                 const al::ComputeOptions& options = {},
                                                 const al::Session* previous_session = nullptr,
                                                 std::shared_ptr<const al::Trace> previous = nullptr) {
  auto r = al::compute(s, options, previous_session, std::move(previous));
  if (!r) {
    state.SkipWithError(r.error().message.c_str());
    return nullptr;
  }
  return r.value();
}

// One trace before the timed ones, as torch_peer.py runs warm-up forwards: a warm trace finds
// its stages' buffers recycled (FullTraceCold and the fresh process time the first touch). At
// L = 4096 a repetition is a single trace, so without it the first repetition was the cold one.
bool warm_up(benchmark::State& state, const al::Session& s, const al::ComputeOptions& options) {
  return compute_or_skip(state, s, options) != nullptr;
}

void time_full_trace(benchmark::State& state, const al::ComputeOptions& options) {
  const al::Session& s = cached_session(state.range(0));
  if (!warm_up(state, s, options)) return;
  std::shared_ptr<const al::Trace> trace;
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) {
    trace = compute_or_skip(state, s, options);
    if (!trace) return;
    benchmark::DoNotOptimize(trace.get());
    trace.reset();  // free before the next iteration, as the app drops an old trace
  }
  faults.report(state);
  state.counters["trace_MiB"] = static_cast<double>(*al::estimate_trace_bytes(s)) / (1 << 20);
}

// The full trace, with its memory: the bytes its distinct tensors hold (Trace::memory_bytes) and
// how much the process's peak resident memory grew while it was held (bench/report.py sets both
// against the sum of the stage sizes it works out from the shapes).
void FullTrace(benchmark::State& state) {
  time_full_trace(state, {});
  auto trace = compute_or_skip(state, cached_session(state.range(0)));
  if (!trace) return;
  state.counters["trace_memory_MiB"] = static_cast<double>(trace->memory_bytes) / (1 << 20);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

// The same computation keeping none of the (B, h, Lq, Lk) stages (each block's rows in a thread's
// scratch instead): beside FullTrace, what writing those stages costs. Not in bench/run.sh's table.
void FullTraceNoSquareStages(benchmark::State& state) {
  al::ComputeOptions options;
  options.keep = al::StageSet{};
  time_full_trace(state, options);
}

// What the app computes: the full trace plus the views' head means and ranges
// (ComputeOptions::summarize), so its UI thread does not rescan the stages.
void FullTraceSummarized(benchmark::State& state) {
  al::ComputeOptions options;
  options.summarize = true;
  time_full_trace(state, options);
}

// FullTrace without recycling: the stages' pages are faulted in (by the kernels'
// threads, on huge pages unless the host takes free memory back) every time, as a
// first computation or a change of sizes does.
void FullTraceCold(benchmark::State& state) {
  const al::Session& s = cached_session(state.range(0));
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) {
    auto trace = compute_or_skip(state, s);
    if (!trace) return;
    benchmark::DoNotOptimize(trace.get());
    trace.reset();
    al::release_recycled_stage_buffers();
  }
  faults.report(state);
}

// Where compute()'s time goes, from its progress callback: it reports 0 once
// every stage is allocated, exactly 0.2 after the projections and 0.9 after the
// per-head pass, from the calling thread (the last report of a value marks the boundary).
void FullTraceStages(benchmark::State& state) {
  const al::Session& s = cached_session(state.range(0));
  if (!warm_up(state, s, {})) return;
  using Clock = std::chrono::steady_clock;
  double allocation_ms = 0, projection_ms = 0, heads_ms = 0, output_ms = 0;
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) {
    Clock::time_point start = Clock::now(), allocated = start, projected = start, heads_done = start, end = start;
    al::ComputeOptions options;
    options.progress = [&](float f) {
      if (f == 0.0f) allocated = Clock::now();
      if (f == 0.2f) projected = Clock::now();
      if (f == 0.9f) heads_done = Clock::now();
    };
    auto trace = compute_or_skip(state, s, options);
    end = Clock::now();
    if (!trace) return;
    auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    allocation_ms += ms(start, allocated);  // validation, and every stage allocated (or recycled)
    projection_ms += ms(allocated, projected);
    heads_ms += ms(projected, heads_done);
    output_ms += ms(heads_done, end);  // concat and output projection
    trace.reset();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["allocation_ms"] = allocation_ms / n;
  state.counters["projection_ms"] = projection_ms / n;
  state.counters["heads_ms"] = heads_ms / n;
  state.counters["output_ms"] = output_ms / n;
  faults.report(state);
}

void Flash(benchmark::State& state) {
  const al::Session& s = cached_session(state.range(0));
  al::Index extra = 0;
  for (auto _ : state) {
    auto r = al::flash_attention(s);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    extra = r->extra_bytes;
    benchmark::DoNotOptimize(r->output.data.data());
  }
  state.counters["extra_MiB"] = static_cast<double>(extra) / (1 << 20);
}

// The tile sizes at L=1024, to choose FlashTiles' defaults.
void FlashTileSizes(benchmark::State& state) {
  const al::Session& s = cached_session(1024);
  const al::FlashTiles tiles{state.range(0), state.range(1)};
  for (auto _ : state) {
    auto r = al::flash_attention(s, tiles);
    if (!r) return state.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r->output.data.data());
  }
}

void Linear(benchmark::State& state) {
  const al::Session& s = cached_session(state.range(0));
  for (auto _ : state) {
    auto r = al::linear_attention(s, false);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(r->output.data.data());
  }
}

// One cell edited, recomputed from the trace of the session before the edit.
enum class Edit { None, X, WV, WO, Causal };
void Incremental(benchmark::State& state, Edit edit) {
  const al::Index len = 512;
  const al::Session& before = cached_session(len);
  auto previous = compute_or_skip(state, before);
  if (!previous) return;
  al::Session after = before;
  switch (edit) {
    case Edit::None: break;
    case Edit::X: after = al::with_cell(before, al::InputId::X, 0, 0.5f); break;
    case Edit::WV: after = al::with_cell(before, al::InputId::WV, 0, 0.5f); break;
    case Edit::WO: after = al::with_cell(before, al::InputId::WO, 0, 0.5f); break;
    case Edit::Causal: after = al::with_causal(before, true); break;
  }
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) {
    auto trace = edit == Edit::None ? compute_or_skip(state, after)
                                    : compute_or_skip(state, after, {}, &before, previous);
    if (!trace) return;
    benchmark::DoNotOptimize(trace.get());
  }
  faults.report(state);
}

void Seed000(benchmark::State& state, bool flash) {
  static const auto session = al::load_preset("seed-000-usage");
  if (!session) {
    state.SkipWithError(session.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    if (flash) {
      auto r = al::flash_attention(*session);
      if (!r) return state.SkipWithError(r.error().message.c_str());
      benchmark::DoNotOptimize(r->output.data.data());
    } else {
      auto trace = compute_or_skip(state, *session);
      if (!trace) return;
      benchmark::DoNotOptimize(trace.get());
    }
  }
}

// The machine's GEMM rate for the floor of bench/report.py: (rows, 512) · (512, 512) in row
// blocks over the OpenMP team, as the projections run, with the trace's own kernel
// (numerics/panel_gemm.hpp) in the copy the trace uses (AVX2 where the CPU has it). report.py takes the larger of this and OpenBLAS's rate
// (torch.mm in the peer), so the floor is the best GEMM this machine has.
void GemmRate(benchmark::State& state) {
  const al::Index rows = state.range(0), d = al::bench::kDModel;
  const al::Tensor a = al::random_normal({rows, d}, 1, 1.0);
  const al::TensorPtr b = al::make_tensor(al::random_normal({d, d}, 2, 1.0));
  al::Tensor c({rows, d});
  const double gflop = 2.0 * static_cast<double>(rows) * d * d / 1e9;
  // Also the best of calls 3 … 22, as bench/torch_peer.py's gemm_rate measures OpenBLAS's (three
  // warm-up calls, then the best of 20): the floor takes the better of the two rates, so both
  // must be the same statistic. This VM's speed changes within a run: the mean of ours came out
  // 10-15 % under OpenBLAS's best when the best of each was the same (issue 16, seventeenth pass).
  using Clock = std::chrono::steady_clock;
  constexpr int kWarmUpCalls = 3, kBestOfCalls = 20;
  // A run too short for warm-up calls (a very slow machine) takes the best of all it made.
  const int first_counted = state.max_iterations > kWarmUpCalls ? kWarmUpCalls : 0;
  double best_seconds = 0;
  int call = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    al::detail::multiply_rows(a, b, nullptr, c);
    benchmark::DoNotOptimize(c.data.data());
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (call >= first_counted && call < first_counted + kBestOfCalls && (best_seconds == 0 || seconds < best_seconds))
      best_seconds = seconds;
    ++call;
  }
  // GFLOP per iteration, as a rate: GFLOP/s (the mean over every call).
  state.counters["GFLOPs"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  if (best_seconds > 0) state.counters["GFLOPs_best"] = gflop / best_seconds;
}

// What this machine's kernel takes to hand a process fresh memory: 256 MiB allocated as a stage
// is (Tensor::for_overwrite: huge pages where the app uses them), faulted in by the thread team
// as the trace's per-head pass does (fault_in_for_writing, a block at a time), then one store a
// 4 KiB page: where the hypervisor shadows the page tables (a PVM guest), a page's first store from
// user space costs a trip to the host even after the kernel faulted it in, 3-4 us a page, and
// the kernels pay it with their first store (forty-fourth pass). Only that is timed: not the
// stages' own writes, not the free. report.py adds (time / MiB) × the square stages' bytes to
// the GEMM floor: a lower bound for a fresh process that keeps every stage.
void FirstTouch(benchmark::State& state) {
  constexpr al::Index kFloats = al::Index{64} << 20, kTasks = 256, kBlock = kFloats / kTasks;
  const al::TeamScope team(true);
  for (auto _ : state) {
    auto fresh = std::make_unique<al::Tensor>(al::Tensor::for_overwrite({kFloats}));
    float* data = fresh->data.data();
    al::parallel_for(kTasks, true, [&](al::Index task, bool) {
      al::fault_in_for_writing(data + task * kBlock, kBlock);
      for (al::Index i = task * kBlock; i < (task + 1) * kBlock; i += 1024) data[i] = 1.0f;  // a store per 4 KiB
    });
    benchmark::DoNotOptimize(data);
    state.PauseTiming();  // a fresh process frees nothing while it computes
    fresh.reset();
    state.ResumeTiming();
  }
  state.counters["MiB"] = static_cast<double>(kFloats * sizeof(float)) / (1 << 20);  // per iteration
}

void timed(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
}

void lengths(benchmark::internal::Benchmark* b) {
  for (int len : {64, 128, 256, 512, 1024, 2048, 4096}) b->Arg(len);
  b->ArgName("L")->Apply(timed);
}

}  // namespace

BENCHMARK(FullTrace)->Apply(lengths);
BENCHMARK(FullTraceSummarized)->Apply(lengths);
BENCHMARK(FullTraceCold)->Apply(lengths);
BENCHMARK(FullTraceStages)->Apply(lengths);
BENCHMARK(FullTraceNoSquareStages)->Apply(lengths);
BENCHMARK(Flash)->Apply(lengths);
BENCHMARK(FlashTileSizes)
    ->ArgsProduct({{32, 64, 128, 256}, {64, 128, 256, 512, 1024}})
    ->ArgNames({"Tq", "Tk"})
    ->Apply(timed);
BENCHMARK(Linear)->Apply(lengths);
BENCHMARK(GemmRate)->Arg(2048)->ArgName("rows")->Apply(timed);
BENCHMARK(FirstTouch)->Apply(timed);
BENCHMARK_CAPTURE(Incremental, full_recompute, Edit::None)->Apply(timed);
BENCHMARK_CAPTURE(Incremental, edit_x, Edit::X)->Apply(timed);
BENCHMARK_CAPTURE(Incremental, edit_w_v, Edit::WV)->Apply(timed);
BENCHMARK_CAPTURE(Incremental, edit_w_o, Edit::WO)->Apply(timed);
BENCHMARK_CAPTURE(Incremental, edit_mask, Edit::Causal)->Apply(timed);
BENCHMARK_CAPTURE(Seed000, full_trace, false)->Apply(timed);
BENCHMARK_CAPTURE(Seed000, flash, true)->Apply(timed);

// The heap policy of the app's main() (base/heap_policy.hpp), so that what is timed is what the app runs.
int main(int argc, char** argv) {
  al::keep_freed_memory_in_heap();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
