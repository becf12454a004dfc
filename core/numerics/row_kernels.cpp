#include "numerics/row_kernels.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <limits>

#include "numerics/packet_exp.hpp"

namespace al::detail {

namespace {

// Eigen's array expressions would peel an unaligned head with the scalar std::exp, which
// would make results depend on addresses: hence packets on unaligned loads throughout.
//
// A row goes by in blocks of 16 floats, each lane of a block one chain of operations: in the
// AVX-512 copy (compiled with its flags, core/CMakeLists.txt) a block is one 16-lane packet, in
// the AVX2 copy two 8-lane ones, so the two copies give the same bits, and a CPU with full-width
// 512-bit units takes the softmax in half the instructions (docs/performance.md, forty-first
// pass: −3 to −13 % of a trace at 2048 and 4096 keys on AMD Zen 5).
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr Index kLanes = Eigen::internal::packet_traits<float>::size;
constexpr Index kBlock = 16;
constexpr int kParts = static_cast<int>(kBlock / kLanes);
static_assert(kParts * kLanes == kBlock, "a block is whole packets");
struct Block {
  Packet part[kParts];
};

// Block whose part k is f(k).
template <typename F>
EIGEN_STRONG_INLINE Block each_part(F f) {
  Block b;
  for (int k = 0; k < kParts; ++k) b.part[k] = f(k);
  return b;
}

EIGEN_STRONG_INLINE Block splat(float value) {
  return each_part([&](int) { return Eigen::internal::pset1<Packet>(value); });
}

EIGEN_STRONG_INLINE Block load(const float* in) {
  return each_part([&](int k) { return Eigen::internal::ploadu<Packet>(in + k * kLanes); });
}

EIGEN_STRONG_INLINE void store(float* out, const Block& b) {
  for (int k = 0; k < kParts; ++k) Eigen::internal::pstoreu(out + k * kLanes, b.part[k]);
}

// The last n < kBlock values of a row, padded with `pad`.
Block load_tail(const float* in, Index n, float pad) {
  float tail[kBlock];
  std::fill(tail, tail + kBlock, pad);
  std::copy(in, in + n, tail);
  return load(tail);
}

EIGEN_STRONG_INLINE Block add(const Block& a, const Block& b) {
  return each_part([&](int k) { return Eigen::internal::padd(a.part[k], b.part[k]); });
}

// NaNs in b are left out, as Eigen's pmax does (std::max's order).
EIGEN_STRONG_INLINE Block lane_max(const Block& a, const Block& b) {
  return each_part([&](int k) { return Eigen::internal::pmax(a.part[k], b.part[k]); });
}

// A block's lanes folded to eight lanes and reduced with Eigen's reduction of eight, as every
// copy does it: the AVX-512 copy's one packet split into the halves that are the AVX2 copy's two.
template <typename Combine, typename Reduce>
float fold(const Block& b, Combine combine, Reduce reduce) {
#ifdef __AVX512F__
  static_assert(kParts == 1 && kLanes == 16, "the AVX-512 copy's block is one packet");
  using Half = Eigen::internal::Packet8f;
  float lanes[kBlock];
  Eigen::internal::pstoreu(lanes, b.part[0]);
  return reduce(combine(Eigen::internal::ploadu<Half>(lanes), Eigen::internal::ploadu<Half>(lanes + 8)));
#else
  Packet p[kParts];
  std::copy(b.part, b.part + kParts, p);
  for (int width = kParts / 2; width >= 1; width /= 2)
    for (int k = 0; k < width; ++k) p[k] = combine(p[k], p[k + width]);
  return reduce(p[0]);
#endif
}

float sum_lanes(const Block& b) {
  using namespace Eigen::internal;
  return fold(b, [](const auto& x, const auto& y) { return padd(x, y); }, [](const auto& x) { return predux(x); });
}

float max_lanes(const Block& b) {
  using namespace Eigen::internal;
  return fold(b, [](const auto& x, const auto& y) { return pmax(x, y); }, [](const auto& x) { return predux_max(x); });
}

}  // namespace

float row_max(const float* in, Index n) {
  const float lowest = -std::numeric_limits<float>::infinity();
  Block acc = splat(lowest);
  Index j = 0;
  for (; j + kBlock <= n; j += kBlock) acc = lane_max(acc, load(in + j));
  if (j < n) acc = lane_max(acc, load_tail(in + j, n - j, lowest));
  return max_lanes(acc);
}

float scale_and_mask_row(const float* scores, float scale, float* scaled, const float* attend, float fill,
                         float* masked, Index n) {
  using namespace Eigen::internal;
  const float lowest = -std::numeric_limits<float>::infinity();
  const Packet factor = pset1<Packet>(scale), filler = pset1<Packet>(fill), zero = pset1<Packet>(0.0f);
  Block acc = splat(lowest);
  Index j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    Block v = each_part([&](int k) { return pmul(ploadu<Packet>(scores + j + k * kLanes), factor); });
    store(scaled + j, v);
    if (masked) {
      v = each_part([&](int k) {
        return pselect(pcmp_eq(ploadu<Packet>(attend + j + k * kLanes), zero), filler, v.part[k]);
      });
      store(masked + j, v);
    }
    acc = lane_max(acc, v);
  }
  float tail_max = lowest;
  for (; j < n; ++j) {
    float v = scores[j] * scale;
    scaled[j] = v;
    if (masked) masked[j] = v = attend[j] != 0.0f ? v : fill;
    tail_max = std::max(tail_max, v);
  }
  return std::max(max_lanes(acc), tail_max);
}

double softmax_row(const float* in, float max, float* out, Index n, float* max_out, float* sum_out) {
  using namespace Eigen::internal;
  const float sum = exp_shifted(in, out, n, max);
  // Multiplied by 1/sum, as PyTorch's softmax over the last dimension does (within an ulp of
  // the quotient): a packet division costs 5-10 cycles on an Intel Xeon, and dividing was 6 % of
  // a trace at L = 2048 there (docs/performance.md, thirtieth pass).
  const float reciprocal = 1.0f / sum;
  const Packet factor = pset1<Packet>(reciprocal);
  constexpr Index kChunk = 4 * kBlock;  // summed in float lanes, chunks added in double
  double total = 0;
  Index j = 0;
  while (j + kBlock <= n) {
    Block chunk = splat(0.0f);
    for (const Index end = std::min(n, j + kChunk); j + kBlock <= end; j += kBlock) {
      const Block w = each_part([&](int k) { return pmul(ploadu<Packet>(out + j + k * kLanes), factor); });
      store(out + j, w);
      chunk = add(chunk, w);
    }
    total += static_cast<double>(sum_lanes(chunk));
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
  auto exp_of = [&](const Block& x) {
    return each_part([&](int k) {
      const Packet shifted = psub(x.part[k], shift);
      return pselect(pcmp_lt(shifted, floor), zero, exp_nonpositive(shifted));
    });
  };
  Block sum = splat(0.0f);
  Index j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    const Block e = exp_of(load(in + j));
    store(out + j, e);
    sum = add(sum, e);
  }
  if (j < n) {
    // Padding with -inf adds exp(-inf) = 0 to the sum (or NaN when max = -inf,
    // but then every value of the row is -inf and the row is NaN anyway).
    float tail[kBlock];
    const Block e = exp_of(load_tail(in + j, n - j, -std::numeric_limits<float>::infinity()));
    store(tail, e);
    std::copy(tail, tail + (n - j), out + j);
    sum = add(sum, e);
  }
  return sum_lanes(sum);
}

}  // namespace al::detail
