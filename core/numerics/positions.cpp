#include "numerics/positions.hpp"

#include <cmath>
#include <vector>

namespace al {

double sinusoidal_position(Index position, Index dim, Index d_model) {
  const Index i = dim / 2;  // the frequency index: dims 2i and 2i+1 share one
  const double angle =
      static_cast<double>(position) / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d_model));
  return dim % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

void add_sinusoidal_positions(const Tensor& x, Tensor& out) {
  const Index d = x.dim(-1), length = x.dim(-2), batch = x.size() / (length * d);
  std::vector<float> table(static_cast<size_t>(length * d));  // (L, d_model), the same for every batch item
  for (Index p = 0; p < length; ++p)
    for (Index k = 0; k < d; ++k) table[static_cast<size_t>(p * d + k)] = static_cast<float>(sinusoidal_position(p, k, d));
  for (Index b = 0; b < batch; ++b)
    for (Index r = 0; r < length * d; ++r) out.data[static_cast<size_t>(b * length * d + r)] =
        x.data[static_cast<size_t>(b * length * d + r)] + table[static_cast<size_t>(r)];
}

double rope_angle(Index position, Index pair, Index d_k, double base) {
  return static_cast<double>(position) * std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(d_k));
}

std::pair<Index, Index> rope_dimensions(Index pair, Index d_k, RopeStyle style) {
  return style == RopeStyle::Half ? std::pair<Index, Index>{pair, pair + d_k / 2}
                                  : std::pair<Index, Index>{2 * pair, 2 * pair + 1};
}

void rotate_by_position(const Tensor& in, const PositionalSpec& spec, Tensor& out, Index first_position,
                        bool inverse) {
  const Index d_k = in.dim(-1), length = in.dim(-2), matrices = in.size() / (length * d_k);
  const Index pairs = d_k / 2;
  // cos and sin per (position, pair), computed once in double: (L, d_k/2) each.
  std::vector<float> cosines(static_cast<size_t>(length * pairs)), sines(cosines.size());
  for (Index p = 0; p < length; ++p)
    for (Index k = 0; k < pairs; ++k) {
      const double theta = rope_angle(first_position + p, k, d_k, spec.rope_base);
      cosines[static_cast<size_t>(p * pairs + k)] = static_cast<float>(std::cos(theta));
      sines[static_cast<size_t>(p * pairs + k)] = static_cast<float>(inverse ? -std::sin(theta) : std::sin(theta));
    }
  for (Index m = 0; m < matrices; ++m)
    for (Index p = 0; p < length; ++p) {
      const float* x = in.data.data() + (m * length + p) * d_k;
      float* y = out.data.data() + (m * length + p) * d_k;
      for (Index k = 0; k < pairs; ++k) {
        const auto [a, b] = rope_dimensions(k, d_k, spec.rope_style);
        const float c = cosines[static_cast<size_t>(p * pairs + k)], s = sines[static_cast<size_t>(p * pairs + k)];
        const float xa = x[a], xb = x[b];
        y[a] = xa * c - xb * s;
        y[b] = xb * c + xa * s;
      }
    }
}

}  // namespace al
