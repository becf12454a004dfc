// KV-cache decoding (issue 14): each step, computed token by token, equals row t
// of the full causal trace (computed by the trace's GEMM kernels), for every option.
#include <doctest/doctest.h>

#include "numerics/attention.hpp"
#include "numerics/decode.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::PositionalType;
using al::Stage;

namespace {

al::Session gqa_session(Index batch, Index length, std::uint64_t seed) {
  al::Session s = with_kv_heads(random_projection_session(batch, length, 16, 4, seed), 2, seed + 11);
  s.config.mask.causal = true;
  return s;
}

// Every step against the trace: weights over the cache = the trace's row t at the
// cache's positions (all other cells of the row exactly 0), output = row t.
void check_against_trace(const al::Session& s) {
  auto trace = compute_ok(s);
  auto run = al::decode(s);
  REQUIRE_MESSAGE(run.ok(), run.error().message);
  const al::Dims& d = trace->dims;
  REQUIRE(run->steps.size() == size_t(d.len_q));
  const al::Tensor& weights = trace->stage(Stage::Weights);   // (B, h, L, L)
  const bool dropout = s.config.dropout.training && s.config.dropout.p > 0;
  const al::Tensor& dropped = trace->stage(Stage::Dropped);   // (B, h, L, L), the weights without dropout
  const al::Tensor& output = trace->stage(Stage::Output);     // (B, L, d_model)
  const al::Tensor& keys = trace->stage(trace->scored_k());   // (B, h_kv, L, d_k)
  for (const al::DecodeStep& step : run->steps) {
    const Index t = step.t, n = Index(step.positions.size());
    std::vector<double> expected_weights, expected_dropped, expected_output, expected_keys;
    for (Index b = 0; b < d.batch; ++b) {
      for (Index h = 0; h < d.heads; ++h) {
        const float* row = weights.data.data() + ((b * d.heads + h) * d.len_q + t) * d.len_kv;
        double outside = 0;
        for (Index j = 0; j < d.len_kv; ++j)
          if (std::find(step.positions.begin(), step.positions.end(), j) == step.positions.end()) outside += row[j];
        CHECK_MESSAGE(outside == 0.0, "step " << t << ": weight outside the cache");
        for (Index p : step.positions) expected_weights.push_back(row[p]);
        const float* dropped_row = dropped.data.data() + ((b * d.heads + h) * d.len_q + t) * d.len_kv;
        for (Index p : step.positions) expected_dropped.push_back(dropped_row[p]);
      }
      for (Index c = 0; c < d.d_model; ++c) expected_output.push_back(output.data[size_t((b * d.len_q + t) * d.d_model + c)]);
      for (Index g = 0; g < d.kv_heads; ++g)
        for (Index p : step.positions)
          for (Index e = 0; e < d.d_k; ++e)
            expected_keys.push_back(keys.data[size_t(((b * d.kv_heads + g) * d.len_kv + p) * d.d_k + e)]);
    }
    CHECK(step.weights.shape == std::vector<Index>{d.batch, d.heads, 1, n});
    CHECK_MESSAGE(!step.any_fully_masked(), "step " << t << ": every row sees a key");
    CHECK(step.k_cache.shape == std::vector<Index>{d.batch, d.kv_heads, n, d.d_k});
    check_close(step.weights, expected_weights, "weights at step " + std::to_string(t));
    // With dropout the output sums the dropped weights: they are given too, as the trace's row t.
    CHECK(step.dropped.data.empty() == !dropout);
    if (dropout) check_close(step.dropped, expected_dropped, "dropped at step " + std::to_string(t));
    check_close(step.output, expected_output, "output at step " + std::to_string(t));
    check_close(step.k_cache, expected_keys, "k_cache at step " + std::to_string(t));
  }
}

}  // namespace

TEST_CASE("decoding token by token equals the full causal trace, row by row") {
  SUBCASE("multi-head, B = 2, key padding") {
    al::Session s = random_projection_session(2, 7, 8, 2, 5);
    s.config.mask.causal = true;
    s.config.mask.key_padding = tensor({2, 7}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1});
    check_against_trace(s);
  }
  SUBCASE("grouped-query heads with RoPE (Llama)") {
    al::Session s = gqa_session(1, 9, 21);
    s.config.positional.type = PositionalType::Rope;
    check_against_trace(s);
  }
  SUBCASE("ALiBi, sinusoidal, and dropout in training") {
    for (PositionalType type : {PositionalType::Alibi, PositionalType::Sinusoidal}) {
      al::Session s = gqa_session(2, 6, 31);
      s.config.positional.type = type;
      s.config.dropout = {0.25, true, 3};
      check_against_trace(s);
    }
  }
  SUBCASE("direct mode, multi-query") {
    al::Session s = random_direct_session(1, 6, 6, 8, 4, 41);
    s.k = random_tensor({1, 6, 2}, 42);
    s.v = random_tensor({1, 6, 2}, 43);
    s.config.num_kv_heads = 1;
    s.config.mask.causal = true;
    check_against_trace(s);
  }
}

TEST_CASE("with a sliding window the cache rolls: it keeps the last w positions (Mistral)") {
  al::Session s = gqa_session(1, 10, 51);
  s.config.positional.type = PositionalType::Rope;
  s.config.mask.window = 3;
  check_against_trace(s);
  auto run = al::decode(s);
  REQUIRE(run.ok());
  CHECK(run->steps[0].positions == std::vector<Index>{0});
  CHECK(run->steps[2].positions == std::vector<Index>{0, 1, 2});
  CHECK(run->steps[7].positions == std::vector<Index>{5, 6, 7});
  CHECK(run->cache_bytes_per_token == 2 * 2 * 4 * 4);  // 2 · h_kv · d_k · 4 bytes
  CHECK(run->multi_head_bytes_per_token == 2 * 4 * 4 * 4);
  SUBCASE("a global token stays in the cache") {
    s.config.mask.global_tokens = {0};
    check_against_trace(s);
    auto with_global = al::decode(s);
    CHECK(with_global->steps[7].positions == std::vector<Index>{0, 5, 6, 7});
  }
  SUBCASE("a later global query needs every key: nothing is evicted before it") {
    s.config.mask.global_tokens = {6};
    check_against_trace(s);
    CHECK(al::decode(s)->steps[6].positions.size() == 7);
    CHECK(al::decode(s)->steps[9].positions == std::vector<Index>{6, 7, 8, 9});
  }
}

// The first t + 1 tokens of s (B = 1): what a decoder has seen at step t.
al::Session prefix(const al::Session& s, Index length) {
  al::Session p = s;
  const Index d = s.config.d_model;
  const auto& x = s.x->data;
  const auto& padding = s.config.mask.key_padding->data;
  p.x = tensor({1, length, d}, std::vector<float>(x.begin(), x.begin() + length * d));
  p.config.mask.key_padding = tensor({1, length}, std::vector<float>(padding.begin(), padding.begin() + length));
  return p;
}

TEST_CASE("left padding: a token that sees no key is flagged, and decodes as the full pass over its prefix") {
  // Batched generation pads on the left: tokens 0 and 1 are padding, so queries 0 and 1 see no key.
  al::Session s = random_projection_session(1, 5, 8, 2, 71);
  s.config.mask.causal = true;
  s.config.mask.key_padding = tensor({1, 5}, {0, 0, 1, 1, 1});
  for (const double fill : {-std::numeric_limits<double>::infinity(), -1e9}) {
    CAPTURE(fill);
    s.config.mask_fill = fill;
    auto run = al::decode(s);
    REQUIRE(run.ok());
    auto full = compute_ok(s);
    const al::Dims& d = full->dims;
    for (const al::DecodeStep& step : run->steps) {
      const Index t = step.t, n = t + 1;
      CAPTURE(t);
      CHECK(step.fully_masked == std::vector<unsigned char>{static_cast<unsigned char>(t < 2)});
      CHECK(step.fully_masked[0] == full->fully_masked_rows[size_t(t)]);
      for (Index h = 0; h < d.heads; ++h)
        for (Index c = 0; c < n; ++c) {
          const float w = step.weights.data[size_t(h * n + c)];
          const float whole = full->stage(Stage::Weights).data[size_t((h * d.len_q + t) * d.len_kv + c)];
          if (t >= 2) CHECK(w == doctest::Approx(whole).epsilon(1e-5));      // a row with keys: the full pass
          else if (std::isinf(fill)) CHECK(std::isnan(w));                    // softmax of all -inf
          else CHECK(w == doctest::Approx(1.0 / double(n)).epsilon(1e-6));   // uniform over the cache ...
          if (t < 2 && !std::isinf(fill)) CHECK(whole == doctest::Approx(1.0 / double(d.len_kv)));  // ... not all L
        }
      // A decoder at step t has seen tokens 0..t only: it equals the full pass over that prefix.
      auto seen = compute_ok(prefix(s, n));
      const al::Tensor& out = seen->stage(Stage::Output);  // (1, n, d_model)
      for (Index c = 0; c < d.d_model; ++c) {
        const float expected = out.data[size_t(t * d.d_model + c)], got = step.output.data[size_t(c)];
        if (std::isnan(expected)) CHECK(std::isnan(got));
        else CHECK(got == doctest::Approx(expected).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("decoding refuses what a decoder cannot do, and says why") {
  al::Session s = random_projection_session(1, 4, 8, 2, 61);
  CHECK(al::decode(s).error().message.find("needs a causal mask") != std::string::npos);
  s.config.mask.causal = true;
  s.config.mask_fill = -1e-20;  // the seed's bug: masked keys leak
  CHECK(al::decode(s).error().message.find("lets masked (future) keys through") != std::string::npos);
  al::Session cross = random_direct_session(1, 3, 5, 8, 2, 62);
  cross.config.mask.causal = true;
  CHECK(al::decode(cross).error().message.find("cross attention") != std::string::npos);
}
