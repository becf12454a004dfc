// The lesson from the seeds' MHA to a Llama block: each step is one option away
// from the one before, and the changes it reports are checked against what the
// option must do (28 cells per head masked by causality on 8 tokens, K/V floats
// per token 2·8·4 → 2·2·4, GQA with repeated K/V weights leaving every output as it
// was, RoPE changing the weights).
#include <doctest/doctest.h>

#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/llama_path.hpp"

using namespace al;

TEST_CASE("llama path: MHA → causal → GQA → RoPE, one option at a time, ending at llama-block") {
  auto path = llama_path();
  REQUIRE(path.ok());
  REQUIRE(path->size() == 4);
  const Session& mha = (*path)[0].session;
  const Session& causal = (*path)[1].session;
  const Session& gqa = (*path)[2].session;
  const Session& rope = (*path)[3].session;
  CHECK(session_to_json(rope) == session_to_json(*load_preset("llama-block")));
  // One option each.
  CHECK_FALSE(mha.config.mask.causal);
  CHECK(causal.config.mask.causal);
  CHECK(mha.config.kv_heads() == 8);
  CHECK(causal.config.kv_heads() == 8);
  CHECK(gqa.config.kv_heads() == 2);
  CHECK(gqa.config.positional.type == PositionalType::None);
  CHECK(rope.config.positional.type == PositionalType::Rope);
  // Query head 5's K columns in the MHA step are K/V head 5 ÷ 4 = 1's: W_K[:, 5·4 + c] = W_K_llama[:, 1·4 + c].
  REQUIRE(mha.weights.w_k->shape == std::vector<Index>{32, 32});
  for (Index r = 0; r < 32; ++r)
    for (Index c = 0; c < 4; ++c) CHECK(mha.weights.w_k->at({r, 5 * 4 + c}) == gqa.weights.w_k->at({r, 1 * 4 + c}));

  std::vector<std::shared_ptr<const Trace>> traces;
  for (const PathStep& step : *path) {
    auto t = compute(step.session);
    REQUIRE_MESSAGE(t.ok(), step.id);
    traces.push_back(*t);
  }
  // Causal: 8 tokens hide 0 + 1 + … + 7 = 28 later keys per head, 8 heads.
  const PathChange to_causal = path_change(*traces[0], *traces[1]);
  CHECK(to_causal.newly_masked == 28 * 8);
  CHECK(to_causal.max_weight_change > 0.01);
  CHECK(to_causal.kv_floats_before == 64);
  // GQA with the K/V weights the MHA step repeated: the same numbers, a quarter of the cache.
  const PathChange to_gqa = path_change(*traces[1], *traces[2]);
  CHECK(to_gqa.newly_masked == 0);
  CHECK(to_gqa.max_output_change < 1e-5);
  CHECK(to_gqa.kv_floats_before == 2 * 8 * 4);
  CHECK(to_gqa.kv_floats_after == 2 * 2 * 4);
  // RoPE moves the weights (positions now matter), the cache stays the same size.
  const PathChange to_rope = path_change(*traces[2], *traces[3]);
  CHECK(to_rope.max_weight_change > 0.01);
  CHECK(to_rope.kv_floats_after == 16);
}
