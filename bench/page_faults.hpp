#pragma once
// Page faults per iteration of a benchmark's timed loop, as a counter (`faults_per_iter`). On a
// VM whose host shadows the page tables each one is a trip to the host (issue 16, forty-fourth
// pass), so a change that moves time also says whether it moved faults, benchmark by benchmark.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

namespace al::bench {

// Minor and major faults of every thread of this process so far.
inline long process_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

// Constructed just before the timed loop; report() just after it.
class PageFaultCounter {
 public:
  PageFaultCounter() : start_(process_page_faults()) {}
  void report(benchmark::State& state) const {
    state.counters["faults_per_iter"] = benchmark::Counter(static_cast<double>(process_page_faults() - start_),
                                                           benchmark::Counter::kAvgIterations);
  }

 private:
  long start_;
};

}  // namespace al::bench
