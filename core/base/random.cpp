#include "base/random.hpp"

#include <cmath>

namespace al {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double uniform01(std::uint64_t seed, std::uint64_t counter) {
  // Two rounds so that nearby seeds and nearby counters decorrelate.
  const std::uint64_t bits = splitmix64(splitmix64(seed) ^ counter);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // 53 random mantissa bits
}

double normal01(std::uint64_t seed, std::uint64_t counter) {
  const double u1 = 1.0 - uniform01(seed, 2 * counter);  // (0, 1]: log is finite
  const double u2 = uniform01(seed, 2 * counter + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Each element is drawn from its own counter, so both cores can draw: the same values, half
// the wait (a session's random X and weights at L = 2048 took 60 ms to load on one).
constexpr Index kDrawInParallelFrom = Index{1} << 16;

Tensor random_normal(std::vector<Index> shape, std::uint64_t seed, double stddev) {
  Tensor t(std::move(shape));
#pragma omp parallel for if (t.size() >= kDrawInParallelFrom)
  for (Index i = 0; i < t.size(); ++i)
    t.data[static_cast<size_t>(i)] = static_cast<float>(stddev * normal01(seed, static_cast<std::uint64_t>(i)));
  return t;
}

Tensor random_uniform(std::vector<Index> shape, std::uint64_t seed, double low, double high) {
  Tensor t(std::move(shape));
#pragma omp parallel for if (t.size() >= kDrawInParallelFrom)
  for (Index i = 0; i < t.size(); ++i)
    t.data[static_cast<size_t>(i)] =
        static_cast<float>(low + (high - low) * uniform01(seed, static_cast<std::uint64_t>(i)));
  return t;
}

}  // namespace al
