#include "numerics/row_kernels.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <limits>

#include "numerics/packet_exp.hpp"

namespace al::detail {

namespace {

// Eigen's array expressions would peel an unaligned head with the scalar std::exp, which
// would make results depend on addresses: hence packets on unaligned loads throughout.
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr Index kLanes = Eigen::internal::packet_traits<float>::size;

// The last n % kLanes values of a row, padded with `pad`.
Packet load_tail(const float* in, Index n, float pad) {
  float tail[kLanes];
  std::fill(tail, tail + kLanes, pad);
  std::copy(in, in + n, tail);
  return Eigen::internal::ploadu<Packet>(tail);
}

}  // namespace

float row_max(const float* in, Index n) {
  using namespace Eigen::internal;
  const float lowest = -std::numeric_limits<float>::infinity();
  Packet acc = pset1<Packet>(lowest);
  Index j = 0;
  for (; j + kLanes <= n; j += kLanes) acc = pmax(acc, ploadu<Packet>(in + j));
  if (j < n) acc = pmax(acc, load_tail(in + j, n - j, lowest));
  return predux_max(acc);
}

float scale_and_mask_row(const float* scores, float scale, float* scaled, const float* attend, float fill,
                         float* masked, Index n) {
  using namespace Eigen::internal;
  const float lowest = -std::numeric_limits<float>::infinity();
  const Packet factor = pset1<Packet>(scale), filler = pset1<Packet>(fill), zero = pset1<Packet>(0.0f);
  Packet acc = pset1<Packet>(lowest);
  Index j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Packet v = pmul(ploadu<Packet>(scores + j), factor);
    pstoreu(scaled + j, v);
    if (masked) {
      v = pselect(pcmp_eq(ploadu<Packet>(attend + j), zero), filler, v);
      pstoreu(masked + j, v);
    }
    acc = pmax(acc, v);
  }
  float tail_max = lowest;
  for (; j < n; ++j) {
    float v = scores[j] * scale;
    scaled[j] = v;
    if (masked) masked[j] = v = attend[j] != 0.0f ? v : fill;
    tail_max = std::max(tail_max, v);
  }
  return predux_max(pmax(acc, pset1<Packet>(tail_max)));
}

double softmax_row(const float* in, float max, float* out, Index n, float* max_out, float* sum_out) {
  using namespace Eigen::internal;
  const float sum = exp_shifted(in, out, n, max);
  // Multiplied by 1/sum, as PyTorch's softmax over the last dimension does (within an ulp of
  // the quotient): a packet division costs 5-10 cycles on an Intel Xeon, and dividing was 6 % of
  // a trace at L = 2048 there (docs/performance.md, thirtieth pass).
  const float reciprocal = 1.0f / sum;
  const Packet factor = pset1<Packet>(reciprocal);
  constexpr Index kChunk = 8 * kLanes;  // summed in float lanes, chunks added in double
  double total = 0;
  Index j = 0;
  while (j + kLanes <= n) {
    Packet chunk = pset1<Packet>(0.0f);
    for (const Index end = std::min(n, j + kChunk); j + kLanes <= end; j += kLanes) {
      const Packet w = pmul(ploadu<Packet>(out + j), factor);
      pstoreu(out + j, w);
      chunk = padd(chunk, w);
    }
    total += static_cast<double>(predux(chunk));
  }
  for (; j < n; ++j) {
    out[j] *= reciprocal;
    total += static_cast<double>(out[j]);
  }
  *max_out = max;
  *sum_out = sum;
  return total;
}

float exp_shifted(const float* in, float* out, Index n, float max) {
  using namespace Eigen::internal;
  const Packet shift = pset1<Packet>(max), floor = pset1<Packet>(kExpNormalFloor), zero = pset1<Packet>(0.0f);
  // Below the floor exp() is under 1.1e-38, and a masked (-inf) cell must give exactly 0.
  auto exp_of = [&](Packet x) {
    const Packet shifted = psub(x, shift);
    return pselect(pcmp_lt(shifted, floor), zero, exp_nonpositive(shifted));
  };
  Packet sum = zero;
  Index j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Packet e = exp_of(ploadu<Packet>(in + j));
    pstoreu(out + j, e);
    sum = padd(sum, e);
  }
  if (j < n) {
    // Padding with -inf adds exp(-inf) = 0 to the sum (or NaN when max = -inf,
    // but then every value of the row is -inf and the row is NaN anyway).
    float tail[kLanes];
    const Packet e = exp_of(load_tail(in + j, n - j, -std::numeric_limits<float>::infinity()));
    pstoreu(tail, e);
    std::copy(tail, tail + (n - j), out + j);
    sum = padd(sum, e);
  }
  return predux(sum);
}

}  // namespace al::detail
