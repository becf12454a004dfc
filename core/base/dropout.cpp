#include "base/dropout.hpp"

#include "base/random.hpp"

namespace al {

bool dropout_keeps(std::uint64_t seed, double p, Index flat_index) {
  return uniform01(seed, static_cast<std::uint64_t>(flat_index)) >= p;
}

}  // namespace al
