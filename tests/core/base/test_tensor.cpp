// Tensor's storage (base/tensor.hpp).
#include <doctest/doctest.h>

#include <cstdint>

#include "base/tensor.hpp"

using namespace al;

TEST_CASE("a tensor's floats start on a cache line") {
  for (Index n : {1, 5, 1000, 1 << 20}) {
    CAPTURE(n);
    CHECK(reinterpret_cast<std::uintptr_t>(Tensor({n}).data.data()) % 64 == 0);
    CHECK(reinterpret_cast<std::uintptr_t>(Tensor::for_overwrite({n}).data.data()) % 64 == 0);
  }
}
