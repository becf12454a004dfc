// Google Benchmark programs for issue 13 (registered into attention_bench's main).
//
//   ForwardBackward/L      the full trace, then every input's and weight's gradient
//                          (BackwardOptions::keep_stages off), B=1, d_model=512,
//                          8 heads: the peer of PyTorch's nn.MultiheadAttention
//                          forward + backward() (bench/torch_peer.py --backward)
//   ForwardBackwardStages/L  the same, also keeping every stage's gradient (what
//                          `attention-lab grad` and the gradient view need)
//   TrainingStep/task      one Adam step of the training lab's model at its default
//                          size (B=64, L=8, d_model=32, 2 heads), target <= 5 ms
#include <benchmark/benchmark.h>

#include "numerics/attention.hpp"
#include "numerics/backward.hpp"
#include "base/random.hpp"
#include "training/training.hpp"
#include "page_faults.hpp"
#include "peer_session.hpp"

namespace {

using al::bench::kDModel;
using al::bench::peer_session;

void time_forward_backward(benchmark::State& state, bool keep_stages) {
  const al::Session s = peer_session(state.range(0));
  const al::Tensor upstream = al::random_normal({1, state.range(0), kDModel}, 10, 1.0);
  al::BackwardOptions options;
  options.keep_stages = keep_stages;
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) {
    auto trace = al::compute(s);
    if (!trace) return state.SkipWithError(trace.error().message.c_str());
    auto grads = al::backward(s, **trace, upstream, options);
    if (!grads) return state.SkipWithError(grads.error().message.c_str());
    benchmark::DoNotOptimize(grads->inputs.data());
  }
  faults.report(state);
}

void ForwardBackward(benchmark::State& state) { time_forward_backward(state, false); }
void ForwardBackwardStages(benchmark::State& state) { time_forward_backward(state, true); }

void gradient_lengths(benchmark::internal::Benchmark* b) {
  for (int len : {128, 512}) b->Arg(len);
  b->ArgName("L")->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
}

void TrainingStep(benchmark::State& state, al::ToyTask task) {
  al::Trainer trainer(al::default_training(task));
  const al::bench::PageFaultCounter faults;
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step());
  faults.report(state);
}

}  // namespace

BENCHMARK_CAPTURE(TrainingStep, previous_token, al::ToyTask::PreviousToken)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(TrainingStep, duplicate, al::ToyTask::Duplicate)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(ForwardBackward)->Apply(gradient_lengths);
BENCHMARK(ForwardBackwardStages)->Apply(gradient_lengths);
