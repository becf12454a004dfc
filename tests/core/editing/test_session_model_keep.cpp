// The session model's keep setting: a session over the memory limit fails with
// TooLarge until the learner keeps only some (B, h, Lq, Lk) stages; then edits
// (recomputed from the previous, lean trace, here and on the worker) equal an
// independent full computation of the same session: kept stages bit for bit,
// the others absent. An edit that makes the session fit keeps everything again.
#include <doctest/doctest.h>

#include "base/random.hpp"
#include "editing/edits.hpp"
#include "editing/session_model.hpp"
#include "io/session_io.hpp"

using namespace al;

namespace {

std::string param(const Error& e, const std::string& name) {
  for (const auto& [key, value] : e.params)
    if (key == name) return value;
  return "";
}

Index bytes_of(const Session& s, const std::optional<StageSet>& keep = std::nullopt) {
  const Result<Index> bytes = estimate_trace_bytes(s, keep);
  REQUIRE(bytes.ok());
  return *bytes;
}

// The trace of `s` with every stage, computed on its own (no model, no previous trace).
std::shared_ptr<const Trace> full_trace(const Session& s) {
  auto r = compute(s);
  REQUIRE(r.ok());
  return *r;
}

// The model's lean trace holds the square stages of `keep` (and those sharing their
// tensor), equal bit for bit to the full computation, no other square stage, and
// every other stage equal too.
void check_lean(const Trace& lean, const Session& s, const StageSet& keep) {
  const auto full = full_trace(s);
  for (Stage st : kAllStages) {
    CAPTURE(stage_name(st));
    if (!full->has(st)) {
      CHECK_FALSE(lean.has(st));
      continue;
    }
    const bool square = std::find(kSquareStages.begin(), kSquareStages.end(), st) != kSquareStages.end();
    bool kept = !square || keep.test(static_cast<size_t>(st));
    for (Stage other : kSquareStages)
      kept = kept || (keep.test(static_cast<size_t>(other)) && full->has(other) &&
                      full->stage_ptr(other) == full->stage_ptr(st));
    REQUIRE(lean.has(st) == kept);
    if (kept) CHECK(lean.stage(st).data == full->stage(st).data);
  }
}

}  // namespace

TEST_CASE("keep: a session over the limit computes once the view's stages are kept, and edits stay lean and exact") {
  // Causal, scale 1/√d_k: scores, scaled, masked, weights are four distinct (B, h, L, L) tensors.
  auto loaded = load_preset("causal-decoder");
  REQUIRE(loaded.ok());
  const Session s = *loaded;
  const StageSet weights = stage_set({Stage::Weights});
  const Index whole = bytes_of(s), lean = bytes_of(s, weights);
  REQUIRE(lean < whole);
  ComputeOptions options;
  options.memory_limit_bytes = (lean + whole) / 2;  // the weights fit, the whole trace does not
  SessionModel model(s, options);
  CHECK(model.memory_limit() == (lean + whole) / 2);
  CHECK_FALSE(model.keep());
  REQUIRE(model.error());
  CHECK(model.error()->code == ErrorCode::TooLarge);
  CHECK(param(*model.error(), "bytes") == std::to_string(whole));
  CHECK_FALSE(model.trace());

  const std::uint64_t revision = model.revision();
  model.set_keep(weights);
  CHECK(model.revision() == revision + 1);
  CHECK_FALSE(model.modified());  // what is kept is not part of the document
  CHECK_FALSE(model.can_undo());
  REQUIRE(model.keep());
  CHECK(*model.keep() == weights);
  CHECK_FALSE(model.error());
  REQUIRE(model.trace());
  CHECK(model.trace()->memory_bytes == lean);
  check_lean(*model.trace(), s, weights);

  // An edit of X: recomputed from the lean previous trace, still lean, still exact.
  const Session edited = with_cell(s, InputId::X, 1, 2.5f);
  model.edit(edited, "Edit X");
  CHECK_FALSE(model.error());
  REQUIRE(model.keep());
  check_lean(*model.trace(), edited, weights);

  // Keeping the scores too: the next computation has both.
  const StageSet two = stage_set({Stage::Weights, Stage::Scores});
  REQUIRE(bytes_of(edited, two) <= model.memory_limit());
  model.set_keep(two);
  check_lean(*model.trace(), edited, two);
  const Session edited_again = with_cell(edited, InputId::WQ, 0, -1.0f);  // every square stage changes
  model.edit(edited_again, "Edit W_Q");
  check_lean(*model.trace(), edited_again, two);

  SUBCASE("an edit that makes the session fit keeps every stage again, and undo does not bring the keep back") {
    const Session shorter = with_sizes(edited_again, 1, 2, 2, edited_again.config.d_model);
    REQUIRE(bytes_of(shorter) <= model.memory_limit());
    model.edit(shorter, "Length");
    CHECK_FALSE(model.keep());
    CHECK_FALSE(model.error());
    for (Stage st : kSquareStages)
      if (st != Stage::Biased) CHECK(model.trace()->has(st));
    model.undo();  // too large again: the learner is asked again
    REQUIRE(model.error());
    CHECK(model.error()->code == ErrorCode::TooLarge);
    CHECK_FALSE(model.keep());
  }
  SUBCASE("unset keeps everything: too large again") {
    model.set_keep(std::nullopt);
    REQUIRE(model.error());
    CHECK(model.error()->code == ErrorCode::TooLarge);
  }
  SUBCASE("a new document keeps every stage") {
    model.reset(s);
    CHECK_FALSE(model.keep());
    REQUIRE(model.error());
    CHECK(model.error()->code == ErrorCode::TooLarge);
  }
}

TEST_CASE("keep: a big session computed on the worker keeps what was asked when its edit was made") {
  // Direct mode, one head, L = 2048, d = 160: 2.7e9 flop-equivalents, over the synchronous limit.
  Session s;
  s.config.mode = InputMode::Direct;
  s.config.d_model = 160;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.q = make_tensor(random_normal({1, 2048, 160}, 11));
  s.k = make_tensor(random_normal({1, 2048, 160}, 12));
  s.v = make_tensor(random_normal({1, 2048, 160}, 13));
  const StageSet weights = stage_set({Stage::Weights});
  ComputeOptions options;
  options.memory_limit_bytes = bytes_of(s) - 1;
  REQUIRE(bytes_of(s, weights) <= options.memory_limit_bytes);
  SessionModel model(s, options);
  REQUIRE(model.error());
  model.set_keep(weights);
  CHECK(model.computing());
  model.wait_idle();
  REQUIRE(model.trace());
  CHECK_FALSE(model.error());
  check_lean(*model.trace(), s, weights);
  const Session edited = with_cell(s, InputId::K, 5, 3.0f);  // one key: every row's weights change
  model.edit(edited, "Edit K");
  CHECK(model.computing());
  model.wait_idle();
  CHECK(model.trace_session().k == edited.k);
  check_lean(*model.trace(), edited, weights);

  // One token fewer: the whole trace fits. Every stage is asked for at once; the lean trace
  // stays on screen (so views must ask the trace, not keep(), what it holds) until the
  // whole one arrives.
  const Session shorter = with_sizes(edited, 1, 2047, 2047, 160);
  REQUIRE(bytes_of(shorter) <= model.memory_limit());
  model.edit(shorter, "Length");
  CHECK_FALSE(model.keep());
  CHECK(model.computing());
  CHECK_FALSE(model.trace()->has(Stage::Scores));
  model.wait_idle();
  REQUIRE(model.trace());
  CHECK_FALSE(model.error());
  CHECK(model.trace()->has(Stage::Scores));
  CHECK(model.trace()->memory_bytes == bytes_of(shorter));
}
