// Above detail::kSweepAboveKeys keys the per-head pass computes Q·Kᵀ with K packed once,
// swept a tile of rows at a time, and scales it and finds each row's max in the same sweep
// where nothing stands between the scaling and the softmax (numerics/attention_kernels.cpp).
// Here at that length: every square stage against explicit loops in double over the trace's
// own Q and K (the pass's inputs), with no mask, a key-padding mask, ALiBi, grouped K/V and a
// lean trace, with a partial last panel and (no mask, grouped K/V) with whole panels, whose
// scores are streamed; and edits recomputed from a previous trace equal fresh computations bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "attention_reference.hpp"
#include "numerics/attention.hpp"
#include "numerics/attention_kernels.hpp"
#include "numerics/attention_plan.hpp"

using namespace attention_test;
using al::Stage;

namespace {

// One more than two panels of 16 past the threshold: the last panel has 5 keys.
const Index kKeys = al::detail::kSweepAboveKeys + 37;
// Whole panels, each row of scores 64-byte aligned: the scores are streamed past the caches.
const Index kAlignedKeys = al::detail::kSweepAboveKeys + 48;

// Cross attention of 30 queries over `keys` keys: two sweeps of 12 rows and one of 6 per head.
al::Session long_keys_session(Index d_model, Index heads, std::uint64_t seed, Index keys = kKeys) {
  al::Session s = random_projection_session(2, 30, d_model, heads, seed);
  s.config.attention = al::AttentionKind::Cross;
  s.x_kv = random_tensor({2, keys, d_model}, seed + 20);
  return s;
}

// What the softmax reads at (b, head, i, j), given the scaled score there.
using SoftmaxInput = std::function<double(Index b, Index head, Index i, Index j, double scaled)>;

// The square stages from the trace's Q and K, one explicit loop each, in double: K/V head
// head ÷ (h / h_kv) for query head `head`.
void check_square_stages(const al::Trace& t, const SoftmaxInput& input) {
  const al::Dims& d = t.dims;
  const Tensor &q = t.stage(t.scored_q()), &k = t.stage(t.scored_k());
  const size_t n = size_t(d.batch * d.heads * d.len_q * d.len_kv);
  std::vector<double> scores(n), softmax_in(n), weights(n);
  for (Index b = 0; b < d.batch; ++b)
    for (Index h = 0; h < d.heads; ++h)
      for (Index i = 0; i < d.len_q; ++i) {
        const Index row = ((b * d.heads + h) * d.len_q + i) * d.len_kv;
        const float* q_row = q.data.data() + ((b * d.heads + h) * d.len_q + i) * d.d_k;
        double max = -std::numeric_limits<double>::infinity(), sum = 0;
        for (Index j = 0; j < d.len_kv; ++j) {
          const float* k_row = k.data.data() + ((b * d.kv_heads + d.kv_head(h)) * d.len_kv + j) * d.d_k;
          double dot = 0;
          for (Index c = 0; c < d.d_k; ++c) dot += double(q_row[c]) * k_row[c];
          scores[size_t(row + j)] = dot;
          softmax_in[size_t(row + j)] = input(b, h, i, j, dot * t.scale);
          max = std::max(max, softmax_in[size_t(row + j)]);
        }
        for (Index j = 0; j < d.len_kv; ++j) sum += std::exp(softmax_in[size_t(row + j)] - max);
        for (Index j = 0; j < d.len_kv; ++j) weights[size_t(row + j)] = std::exp(softmax_in[size_t(row + j)] - max) / sum;
      }
  check_close(t.stage(Stage::Scores), scores, "scores", 1e-5, 1e-5);
  check_close(t.stage(Stage::Masked), softmax_in, "masked", 1e-5, 1e-5);
  // About 1/2000 each: relative to the weight, with a floor far below it.
  check_close(t.stage(Stage::Weights), weights, "weights", 1e-4, 1e-9);

  // Scaled is the float scores times the float scale; row_max is the largest value of the
  // row the softmax read, and each row sums to 1.
  const Tensor &s = t.stage(Stage::Scores), &scaled = t.stage(Stage::Scaled), &masked = t.stage(Stage::Masked);
  const float scale = static_cast<float>(t.scale);
  Index unequal = 0;
  for (size_t c = 0; c < n; ++c) unequal += scaled.data[c] != s.data[c] * scale;
  CHECK(unequal == 0);
  for (Index r = 0; r < d.batch * d.heads * d.len_q; ++r) {
    const float* row = masked.data.data() + r * d.len_kv;
    CHECK(t.row_max->data[size_t(r)] == *std::max_element(row, row + d.len_kv));
    double total = 0;
    for (Index j = 0; j < d.len_kv; ++j) total += t.stage(Stage::Weights).data[size_t(r * d.len_kv + j)];
    CHECK(total == doctest::Approx(1.0).epsilon(1e-5));
  }
}

const SoftmaxInput kScaled = [](Index, Index, Index, Index, double scaled) { return scaled; };

}  // namespace

TEST_CASE("above kSweepAboveKeys keys, Q·Kᵀ swept with K packed once: every square stage against explicit loops") {
  SUBCASE("no mask: scaled and the row max found in the same sweep; output as the reference") {
    for (Index keys : {kKeys, kAlignedKeys}) {
      CAPTURE(keys);
      const al::Session s = long_keys_session(32, 2, 71, keys);
      auto t = compute_ok(s);
      REQUIRE(t->dims.len_kv > al::detail::kSweepAboveKeys);
      CHECK(t->stage_ptr(Stage::Masked) == t->stage_ptr(Stage::Scaled));
      check_square_stages(*t, kScaled);
      check_close(t->stage(Stage::Output), reference_attention(s).output, "output", 1e-4, 1e-5);
    }
  }
  SUBCASE("key padding: the sweep writes the scores, the row pass scales and masks") {
    al::Session s = long_keys_session(32, 2, 72);
    std::vector<float> keep(size_t(2 * kKeys), 1.0f);
    for (Index j = 0; j < kKeys; j += 7) keep[size_t(j)] = 0.0f;              // batch item 0
    for (Index j = kKeys - 40; j < kKeys; ++j) keep[size_t(kKeys + j)] = 0.0f;  // item 1: its last keys
    s.config.mask.key_padding = tensor({2, kKeys}, keep);
    auto t = compute_ok(s);
    const double fill = t->mask_fill;
    check_square_stages(*t, [&](Index b, Index, Index, Index j, double scaled) {
      return keep[size_t(b * kKeys + j)] != 0.0f ? scaled : fill;
    });
    CHECK(t->stage(Stage::Weights).at({1, 1, 29, kKeys - 1}) == 0.0f);
  }
  SUBCASE("ALiBi: the sweep writes the scores, the row pass scales and biases") {
    al::Session s = long_keys_session(32, 2, 73);
    s.config.positional.type = al::PositionalType::Alibi;
    auto t = compute_ok(s);
    const std::vector<double> m = al::detail::alibi_slopes(2);
    check_square_stages(*t, [&](Index, Index h, Index i, Index j, double scaled) {
      return scaled - m[size_t(h)] * std::abs(double(i - j));
    });
  }
  SUBCASE("grouped K/V: 4 query heads over 2, each pair reading one packed K") {
    for (Index keys : {kKeys, kAlignedKeys}) {
      CAPTURE(keys);
      const al::Session s = with_kv_heads(long_keys_session(64, 4, 74, keys), 2, 75);
      auto t = compute_ok(s);
      REQUIRE(t->dims.kv_heads == 2);
      check_square_stages(*t, kScaled);
    }
  }
  SUBCASE("only the weights kept: the same bits as the full trace") {
    const al::Session s = long_keys_session(32, 2, 76);
    al::ComputeOptions lean;
    lean.keep = al::stage_set({Stage::Weights});
    auto full = compute_ok(s), kept = compute_ok(s, lean);
    REQUIRE_FALSE(kept->has(Stage::Scores));
    CHECK(kept->stage(Stage::Weights).data == full->stage(Stage::Weights).data);
    CHECK(kept->row_max->data == full->row_max->data);
    CHECK(kept->stage(Stage::Output).data == full->stage(Stage::Output).data);
  }
}

TEST_CASE("above kSweepAboveKeys keys, edits recomputed from a previous trace equal fresh computations bit for bit") {
  const al::Session before = long_keys_session(32, 2, 77);
  auto previous = compute_ok(before);
  al::Session padded = before;  // the scores are reused, the mask is new
  std::vector<float> keep(size_t(2 * kKeys), 1.0f);
  keep[5] = keep[size_t(kKeys + 9)] = 0.0f;
  padded.config.mask.key_padding = tensor({2, kKeys}, keep);
  al::Session edited_x = before;  // one query's row of X: its rows of every stage recomputed
  std::vector<float> x(before.x->data.begin(), before.x->data.end());
  x[3] += 0.5f;
  edited_x.x = tensor(before.x->shape, x);
  for (const al::Session* after : {&padded, &edited_x}) {
    auto fresh = compute_ok(*after);
    auto recomputed = al::compute(*after, {}, &before, previous);
    REQUIRE(recomputed.ok());
    for (Stage s : al::kAllStages) {
      CAPTURE(al::stage_name(s));
      REQUIRE((*recomputed)->has(s) == fresh->has(s));
      if (fresh->has(s)) CHECK((*recomputed)->stage(s).data == fresh->stage(s).data);
    }
    CHECK((*recomputed)->row_max->data == fresh->row_max->data);
  }
}
