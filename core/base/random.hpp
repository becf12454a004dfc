#pragma once
// Deterministic, platform-independent random numbers (std::normal_distribution
// differs between standard libraries, so presets would not reproduce).
#include <cstdint>

#include "base/tensor.hpp"

namespace al {

std::uint64_t splitmix64(std::uint64_t x);
// Uniform in [0, 1) from a counter, so any element can be drawn independently.
double uniform01(std::uint64_t seed, std::uint64_t counter);
// Standard normal (Box-Muller over two counter draws).
double normal01(std::uint64_t seed, std::uint64_t counter);

Tensor random_normal(std::vector<Index> shape, std::uint64_t seed, double stddev = 1.0);
Tensor random_uniform(std::vector<Index> shape, std::uint64_t seed, double low, double high);

}  // namespace al
