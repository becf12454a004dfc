// FlashAttention: the tiled online-softmax computation must give the full
// trace's output for every tile size, shape, mask and fill value, end with the
// trace's row max and row sum, and hold O(n) memory. The tile steps are checked
// against a hand-worked case and against the online-softmax formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <omp.h>

#include "attention_reference.hpp"
#include "numerics/flash_attention.hpp"

using namespace attention_test;
using al::Stage;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<al::FlashTiles> kTileSizes = {{1, 1}, {4, 7}, {16, 16}, {64, 128}, {5, 1000}};

al::FlashResult flash_ok(const al::Session& s, const al::FlashTiles& tiles) {
  auto r = al::flash_attention(s, tiles);
  if (!r) FAIL(r.error().message);
  return std::move(r.value());
}

al::FlashSteps steps_ok(const al::Session& s, Index b, Index head, const al::FlashTiles& tiles) {
  auto r = al::flash_attention_steps(s, b, head, tiles);
  if (!r) FAIL(r.error().message);
  return std::move(r.value());
}

// The Context stage of one (b, head) as an (Lq, d_k) tensor.
Tensor head_context(const al::Trace& t, Index b, Index head) {
  const Tensor& c = t.stage(Stage::Context);
  const Index bh = b * t.dims.heads + head, n = t.dims.len_q * t.dims.d_k;
  return Tensor({t.dims.len_q, t.dims.d_k},
                std::vector<float>(c.data.begin() + bh * n, c.data.begin() + (bh + 1) * n));
}

// Output, every head's context, and final m and ℓ against the trace, for each tile size.
void check_matches_trace(const al::Session& s, const std::string& what) {
  auto trace = compute_ok(s);
  const al::Dims& d = trace->dims;
  for (const al::FlashTiles& tiles : kTileSizes) {
    CAPTURE(what);
    CAPTURE(tiles.queries);
    CAPTURE(tiles.keys);
    check_same_values(flash_ok(s, tiles).output, trace->stage(Stage::Output), what + " output", 1e-5);
    for (Index b = 0; b < d.batch; ++b)
      for (Index head = 0; head < d.heads; ++head) {
        const al::FlashSteps st = steps_ok(s, b, head, tiles);
        check_same_values(st.context, head_context(*trace, b, head), what + " context", 1e-5);
        for (Index i = 0; i < d.len_q; ++i) {
          const Index stat = (b * d.heads + head) * d.len_q + i;
          const float m = st.row_max.data[size_t(i)], l = st.row_sum.data[size_t(i)];
          const float trace_m = trace->row_max->data[size_t(stat)], trace_l = trace->row_sum->data[size_t(stat)];
          if (std::isinf(trace_m)) {
            // Every key -inf: the trace's ℓ is exp(-inf − -inf) = NaN; no key contributed to ours.
            CHECK(m == trace_m);
            CHECK(l == 0.0f);
          } else {
            CHECK(m == doctest::Approx(trace_m).epsilon(1e-5).scale(1.0));
            CHECK(l == doctest::Approx(trace_l).epsilon(1e-5));
          }
        }
      }
  }
}

}  // namespace

TEST_CASE("online softmax by hand: one query, keys 1 and 3, one key per tile") {
  // q = 1, k = [1, 3], v = [10, 20], no scaling: scores 1 and 3.
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.d_model = 1;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.config.attention = al::AttentionKind::Cross;
  s.config.scale = {al::ScaleMode::None, 1.0};
  s.q = tensor({1, 1, 1}, {1});
  s.k = tensor({1, 2, 1}, {1, 3});
  s.v = tensor({1, 2, 1}, {10, 20});
  const al::FlashSteps st = steps_ok(s, 0, 0, {1, 1});
  REQUIRE(st.steps.size() == 2);
  const al::FlashStep& a = st.steps[0];
  CHECK(a.key_begin == 0);
  CHECK(a.key_end == 1);
  CHECK(a.scores == std::vector<float>{1});
  CHECK(a.m_before[0] == -kInf);
  CHECK(a.l_before[0] == 0);
  CHECK(a.m_after[0] == 1);
  CHECK(a.rescale[0] == 0);  // exp(-inf − 1)
  CHECK(a.l_after[0] == 1);  // exp(1 − 1)
  CHECK(a.partial_output[0] == 10);
  const al::FlashStep& b = st.steps[1];
  CHECK(b.key_tile == 1);
  CHECK(b.scores == std::vector<float>{3});
  CHECK(b.m_after[0] == 3);  // the max grew: the old partial output is rescaled
  const double e = std::exp(-2.0);
  CHECK(b.rescale[0] == doctest::Approx(e));
  CHECK(b.l_after[0] == doctest::Approx(e + 1));
  CHECK(b.partial_output[0] == doctest::Approx(10 * e + 20));
  // softmax([1, 3])·[10, 20] = (10e⁻² + 20) / (e⁻² + 1)
  CHECK(st.context.data[0] == doctest::Approx((10 * e + 20) / (e + 1)));
  CHECK(st.row_max.data[0] == 3);
  CHECK(st.row_sum.data[0] == doctest::Approx(e + 1));
}

TEST_CASE("tiled output equals the full trace: projection, cross, direct without W_O") {
  check_matches_trace(random_projection_session(2, 37, 16, 2, 11), "projection B=2 L=37");
  check_matches_trace(random_projection_session(1, 9, 12, 3, 12), "projection L=9 h=3");

  al::Session cross = random_projection_session(2, 13, 8, 2, 13);
  cross.config.attention = al::AttentionKind::Cross;
  cross.x_kv = random_tensor({2, 29, 8}, 14);
  check_matches_trace(cross, "cross Lq=13 Lk=29");

  check_matches_trace(random_direct_session(1, 21, 6, 8, 2, 15), "direct Lq=21 Lk=6");

  al::Session custom_scale = random_projection_session(1, 17, 8, 1, 16);
  custom_scale.config.scale = {al::ScaleMode::Custom, 3.0};  // large scores: the running max moves a lot
  check_matches_trace(custom_scale, "custom scale 3");
}

TEST_CASE("tiled output equals the full trace: masks and fill values") {
  for (double fill : {-kInf, -1e9, -1e20, -1e-20, 0.0}) {
    const std::string f = " fill " + std::to_string(fill);
    al::Session causal = random_projection_session(2, 19, 8, 2, 21);
    causal.config.mask.causal = true;
    causal.config.mask_fill = fill;
    check_matches_trace(causal, "causal" + f);

    al::Session padded = random_projection_session(2, 11, 8, 2, 22);
    std::vector<float> pad(2 * 11, 1.0f);
    for (Index j = 7; j < 11; ++j) pad[size_t(j)] = 0;       // batch 0: the last 4 keys are padding
    for (Index j = 0; j < 3; ++j) pad[size_t(11 + j)] = 0;   // batch 1: the first 3 (a first tile all masked)
    padded.config.mask.key_padding = tensor({2, 11}, pad);
    padded.config.mask_fill = fill;
    check_matches_trace(padded, "key padding" + f);

    // Query 2 of batch 1 sees no key: NaN with -inf, the mean of V with a finite fill.
    al::Session fully = random_direct_session(2, 5, 9, 4, 2, 23);
    fully.config.attention = al::AttentionKind::Cross;
    std::vector<float> custom(2 * 5 * 9, 1.0f);
    for (Index j = 0; j < 9; ++j) custom[size_t(45 + 2 * 9 + j)] = 0;
    for (Index j = 4; j < 9; ++j) custom[size_t(0 * 45 + 1 * 9 + j)] = 0;
    fully.config.mask.custom = tensor({2, 5, 9}, custom);
    fully.config.mask.causal = true;
    fully.config.mask_fill = fill;
    check_matches_trace(fully, "fully masked row" + f);
  }
}

TEST_CASE("a fully masked row is NaN with -inf, like the plain path") {
  al::Session s = random_direct_session(1, 4, 4, 2, 2, 31);
  s.config.mask.key_padding = tensor({1, 4}, {0, 0, 0, 0});
  const al::FlashResult r = flash_ok(s, {2, 2});
  for (float v : r.output.data) CHECK(std::isnan(v));
  s.config.mask_fill = -1e9;  // a finite fill: every key weighs 1/4
  const al::FlashSteps st = steps_ok(s, 0, 1, {2, 2});
  double mean = 0;  // head 1 is column 1 of V (d_k = 1)
  for (Index j = 0; j < 4; ++j) mean += s.v->at({0, j, 1}) / 4.0;
  for (Index i = 0; i < 4; ++i) CHECK(st.context.at({i, 0}) == doctest::Approx(mean));
}

TEST_CASE("dropout in training drops the same weights as the full trace") {
  al::Session s = random_projection_session(2, 23, 8, 2, 41);
  s.config.dropout = {0.3, true, 7};
  check_matches_trace(s, "dropout p=0.3");
}

TEST_CASE("flash output agrees with the independent double-precision reference") {
  al::Session s = random_projection_session(2, 33, 16, 4, 51);
  s.config.mask.causal = true;
  check_close(flash_ok(s, {8, 8}).output, reference_attention(s).output, "output");
}

TEST_CASE("every step follows the online-softmax formulas") {
  al::Session s = random_projection_session(1, 10, 8, 2, 61);
  s.config.scale = {al::ScaleMode::Custom, 2.0};
  const al::FlashTiles tiles{4, 3};
  const al::FlashSteps st = steps_ok(s, 0, 1, tiles);
  CHECK(st.steps.size() == 3 * 4);  // ceil(10/4) query tiles x ceil(10/3) key tiles
  for (const al::FlashStep& step : st.steps) {
    const Index rows = step.query_end - step.query_begin, cols = step.key_end - step.key_begin;
    REQUIRE(step.scores.size() == size_t(rows * cols));
    REQUIRE(step.partial_output.size() == size_t(rows * st.d_k));
    for (Index r = 0; r < rows; ++r) {
      double tile_max = -kInf;
      for (Index c = 0; c < cols; ++c) tile_max = std::max(tile_max, double(step.scores[size_t(r * cols + c)]));
      const double m_new = std::max(double(step.m_before[size_t(r)]), tile_max);
      CHECK(step.m_after[size_t(r)] == m_new);
      const double factor = std::exp(step.m_before[size_t(r)] - m_new);
      CHECK(step.rescale[size_t(r)] == doctest::Approx(factor));
      double l = step.l_before[size_t(r)] * factor;
      for (Index c = 0; c < cols; ++c) l += std::exp(step.scores[size_t(r * cols + c)] - m_new);
      CHECK(step.l_after[size_t(r)] == doctest::Approx(l).epsilon(1e-5));
    }
  }
  // Key tile 0 starts every query tile from m = -inf, ℓ = 0.
  CHECK(st.steps[4].key_tile == 0);
  CHECK(st.steps[4].query_tile == 1);
  CHECK(st.steps[4].m_before[0] == -kInf);
}

TEST_CASE("causal with a -inf fill skips the key tiles right of the diagonal") {
  al::Session s = random_projection_session(1, 12, 8, 2, 71);
  s.config.mask.causal = true;
  // Query tiles of 4: tile 0 needs key tile 0, tile 1 key tiles 0-1, tile 2 key tiles 0-2.
  CHECK(steps_ok(s, 0, 0, {4, 4}).steps.size() == 1 + 2 + 3);
  s.config.mask_fill = -1e-20;  // a fill that does not mask: every tile counts
  CHECK(steps_ok(s, 0, 0, {4, 4}).steps.size() == 9);
}

TEST_CASE("memory: O(n) held, by formula") {
  const al::FlashTiles tiles{16, 32};
  auto held = [&](Index len) {
    const al::FlashSteps st = steps_ok(random_projection_session(1, len, 64, 2, 81), 0, 0, tiles);
    // d_k = 32: the output accumulator (L·32), m and ℓ (2·L) and one 16x32 scores tile, in floats.
    CHECK(st.held_bytes == 4 * (len * 32 + 2 * len + 16 * 32));
    CHECK(st.plain_bytes == 4 * 3 * len * len);  // scores, scaled (÷√d_k), weights; no mask, no dropout
    return st.held_bytes;
  };
  // Linear in L: equal increments.
  const Index h64 = held(64), h128 = held(128), h192 = held(192);
  CHECK(h128 - h64 == h192 - h128);

  const al::Dims d{2, 8, 100, 120, 512, 64};
  CHECK(al::flash_extra_bytes(d, {64, 128}, 2) ==
        4 * (2 * (100 + 240) * 512 + 2 * 100 * 512 + 2 * (64 * 128 + 64 * 64 + 3 * 64)));
  al::Session big = random_projection_session(1, 300, 16, 2, 82);
  const al::FlashResult r = flash_ok(big, {64, 128});
  CHECK(r.extra_bytes == al::flash_extra_bytes(r.dims, {64, 128}, r.threads));
  // 2.9e6 flops: the whole OpenMP team holds scratch; a tiny session runs on one thread.
  CHECK(r.threads == omp_get_max_threads());
  CHECK(flash_ok(random_projection_session(1, 4, 4, 1, 83), {64, 128}).threads == 1);
}

TEST_CASE("bad requests get clear errors") {
  al::Session s = random_projection_session(2, 8, 8, 2, 91);
  auto zero = al::flash_attention(s, {0, 4});
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().code == al::ErrorCode::InvalidConfig);
  CHECK(zero.error().message.find("at least one row") != std::string::npos);

  auto no_head = al::flash_attention_steps(s, 0, 2, {4, 4});
  REQUIRE_FALSE(no_head.ok());
  CHECK(no_head.error().message == "there is no batch item 0, head 2: the session has B = 2 and 2 heads");

  auto big = al::flash_attention_steps(random_direct_session(1, 600, 600, 2, 1, 92), 0, 0, {64, 64});
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code == al::ErrorCode::TooLarge);

  s.config.num_heads = 3;  // the session's own errors come through unchanged
  auto invalid = al::flash_attention(s, {4, 4});
  REQUIRE_FALSE(invalid.ok());
  CHECK(invalid.error().code == al::ErrorCode::HeadsDoNotDivide);
}
