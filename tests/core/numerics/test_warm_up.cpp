// warm_up (numerics/attention.hpp): what is computed after it is what was computed before; it
// stops growing the heap as soon as the session has loaded; and what it leaves behind is
// resident heap, so the first trace's buffers are written without page faults (counted by
// the kernel, not by us).
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <memory>

#include "io/session_io.hpp"
#include "numerics/attention.hpp"

using namespace al;

namespace {

std::shared_ptr<const Trace> computed(const Session& s) {
  auto r = compute(s, {});
  REQUIRE(r.ok());
  return *r;
}

#if !defined(__SANITIZE_ADDRESS__)  // its one user is off under AddressSanitizer (below)
// Minor page faults of the calling thread so far.
long thread_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}
#endif

}  // namespace

TEST_CASE("warm_up: leaves no trace behind; what is computed after it is what was computed before") {
  auto session = load_preset("causal-decoder");
  REQUIRE(session.ok());
  auto before = computed(*session);
  warm_up();
  warm_up([] { return true; });
  auto after = computed(*session);
  for (Stage s : kAllStages)
    if (before->has(s)) CHECK(after->stage(s).data == before->stage(s).data);
}

TEST_CASE("warm_up asks whether the session is still loading, and stops at the first no") {
  int asked = 0;
  warm_up([&] { return ++asked <= 3; });
  CHECK(asked == 4);  // three chunks while loading, then one question answered no, then nothing

  asked = 0;
  warm_up([&] {
    ++asked;
    return false;
  });
  CHECK(asked == 1);
}

TEST_CASE("after warm_up, a first trace's packed weights and stages are written on resident pages") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("AddressSanitizer's allocator keeps its own heap: nothing to check");
#else
  warm_up([] { return true; });
  // Four packed (512, 512) weights (4 MiB, as from 512 rows on) and the stages of L = 64 (1.1 MiB),
  // in pieces the size of those of a trace.
  const long before = thread_page_faults();
  std::vector<std::unique_ptr<float[]>> buffers;
  for (Index floats : {Index{1} << 18, Index{1} << 18, Index{1} << 18, Index{1} << 18, Index{1} << 15, Index{1} << 15,
                       Index{1} << 15, Index{1} << 15, Index{1} << 15, Index{1} << 15, Index{1} << 15, Index{1} << 15,
                       Index{1} << 15}) {
    buffers.emplace_back(new float[static_cast<size_t>(floats)]);
    std::fill_n(buffers.back().get(), floats, 1.0f);
  }
  // Fresh pages would be 1312 faults (5.1 MiB of 4 KiB pages); a few for the allocator's own
  // bookkeeping are allowed.
  CHECK(thread_page_faults() - before < 32);
#endif
}
