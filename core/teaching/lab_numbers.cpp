#include "teaching/lab_numbers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace al {

std::string cell_value_text(float v, bool compact) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "−∞" : "∞";
  char buffer[32];
  if (std::fabs(v) >= 100.0f || (v != 0.0f && std::fabs(v) < 0.005f && !compact))
    std::snprintf(buffer, sizeof buffer, "%.3g", static_cast<double>(v));
  else
    std::snprintf(buffer, sizeof buffer, compact ? "%.2f" : "%.4f", static_cast<double>(v));
  // A tiny negative value rounds to "-0.00": a learner reads a sign that is not there.
  std::string text = buffer;
  if (text[0] == '-' && text.find_first_not_of("0.", 1) == std::string::npos) text.erase(0, 1);
  return text;
}

std::string rope_base_text(double base) {
  if (base == std::floor(base) && std::fabs(base) < 1e12) return std::to_string(static_cast<long long>(base));
  return lab_number(base);
}

std::string lab_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "−∞" : "∞";
  if (v == 0) return "0.0";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  std::string text = buffer;
  const size_t e = text.find('e');
  if (e == std::string::npos) {
    if (text.find('.') == std::string::npos) text += ".0";
  } else {  // "1e+09" -> "1e9", "2.5e-05" -> "2.5e-5"
    const bool negative_exponent = text[e + 1] == '-';
    const size_t digits = text.find_first_not_of("+-0", e + 1);
    text = text.substr(0, e) + (negative_exponent ? "e-" : "e") + text.substr(digits);
  }
  // A true minus sign, as in "−∞".
  return text[0] == '-' ? "−" + text.substr(1) : text;
}

std::string bytes_text(Index bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (v >= 1024.0 && unit < 3) {
    v /= 1024.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %s", v, units[unit]);
  return buffer;
}

double max_abs_difference(const float* a, const float* b, Index n) {
  double largest = 0.0;
  for (Index i = 0; i < n; ++i) {
    const bool nan_a = std::isnan(a[i]), nan_b = std::isnan(b[i]);
    if (nan_a && nan_b) continue;
    if (nan_a || nan_b) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  }
  return largest;
}

Tensor difference(const Tensor& a, const Tensor& b) {
  Tensor out(a.shape);
  const Index n = std::min(a.size(), b.size());
  for (Index i = 0; i < n; ++i)
    out.data[i] = std::isnan(a.data[i]) && std::isnan(b.data[i]) ? 0.0f : a.data[i] - b.data[i];
  return out;
}

FlashMemory flash_memory(Index len_q, Index len_kv, Index d_k, const FlashTiles& tiles) {
  constexpr Index kFloat = sizeof(float);
  FlashMemory m;
  m.output_bytes = kFloat * len_q * d_k;
  m.statistics_bytes = kFloat * 2 * len_q;
  // A tile never outgrows the sequence it cuts.
  m.tile_bytes = kFloat * std::min(tiles.queries, len_q) * std::min(tiles.keys, len_kv);
  m.held_bytes = m.output_bytes + m.statistics_bytes + m.tile_bytes;
  m.full_matrix_bytes = kFloat * len_q * len_kv;
  return m;
}

namespace {
Dims one_head(Index n, Index d_k) {
  Dims d;
  d.batch = 1;
  d.heads = 1;
  d.len_q = d.len_kv = n;
  d.d_k = d.d_model = d_k;
  return d;
}
}  // namespace

CostCurve cost_curve(Index d_k, Index n_max, int points) {
  CostCurve curve;
  points = std::max(points, 2);
  for (int i = 1; i <= points; ++i) {
    const Index n = std::max<Index>(1, n_max * i / points);
    const AttentionCosts costs = attention_costs(one_head(n, d_k));
    curve.lengths.push_back(n);
    curve.softmax_multiply_adds.push_back(static_cast<double>(costs.softmax.multiply_adds));
    curve.linear_multiply_adds.push_back(static_cast<double>(costs.linear.multiply_adds));
  }
  return curve;
}

Index linear_break_even_length(Index d_k) {
  // Softmax grows like n², linear like n, so the first n where linear is
  // cheaper is found by doubling and then bisecting.
  if (d_k <= 0) return 0;  // no work on either side: never cheaper
  auto linear_cheaper = [&](Index n) {
    const AttentionCosts c = attention_costs(one_head(n, d_k));
    return c.linear.multiply_adds < c.softmax.multiply_adds;
  };
  Index high = 1;
  while (!linear_cheaper(high)) high *= 2;
  Index low = high / 2;  // not cheaper at low (or low == 0)
  while (high - low > 1) {
    const Index mid = (low + high) / 2;
    (linear_cheaper(mid) ? high : low) = mid;
  }
  return high;
}

}  // namespace al
