// The note for the batch item on screen, against the presets' own inputs: padded-batch pads
// items 1 and 2 only; seed 004 pads item 1 and drops weights by its seed.
#include <doctest/doctest.h>

#include "i18n_tables.hpp"
#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/batch_note.hpp"

using namespace al;
using namespace al::testing;

TEST_CASE("batch_item_note: the mask step on an item without padding names the padded items") {
  auto session = load_preset("padded-batch");
  REQUIRE(session.ok());
  const Tensor& padding = *session->config.mask.key_padding;  // (B, Lk): 1 keeps the key
  REQUIRE(session->config.mask.causal == false);
  for (Index b = 0; b < 3; ++b) {  // the preset as written: item 0 keeps all five keys
    float kept = 0;
    for (Index j = 0; j < 5; ++j) kept += padding.at({b, j});
    CHECK(kept == (b == 0 ? 5.0f : b == 1 ? 3.0f : 2.0f));
  }
  auto trace = compute(*session);
  REQUIRE(trace.ok());
  for (bool chinese : {false, true}) {
    const std::string note = batch_item_note(Step::Masked, **trace, 0, lookup_in(chinese));
    CHECK(contains(note, chinese ? "批次样本 1, 2 有" : "batch items 1, 2 have"));
    CHECK(batch_item_note(Step::Masked, **trace, 1, lookup_in(chinese)).empty());
    CHECK(batch_item_note(Step::Masked, **trace, 2, lookup_in(chinese)).empty());
    CHECK(batch_item_note(Step::Weights, **trace, 0, lookup_in(chinese)).empty());  // only the mask and dropout steps
  }
  // Causal too: every item has masked cells, no note.
  Session causal = *session;
  causal.config.mask.causal = true;
  auto causal_trace = compute(causal);
  REQUIRE(causal_trace.ok());
  CHECK(batch_item_note(Step::Masked, **causal_trace, 0, lookup_in(false)).empty());
}

TEST_CASE("batch_item_note: the dropout step on an item that lost no weight names those that did") {
  auto session = load_preset("seed-004-fused");
  REQUIRE(session.ok());
  auto trace = compute(*session);
  REQUIRE(trace.ok());
  const Tensor& before = (*trace)->stage(Stage::Weights);  // (B, h, Lq, Lk)
  const Tensor& after = (*trace)->stage(Stage::Dropped);
  int dropped[2] = {0, 0};  // by an explicit loop: a nonzero weight that dropout set to 0
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < before.dim(2); ++i)
      for (Index j = 0; j < before.dim(3); ++j)
        if (before.at({b, 0, i, j}) != 0.0f && after.at({b, 0, i, j}) == 0.0f) ++dropped[b];
  REQUIRE(dropped[0] == 0);  // what the note is for: item 0 shows no dropped weight
  REQUIRE(dropped[1] > 0);
  CHECK(contains(batch_item_note(Step::Dropped, **trace, 0, lookup_in(false)), "batch item 1 did"));
  CHECK(batch_item_note(Step::Dropped, **trace, 1, lookup_in(false)).empty());
  // The one-item default has nothing to point at.
  auto plain = compute(*load_preset("default"));
  REQUIRE(plain.ok());
  CHECK(batch_item_note(Step::Masked, **plain, 0, lookup_in(false)).empty());
}
