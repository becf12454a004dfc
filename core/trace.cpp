#include "trace.hpp"

#include <algorithm>

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

}  // namespace al
