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

std::optional<StageSet> square_stages_from_names(const std::string& comma_list) {
  StageSet keep;
  size_t start = 0;
  while (start <= comma_list.size()) {
    const size_t end = std::min(comma_list.find(',', start), comma_list.size());
    const auto stage = stage_from_name(comma_list.substr(start, end - start));
    if (!stage || std::find(kSquareStages.begin(), kSquareStages.end(), *stage) == kSquareStages.end())
      return std::nullopt;
    keep.set(static_cast<size_t>(*stage));
    start = end + 1;
  }
  return keep;
}

bool Trace::any_fully_masked() const {
  return std::any_of(fully_masked_rows.begin(), fully_masked_rows.end(),
                     [](unsigned char f) { return f != 0; });
}

void merge_checks(const TraceChecks& part, TraceChecks& into) {
  into.masked_weight_max = std::max(into.masked_weight_max, part.masked_weight_max);
  into.masked_share_max = std::max(into.masked_share_max, part.masked_share_max);
  const double error = part.row_sum_error_max;
  if (std::isnan(error) || error > into.row_sum_error_max) into.row_sum_error_max = error;
}

}  // namespace al
