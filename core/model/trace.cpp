#include "model/trace.hpp"

#include <algorithm>
#include <cmath>

namespace al {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Q: return "q";
    case Stage::K: return "k";
    case Stage::V: return "v";
    case Stage::Scores: return "scores";
    case Stage::Scaled: return "scaled";
    case Stage::Masked: return "masked";
    case Stage::Weights: return "weights";
    case Stage::Dropped: return "dropped";
    case Stage::Context: return "context";
    case Stage::Concat: return "concat";
    case Stage::Output: return "output";
    case Stage::XPos: return "x_pos";
    case Stage::XKvPos: return "x_kv_pos";
    case Stage::QRot: return "q_rot";
    case Stage::KRot: return "k_rot";
    case Stage::Biased: return "biased";
  }
  return "?";
}

std::optional<Stage> stage_from_name(const std::string& name) {
  for (Stage s : kAllStages)
    if (name == stage_name(s)) return s;
  return std::nullopt;
}

bool Trace::any_fully_masked() const {
  return std::any_of(fully_masked_rows.begin(), fully_masked_rows.end(),
                     [](unsigned char f) { return f != 0; });
}

TraceChecks check_weights(const Tensor& weights, const Tensor* mask,
                          const std::vector<unsigned char>& fully_masked) {
  TraceChecks checks;
  if (weights.rank() != 4) return checks;
  const Index batch = weights.shape[0], heads = weights.shape[1];
  const Index len_q = weights.shape[2], len_kv = weights.shape[3];
  for (Index b = 0; b < batch; ++b)
    for (Index i = 0; i < len_q; ++i) {
      const size_t row = static_cast<size_t>(b * len_q + i);
      if (row < fully_masked.size() && fully_masked[row]) continue;
      const float* keep = mask ? mask->data.data() + (b * len_q + i) * len_kv : nullptr;  // (Lk)
      for (Index h = 0; h < heads; ++h) {
        const float* w = weights.data.data() + ((b * heads + h) * len_q + i) * len_kv;  // (Lk)
        double sum = 0;
        for (Index j = 0; j < len_kv; ++j) {
          sum += w[j];
          if (keep && keep[j] < 0.5f && w[j] > checks.masked_weight_max) checks.masked_weight_max = w[j];
        }
        const double error = std::fabs(sum - 1.0);
        // A NaN row sum stays NaN: a comparison would drop it.
        if (std::isnan(error) || error > checks.row_sum_error_max) checks.row_sum_error_max = error;
      }
    }
  return checks;
}

}  // namespace al
