#include "state/view_stages.hpp"

#include <algorithm>

namespace al::gui {

StageSet stages_step_shows(const Session& session, Step step) {
  const bool alibi = session.config.positional.type == PositionalType::Alibi;
  const Stage before_mask = alibi ? Stage::Biased : Stage::Scaled;
  switch (step) {
    case Step::Scores: return stage_set({Stage::Scores});
    case Step::Scaled: return stage_set({Stage::Scores, Stage::Scaled});
    case Step::Alibi: return stage_set({Stage::Scaled, Stage::Biased});
    case Step::Masked: return stage_set({before_mask, Stage::Masked});
    case Step::Weights: return stage_set({Stage::Masked, Stage::Weights});
    case Step::Dropped: return stage_set({Stage::Weights, Stage::Dropped});
    case Step::Context: return stage_set({Stage::Dropped});
    case Step::Output: return stage_set({Stage::Weights});
    default: return {};  // inputs, projections, positions, concat, W_O: no (B, h, Lq, Lk) stage
  }
}

StageSet stages_view_needs(const AppState& app) {
  return stages_step_shows(app.model.session(), app.view.step) | stage_set({Stage::Weights});
}

bool stage_not_kept(const Trace& trace, Stage stage) {
  if (trace.has(stage)) return false;
  // Only square stages are ever dropped; the biased scores exist only with ALiBi.
  const bool square = std::find(kSquareStages.begin(), kSquareStages.end(), stage) != kSquareStages.end();
  return square && (stage != Stage::Biased || !trace.alibi_slopes.empty());
}

Index keep_bytes(const AppState& app, const StageSet& stages) {
  const Result<Index> bytes = estimate_trace_bytes(app.model.session(), stages);
  return bytes ? *bytes : 0;
}

}  // namespace al::gui
