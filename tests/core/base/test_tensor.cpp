// Tensor's storage (base/tensor.hpp).
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "base/tensor.hpp"

using namespace al;

TEST_CASE("a tensor's floats start on a cache line") {
  for (Index n : {1, 5, 1000, 1 << 20}) {
    CAPTURE(n);
    CHECK(reinterpret_cast<std::uintptr_t>(Tensor({n}).data.data()) % 64 == 0);
    CHECK(reinterpret_cast<std::uintptr_t>(Tensor::for_overwrite({n}).data.data()) % 64 == 0);
  }
}

namespace {

// How many of the pages holding [begin, begin + count) are resident (mincore).
size_t resident_pages(const float* begin, Index count) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(begin + count) + page - 1) & ~(page - 1);
  std::vector<unsigned char> in_core((last - first) / page);
  REQUIRE(mincore(reinterpret_cast<void*>(first), last - first, in_core.data()) == 0);
  size_t resident = 0;
  for (unsigned char c : in_core) resident += c & 1;
  return resident;
}

}  // namespace

TEST_CASE("fault_in_for_writing makes a fresh block resident and changes no value") {
  // 64 MiB: past malloc's mmap threshold, so its pages are new and untouched.
  constexpr Index kCount = Index{16} << 20, kFirst = 1000003, kBlock = 3 * 4096 + 17;  // unaligned
  Tensor fresh = Tensor::for_overwrite({kCount});
  CHECK(resident_pages(fresh.data.data() + kFirst, kBlock) == 0);  // 4 MiB in: nothing wrote there yet
  if (!fault_in_for_writing(fresh.data.data() + kFirst, kBlock)) {
    MESSAGE("this kernel has no MADV_POPULATE_WRITE: the writes fault the pages in");
    return;
  }
  const auto page_floats = static_cast<Index>(sysconf(_SC_PAGESIZE)) / static_cast<Index>(sizeof(float));
  const Index pages = (kFirst + kBlock - 1) / page_floats - kFirst / page_floats + 1;
  CHECK(resident_pages(fresh.data.data() + kFirst, kBlock) == static_cast<size_t>(pages));
  // Past the block, beyond the 2 MiB page it may lie in (for_overwrite asks for huge pages on a desktop).
  CHECK(resident_pages(fresh.data.data() + kFirst + kBlock + (Index{4} << 20) / Index{sizeof(float)}, page_floats) == 0);

  // On written, resident memory it keeps every value, inside the block and around it.
  Tensor written({kBlock + 2 * page_floats});
  for (Index i = 0; i < written.size(); ++i) written.data[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f;
  CHECK(fault_in_for_writing(written.data.data() + page_floats / 2, kBlock));
  Index changed = 0;
  for (Index i = 0; i < written.size(); ++i) changed += written.data[static_cast<size_t>(i)] != static_cast<float>(i) * 0.5f;
  CHECK(changed == 0);
}
