// Seeded random tensors (base/random.hpp): the values a session's "random" entries stand for.
// A preset names a seed, so these numbers must never change: they are checked against values
// worked out in Python from the same formulas (SplitMix64, Box-Muller), and element by element
// against the one-element functions, in tensors large enough to be drawn on both cores.
#include <doctest/doctest.h>

#include <cmath>

#include "base/random.hpp"

using namespace al;

TEST_CASE("splitmix64 gives the reference generator's first outputs from state 0") {
  CHECK(splitmix64(0) == 0xE220A8397B1DCDAFull);
  CHECK(splitmix64(0x9E3779B97F4A7C15ull) == 0x6E789E6AA1B965F4ull);
}

TEST_CASE("random tensors: values fixed by their seed, the same whether drawn on one core or two") {
  constexpr Index kCount = 100000;  // above the size from which both cores draw
  const Tensor normal = random_normal({kCount}, 7, 0.5);
  const Tensor uniform = random_uniform({kCount}, 7, -1.0, 2.0);
  // Worked out in Python: float32(0.5 * sqrt(-2 ln(1 - u(2i))) * cos(2π u(2i + 1))), float32(-1 + 3 u(i)).
  CHECK(normal.data[0] == doctest::Approx(0.0537870787).epsilon(1e-7));
  CHECK(normal.data[1] == doctest::Approx(-0.352819949).epsilon(1e-7));
  CHECK(normal.data[70000] == doctest::Approx(-0.0561251268).epsilon(1e-7));
  CHECK(normal.data[99999] == doctest::Approx(0.944672585).epsilon(1e-7));
  CHECK(uniform.data[0] == doctest::Approx(1.16452456).epsilon(1e-7));
  CHECK(uniform.data[70000] == doctest::Approx(-0.295550287).epsilon(1e-7));
  CHECK(uniform.data[99999] == doctest::Approx(-0.843351305).epsilon(1e-7));

  Index normal_mismatches = 0, uniform_mismatches = 0, outside = 0;
  double sum = 0, sum_squares = 0;
  for (Index i = 0; i < kCount; ++i) {
    const auto counter = static_cast<std::uint64_t>(i);
    normal_mismatches += normal.data[i] != static_cast<float>(0.5 * normal01(7, counter));
    uniform_mismatches += uniform.data[i] != static_cast<float>(-1.0 + 3.0 * uniform01(7, counter));
    outside += uniform.data[i] < -1.0f || uniform.data[i] > 2.0f;
    sum += normal.data[i];
    sum_squares += double(normal.data[i]) * normal.data[i];
  }
  CHECK(normal_mismatches == 0);
  CHECK(uniform_mismatches == 0);
  CHECK(outside == 0);
  // Mean 0 and standard deviation 0.5, within five standard errors.
  const double mean = sum / kCount, sd = std::sqrt(sum_squares / kCount - mean * mean);
  CHECK(std::fabs(mean) < 5 * 0.5 / std::sqrt(double(kCount)));
  CHECK(std::fabs(sd - 0.5) < 5 * 0.5 / std::sqrt(2.0 * kCount));
}
