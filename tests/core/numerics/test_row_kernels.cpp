// The softmax's row kernels (numerics/row_kernels.hpp) against explicit loops: the scaled and
// masked rows bit for bit, the row's largest value as a plain loop finds it (NaN left out),
// at every length around the packet and block widths, and a softmax row against exp in double.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "numerics/row_kernels.hpp"

using namespace al;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Scores with the odd values a session can produce (±inf from huge inputs, NaN from inf − inf)
// and an attend row of 1, 0, −0 and NaN.
struct Row {
  std::vector<float> scores, attend;
};
Row random_row(Index n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-30.0f, 30.0f);
  std::uniform_int_distribution<int> pick(0, 19);
  Row r;
  for (Index j = 0; j < n; ++j) {
    const int k = pick(rng);
    r.scores.push_back(k == 0 ? kInf : k == 1 ? -kInf : k == 2 ? std::nanf("") : value(rng));
    const int a = pick(rng);
    r.attend.push_back(a < 4 ? 0.0f : a == 4 ? -0.0f : a == 5 ? std::nanf("") : 1.0f);
  }
  return r;
}

// What the softmax may take as the row's max: the largest non-NaN value, -inf for none.
float largest(const std::vector<float>& row) {
  float best = -kInf;
  for (float v : row)
    if (v > best) best = v;
  return best;
}

}  // namespace

TEST_CASE("scale_and_mask_row: the stages of a plain loop and the largest value read") {
  std::mt19937 rng(7);
  const float scale = 0.125f, fill = -1e9f;
  for (Index n = 0; n <= 41; ++n)
    for (bool with_mask : {false, true}) {
      CAPTURE(n);
      CAPTURE(with_mask);
      const Row r = random_row(n, rng);
      std::vector<float> scaled(static_cast<size_t>(n)), masked(static_cast<size_t>(n));
      const float max = detail::scale_and_mask_row(r.scores.data(), scale, scaled.data(),
                                                   with_mask ? r.attend.data() : nullptr, fill,
                                                   with_mask ? masked.data() : nullptr, n);
      std::vector<float> expected_scaled, expected_masked;
      for (Index j = 0; j < n; ++j) {
        const float v = r.scores[static_cast<size_t>(j)] * scale;
        expected_scaled.push_back(v);
        expected_masked.push_back(r.attend[static_cast<size_t>(j)] != 0.0f ? v : fill);
      }
      bool scaled_equal = true, masked_equal = true;
      for (size_t j = 0; j < static_cast<size_t>(n); ++j) {
        scaled_equal = scaled_equal && same_bits(scaled[j], expected_scaled[j]);
        masked_equal = masked_equal && (!with_mask || same_bits(masked[j], expected_masked[j]));
      }
      CHECK(scaled_equal);
      CHECK(masked_equal);
      const std::vector<float>& read = with_mask ? expected_masked : expected_scaled;
      CHECK(same_bits(max, largest(read)));
      CHECK(same_bits(max, detail::row_max(read.data(), n)));
    }
}

TEST_CASE("softmax_row with the given max: exp(x − max) / Σ in double, and the sum it reports") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-20.0f, 20.0f);
  for (Index n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1000}) {
    CAPTURE(n);
    std::vector<float> in;
    for (Index j = 0; j < n; ++j) in.push_back(j % 5 == 3 ? -kInf : value(rng));
    in[0] = 3.0f;  // at least one finite value
    const float max = largest(in);
    std::vector<float> out(static_cast<size_t>(n));
    float kept_max = 0, kept_sum = 0;
    const double total = detail::softmax_row(in.data(), max, out.data(), n, &kept_max, &kept_sum);
    double sum = 0;
    for (float v : in) sum += std::exp(static_cast<double>(v) - max);
    double reported = 0, worst = 0;
    for (size_t j = 0; j < in.size(); ++j) {
      const double exact = std::exp(static_cast<double>(in[j]) - max) / sum;
      worst = std::max(worst, std::fabs(out[j] - exact) / std::max(exact, 1e-30));
      reported += out[j];
      if (std::isinf(in[j])) CHECK(out[j] == 0.0f);
    }
    CHECK(worst < 1e-5);
    CHECK(total == doctest::Approx(reported).epsilon(1e-6));  // summed in float lanes, chunks in double
    CHECK(kept_max == max);
    CHECK(kept_sum == doctest::Approx(sum).epsilon(1e-5));
  }
}
