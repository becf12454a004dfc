// The softmax's exp (numerics/packet_exp.hpp) against std::exp in double: within 2 ulp
// over its whole range, exact at 0, and the row kernel sets what lies below the floor, -inf
// and masked cells to exactly 0 while NaN stays NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "numerics/packet_exp.hpp"
#include "numerics/row_kernels.hpp"

using namespace al;

namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kLanes = Eigen::internal::packet_traits<float>::size;

std::vector<float> packet_exp(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i + kLanes <= x.size(); i += kLanes)
    Eigen::internal::pstoreu(out.data() + i, detail::exp_nonpositive(Eigen::internal::ploadu<Packet>(x.data() + i)));
  return out;
}

// |got − exact| in units of the float spacing at the exact value.
double ulps(float got, double exact) {
  const float nearest = static_cast<float>(exact);
  const double spacing = std::nextafter(nearest, std::numeric_limits<float>::infinity()) - nearest;
  return std::fabs(static_cast<double>(got) - exact) / spacing;
}

}  // namespace

TEST_CASE("exp_nonpositive is within 2 ulp of exp over [floor, 0]") {
  std::vector<float> x;
  constexpr int kSteps = 1 << 20;
  for (int i = 0; i <= kSteps; ++i) x.push_back(detail::kExpNormalFloor * static_cast<float>(i) / kSteps);
  // Near every multiple of ln 2 / 2, where the rounding of m switches.
  for (int k = 0; k < 253; ++k)
    for (float d : {-1e-6f, 0.0f, 1e-6f}) {
      const float v = static_cast<float>(-0.5 * std::log(2.0) * k) + d;
      if (v <= 0.0f && v >= detail::kExpNormalFloor) x.push_back(v);
    }
  while (x.size() % kLanes) x.push_back(0.0f);
  const auto got = packet_exp(x);
  double worst = 0;
  float worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = ulps(got[i], std::exp(static_cast<double>(x[i])));
    if (e > worst) worst = e, worst_at = x[i];
  }
  INFO("worst at x = " << worst_at);
  CHECK(worst <= 2.0);
  CHECK(packet_exp(std::vector<float>(kLanes, 0.0f))[0] == 1.0f);  // the row's max weighs exactly 1
}

TEST_CASE("exp_shifted: the floor, -inf and NaN") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // 19 values: more than two packets and a tail, whatever the packet width.
  std::vector<float> in = {3.0f, 2.5f, -inf, 3.0f - 87.6f, 3.0f - 87.7f, -200.0f, 1.0f, 0.0f, -1.0f, 2.0f,
                           -inf, 3.0f, -5.0f, 2.9f, -80.0f, 0.5f, -0.5f, 1.5f, -inf};
  std::vector<float> out(in.size());
  const float sum = detail::exp_shifted(in.data(), out.data(), static_cast<Index>(in.size()), 3.0f);
  double exact_sum = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double shifted = static_cast<double>(in[i]) - 3.0;
    const double exact = shifted < detail::kExpNormalFloor ? 0.0 : std::exp(shifted);
    exact_sum += exact;
    INFO("x − max = " << shifted);
    if (exact == 0.0)
      CHECK(out[i] == 0.0f);
    else
      CHECK(ulps(out[i], exact) <= 2.0);
  }
  CHECK(out[0] == 1.0f);
  CHECK(out[3] > 0.0f);  // 87.6 below the max: a normal float, kept
  CHECK(std::fabs(sum - exact_sum) <= 4e-7 * exact_sum);

  std::vector<float> with_nan = {0.0f, nan, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> nan_out(with_nan.size());
  const float nan_sum = detail::exp_shifted(with_nan.data(), nan_out.data(), 9, 0.0f);
  CHECK(std::isnan(nan_out[1]));
  CHECK(std::isnan(nan_sum));
  CHECK(nan_out[2] == doctest::Approx(std::exp(-1.0)).epsilon(3e-7));
}
