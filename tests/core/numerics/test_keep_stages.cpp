// ComputeOptions::keep: a trace that keeps only some (B, h, Lq, Lk) stages holds exactly
// those, equal bit for bit to the full trace's, with every other stage, the row statistics
// and the checks unchanged; its memory is what estimate_trace_bytes said; and edits
// recomputed from a lean or a full previous trace equal fresh computations.
#include <doctest/doctest.h>

#include <set>

#include "editing/edits.hpp"
#include "io/session_io.hpp"
#include "numerics/attention.hpp"

using namespace al;

namespace {

const char* const kPresets[] = {"default", "padded-batch", "causal-decoder", "alibi-6-heads", "llama-block",
                                "seed-000-usage", "seed-003-example", "cross-attention"};

std::shared_ptr<const Trace> computed(const Session& s, const std::optional<StageSet>& keep = std::nullopt,
                                      const Session* before = nullptr, std::shared_ptr<const Trace> previous = nullptr) {
  ComputeOptions options;
  options.keep = keep;
  auto r = compute(s, options, before, std::move(previous));
  REQUIRE(r.ok());
  return *r;
}

// The bytes of the distinct tensors a trace holds, counted here.
Index distinct_bytes(const Trace& t) {
  std::set<const Tensor*> seen;
  Index bytes = 0;
  auto add = [&](const TensorPtr& p) {
    if (p && seen.insert(p.get()).second) bytes += static_cast<Index>(p->data.size() * sizeof(float));
  };
  for (const TensorPtr& p : t.stages) add(p);
  add(t.mask);
  add(t.row_max);
  add(t.row_sum);
  return bytes + static_cast<Index>(t.fully_masked_rows.size());
}

// `lean` keeps what `keep` asks (and what shares a tensor with it), equal to `full`, and nothing else square.
void check_lean(const Trace& full, const Trace& lean, const StageSet& keep) {
  for (Stage s : kAllStages) {
    CAPTURE(stage_name(s));
    const bool square = std::find(kSquareStages.begin(), kSquareStages.end(), s) != kSquareStages.end();
    if (!full.has(s)) {
      CHECK_FALSE(lean.has(s));
      continue;
    }
    // A stage sharing its tensor with a kept one is kept with it.
    bool kept = !square || keep.test(static_cast<size_t>(s));
    for (Stage other : kSquareStages)
      kept = kept || (keep.test(static_cast<size_t>(other)) && full.has(other) &&
                      full.stage_ptr(other) == full.stage_ptr(s));
    REQUIRE(lean.has(s) == kept);
    if (kept) CHECK(lean.stage(s).data == full.stage(s).data);
  }
  CHECK(lean.row_max->data == full.row_max->data);
  CHECK(lean.row_sum->data == full.row_sum->data);
  CHECK(lean.checks.masked_weight_max == full.checks.masked_weight_max);
  CHECK(lean.checks.row_sum_error_max == full.checks.row_sum_error_max);
  CHECK(lean.memory_bytes == distinct_bytes(lean));
}

}  // namespace

TEST_CASE("keep: each square stage alone, none, and pairs equal the full trace; memory as estimated") {
  const std::vector<StageSet> keeps = {
      StageSet{},
      stage_set({Stage::Scores}),
      stage_set({Stage::Scaled}),
      stage_set({Stage::Biased}),
      stage_set({Stage::Masked}),
      stage_set({Stage::Weights}),
      stage_set({Stage::Dropped}),
      stage_set({Stage::Scores, Stage::Weights}),
      stage_set({Stage::Masked, Stage::Dropped}),
  };
  for (const char* name : kPresets) {
    CAPTURE(name);
    auto session = load_preset(name);
    REQUIRE(session.ok());
    auto full = computed(*session);
    for (const StageSet& keep : keeps) {
      CAPTURE(keep.to_string());
      auto lean = computed(*session, keep);
      check_lean(*full, *lean, keep);
      auto estimate = estimate_trace_bytes(*session, keep);
      REQUIRE(estimate.ok());
      CHECK(*estimate == lean->memory_bytes);
    }
    CHECK(*estimate_trace_bytes(*session) == full->memory_bytes);
  }
}

TEST_CASE("keep: edits recomputed from a lean or a full previous trace equal fresh computations") {
  for (const char* name : {"padded-batch", "alibi-6-heads", "seed-000-usage"}) {
    CAPTURE(name);
    auto session = load_preset(name);
    REQUIRE(session.ok());
    const std::vector<Session> edits = {
        with_cell(*session, InputId::X, 3, 0.25f),
        session->weights.w_v ? with_cell(*session, InputId::WV, 1, -0.5f) : *session,
        session->weights.w_o ? with_cell(*session, InputId::WO, 2, 0.75f) : *session,
        with_causal(*session, !session->config.mask.causal),
    };
    const std::optional<StageSet> weights_only = stage_set({Stage::Weights}), everything;
    for (const auto& before_keep : {weights_only, everything})
      for (const auto& after_keep : {weights_only, everything, std::optional<StageSet>(stage_set({Stage::Scores}))}) {
        auto previous = computed(*session, before_keep);
        for (const Session& edited : edits) {
          auto fresh_full = computed(edited);
          auto incremental = computed(edited, after_keep, &*session, previous);
          check_lean(*fresh_full, *incremental, after_keep ? *after_keep : ~StageSet{});
        }
      }
  }
}

TEST_CASE("keep: too large to keep whole, the message gives the bytes and what the weights alone need") {
  auto session = load_preset("seed-000-usage");  // (16, 8, 100, 100) per square stage: 5 120 000 bytes
  REQUIRE(session.ok());
  auto full = estimate_trace_bytes(*session);
  auto weights = estimate_trace_bytes(*session, stage_set({Stage::Weights}));
  REQUIRE(full.ok());
  REQUIRE(weights.ok());
  // Training with dropout: scores, scaled, weights and dropped are distinct; the weights alone drop three.
  CHECK(*full - *weights == 3 * 16 * 8 * 100 * 100 * 4);
  ComputeOptions options;
  options.memory_limit_bytes = *full - 1;
  auto refused = compute(*session, options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::TooLarge);
  CHECK(refused.error().message.find(std::to_string(*weights) + " bytes") != std::string::npos);
  options.keep = stage_set({Stage::Weights});
  CHECK(compute(*session, options).ok());
}
