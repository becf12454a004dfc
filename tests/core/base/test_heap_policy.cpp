// keep_freed_memory_in_heap (base/heap_policy.hpp): blocks a computation frees come back to the
// next one as resident pages, not fresh ones, whatever the process freed before. The faults are
// counted by the kernel.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "base/heap_policy.hpp"
#include "base/tensor.hpp"

using namespace al;

#if !defined(__SANITIZE_ADDRESS__)
namespace {

long thread_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// One edit's worth of scratch, as a trace at L = 512 allocates it: blocks of 256 KiB to 8 MiB,
// 34 MiB in all, each written whole, then all freed. Returns the page faults it took.
long allocate_write_free() {
  const long before = thread_page_faults();
  std::vector<std::unique_ptr<float[]>> blocks;
  float sum = 0;
  for (Index floats : {Index{2} << 20, Index{2} << 20, Index{1} << 16, Index{3} << 18, Index{3} << 18, Index{3} << 18,
                       Index{3} << 18, Index{3} << 18, Index{3} << 18, Index{1} << 16, Index{1} << 16}) {
    blocks.emplace_back(new float[static_cast<size_t>(floats)]);
    std::fill_n(blocks.back().get(), floats, 1.0f);
    sum += blocks.back()[floats - 1];
  }
  CHECK(sum == 11.0f);
  blocks.clear();
  return thread_page_faults() - before;
}

}  // namespace
#endif

TEST_CASE("keep_freed_memory_in_heap: what one computation frees, the next one writes without page faults") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("AddressSanitizer's allocator keeps its own heap: nothing to check");
#else
  keep_freed_memory_in_heap();
  keep_freed_memory_in_heap();  // idempotent
  (void)allocate_write_free();  // the first round may grow the heap: up to 8 700 faults of 4 KiB pages
  // Later rounds find the same blocks resident. glibc's own moving thresholds handed the 34 MiB
  // back to the kernel at every round in a fresh process (8 700 faults a round). A few faults for
  // the allocator's bookkeeping are allowed.
  for (int round = 0; round < 3; ++round) CHECK(allocate_write_free() < 32);
#endif
}
