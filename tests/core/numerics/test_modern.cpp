// Today's attention (issue 14) in the core: grouped-query heads, sinusoidal positions,
// RoPE, ALiBi, sliding windows and global tokens. Values by hand or by an explicit
// loop written from the formulas; PyTorch checks every stage in tests/torch/test_torch_modern.py.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/attention.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/flash_attention.hpp"
#include "numerics/linear_attention.hpp"
#include "numerics/positions.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::PositionalType;
using al::RopeStyle;
using al::Stage;

namespace {

// (B, L, n·d_k) with head blocks of `from` repeated: head h of the result is head h / group of `from`.
TensorPtr repeat_heads(const Tensor& w, Index kv_heads, Index heads, Index d_k) {
  const Index rows = w.size() / (kv_heads * d_k), group = heads / kv_heads;
  Tensor out({rows, heads * d_k});
  for (Index r = 0; r < rows; ++r)
    for (Index h = 0; h < heads; ++h)
      for (Index c = 0; c < d_k; ++c)
        out.data[size_t(r * heads * d_k + h * d_k + c)] = w.data[size_t(r * kv_heads * d_k + (h / group) * d_k + c)];
  return al::make_tensor(w.rank() == 1 ? Tensor({heads * d_k}, out.data) : std::move(out));
}

std::string error_of(const al::Session& s) {
  auto e = al::validate(s);
  return e ? e->message : "";
}

}  // namespace

TEST_CASE("ALiBi slopes are Press et al.'s: 2^-1 ... 2^-8 for 8 heads; for 6, four of the 4-head rule then two of the 8-head") {
  const std::vector<double> eight = al::detail::alibi_slopes(8);
  REQUIRE(eight.size() == 8);
  for (int h = 0; h < 8; ++h) CHECK(eight[size_t(h)] == doctest::Approx(std::pow(2.0, -(h + 1))).epsilon(1e-15));
  const std::vector<double> six = al::detail::alibi_slopes(6);
  const std::vector<double> expected = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  REQUIRE(six.size() == 6);
  for (int h = 0; h < 6; ++h) CHECK(six[size_t(h)] == doctest::Approx(expected[size_t(h)]).epsilon(1e-15));
}

TEST_CASE("ALiBi: biased = scaled − m_h·|i − j|, and the mask then applies to it") {
  al::Session s = random_projection_session(1, 6, 8, 2, 41);
  s.config.positional.type = PositionalType::Alibi;
  s.config.mask.causal = true;
  auto t = compute_ok(s);
  REQUIRE(t->has(Stage::Biased));
  const std::vector<double> m = {std::pow(2.0, -4), std::pow(2.0, -8)};  // 2 heads: 2^(−8/2·(h+1))
  for (Index h = 0; h < 2; ++h)
    for (Index i = 0; i < 6; ++i)
      for (Index j = 0; j < 6; ++j) {
        const Index cell = (h * 6 + i) * 6 + j;
        const double expected = t->stage(Stage::Scaled).data[size_t(cell)] - m[size_t(h)] * std::abs(double(i - j));
        CHECK(t->stage(Stage::Biased).data[size_t(cell)] == doctest::Approx(expected).epsilon(1e-6));
        if (j > i) CHECK(std::isinf(t->stage(Stage::Masked).data[size_t(cell)]));
        else CHECK(t->stage(Stage::Masked).data[size_t(cell)] == t->stage(Stage::Biased).data[size_t(cell)]);
      }
}

TEST_CASE("sinusoidal positions by hand: x = 0 gives PE[p] = (sin p, cos p, sin p/100, cos p/100) for d_model 4") {
  al::Session s = random_projection_session(1, 5, 4, 2, 43);
  s.x = al::make_tensor(Tensor({1, 5, 4}));
  s.config.positional.type = PositionalType::Sinusoidal;
  auto t = compute_ok(s);
  REQUIRE(t->has(Stage::XPos));
  CHECK_FALSE(t->has(Stage::XKvPos));
  for (Index p = 0; p < 5; ++p) {
    const float* row = t->stage(Stage::XPos).data.data() + p * 4;
    CHECK(row[0] == doctest::Approx(std::sin(double(p))));
    CHECK(row[1] == doctest::Approx(std::cos(double(p))));
    CHECK(row[2] == doctest::Approx(std::sin(p / 100.0)));
    CHECK(row[3] == doctest::Approx(std::cos(p / 100.0)));
  }
}

TEST_CASE("RoPE by hand: at position 1 the first pair turns by 1 radian, the second by base^(−2/4)") {
  al::Tensor x({1, 1, 2, 4}, std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0});  // positions 0 and 1
  al::PositionalSpec spec;
  spec.type = PositionalType::Rope;
  al::Tensor out(x.shape);
  al::rotate_by_position(x, spec, out);  // half: pairs (0, 2) and (1, 3)
  CHECK(out.data[0] == 1.0f);  // position 0 is not turned
  CHECK(out.data[4] == doctest::Approx(std::cos(1.0)));
  CHECK(out.data[5] == 0.0f);
  CHECK(out.data[6] == doctest::Approx(std::sin(1.0)));
  spec.rope_style = RopeStyle::Interleaved;  // pairs (0, 1) and (2, 3)
  al::rotate_by_position(x, spec, out);
  CHECK(out.data[4] == doctest::Approx(std::cos(1.0)));
  CHECK(out.data[5] == doctest::Approx(std::sin(1.0)));
  CHECK(out.data[6] == 0.0f);
  CHECK(al::rope_angle(3, 1, 4, 10000.0) == doctest::Approx(3.0 / 100.0));
}

TEST_CASE("RoPE: with the same q and k at every position, the score depends only on i − j") {
  for (RopeStyle style : {RopeStyle::Half, RopeStyle::Interleaved}) {
    al::Session s = random_direct_session(1, 7, 7, 8, 1, 47);
    std::vector<float> q_row(s.q->data.begin(), s.q->data.begin() + 8), k_row(s.k->data.begin(), s.k->data.begin() + 8);
    Tensor q({1, 7, 8}), k({1, 7, 8});
    for (Index p = 0; p < 7; ++p)
      for (Index c = 0; c < 8; ++c) {
        q.data[size_t(p * 8 + c)] = q_row[size_t(c)];
        k.data[size_t(p * 8 + c)] = k_row[size_t(c)];
      }
    s.q = al::make_tensor(std::move(q));
    s.k = al::make_tensor(std::move(k));
    s.config.positional.type = PositionalType::Rope;
    s.config.positional.rope_style = style;
    auto t = compute_ok(s);
    const Tensor& scores = t->stage(Stage::Scores);
    for (Index i = 0; i + 1 < 7; ++i)
      for (Index j = 0; j + 1 < 7; ++j)
        CHECK(scores.data[size_t((i + 1) * 7 + j + 1)] == doctest::Approx(scores.data[size_t(i * 7 + j)]).epsilon(1e-5));
    // A rotation keeps every row's length.
    for (Index p = 0; p < 7; ++p) {
      double before = 0, after = 0;
      for (Index c = 0; c < 8; ++c) {
        before += std::pow(t->stage(Stage::Q).data[size_t(p * 8 + c)], 2);
        after += std::pow(t->stage(Stage::QRot).data[size_t(p * 8 + c)], 2);
      }
      CHECK(after == doctest::Approx(before).epsilon(1e-5));
    }
  }
}

TEST_CASE("grouped-query attention equals multi-head attention whose K/V weights repeat per group") {
  const Index d = 16, heads = 8, kv_heads = 2, d_k = 2;
  al::Session gqa = with_kv_heads(random_projection_session(2, 6, d, heads, 53), kv_heads, 61);
  gqa.config.mask.causal = true;
  al::Session mha = gqa;
  mha.config.num_kv_heads = 0;
  mha.weights.w_k = repeat_heads(*gqa.weights.w_k, kv_heads, heads, d_k);
  mha.weights.w_v = repeat_heads(*gqa.weights.w_v, kv_heads, heads, d_k);
  mha.weights.b_k = repeat_heads(*gqa.weights.b_k, kv_heads, heads, d_k);
  mha.weights.b_v = repeat_heads(*gqa.weights.b_v, kv_heads, heads, d_k);
  auto g = compute_ok(gqa), m = compute_ok(mha);
  CHECK(g->stage(Stage::K).shape == std::vector<Index>{2, kv_heads, 6, d_k});
  CHECK(g->dims.kv_head(5) == 1);  // heads 4..7 share K/V head 1
  for (Stage st : {Stage::Scores, Stage::Weights, Stage::Context, Stage::Output})
    check_same_values(g->stage(st), m->stage(st), al::stage_name(st), 1e-6);
  // The fused form holds Q | K | V = d + 2·H_kv·d_k columns.
  al::Session fused = gqa;
  Tensor w_qkv({d, d + 2 * kv_heads * d_k}), b_qkv({d + 2 * kv_heads * d_k});
  for (Index r = 0; r < d; ++r)
    for (Index c = 0; c < d + 8; ++c) {
      const Tensor& src = c < d ? *gqa.weights.w_q : c < d + 4 ? *gqa.weights.w_k : *gqa.weights.w_v;
      const Index col = c < d ? c : c < d + 4 ? c - d : c - d - 4;
      w_qkv.data[size_t(r * (d + 8) + c)] = src.data[size_t(r * src.cols() + col)];
    }
  for (Index c = 0; c < d + 8; ++c)
    b_qkv.data[size_t(c)] = c < d ? gqa.weights.b_q->data[size_t(c)] : c < d + 4 ? gqa.weights.b_k->data[size_t(c - d)]
                                                                                 : gqa.weights.b_v->data[size_t(c - d - 4)];
  fused.weights = {};
  fused.weights.w_qkv = al::make_tensor(std::move(w_qkv));
  fused.weights.b_qkv = al::make_tensor(std::move(b_qkv));
  fused.weights.w_o = gqa.weights.w_o;
  fused.weights.b_o = gqa.weights.b_o;
  check_same_values(compute_ok(fused)->stage(Stage::Output), g->stage(Stage::Output), "fused output", 1e-6);
}

TEST_CASE("sliding windows and global tokens by an explicit loop, with causal and key padding on top") {
  for (bool causal : {false, true})
    for (Index window : {1, 2, 4}) {
      al::Session s = random_projection_session(2, 9, 8, 2, 71);
      s.config.mask.causal = causal;
      s.config.mask.window = window;
      s.config.mask.global_tokens = {0, 6};
      s.config.mask.key_padding = tensor({2, 9}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0});
      auto t = compute_ok(s);
      REQUIRE(t->mask);
      for (Index b = 0; b < 2; ++b)
        for (Index i = 0; i < 9; ++i)
          for (Index j = 0; j < 9; ++j) {
            const bool global = i == 0 || i == 6 || j == 0 || j == 6;
            bool attend = std::abs(i - j) < window || global;
            if (causal && j > i) attend = false;
            if (b == 1 && j >= 7) attend = false;
            CHECK_MESSAGE(t->mask->data[size_t((b * 9 + i) * 9 + j)] == (attend ? 1.0f : 0.0f),
                          "causal " << causal << " window " << window << " b " << b << " i " << i << " j " << j);
          }
      CHECK(t->checks.masked_weight_max == 0.0);
      CHECK(t->checks.row_sum_error_max < 1e-6);
    }
  // Mistral's convention: with causal, window w means the w most recent keys including itself.
  al::Session s = random_projection_session(1, 6, 4, 1, 73);
  s.config.mask.causal = true;
  s.config.mask.window = 3;
  auto t = compute_ok(s);
  for (Index j = 0; j < 6; ++j) CHECK(t->mask->data[size_t(5 * 6 + j)] == (j >= 3 ? 1.0f : 0.0f));
}

TEST_CASE("a recompute after an edit equals a fresh computation with every new option on") {
  al::Session before = with_kv_heads(random_projection_session(1, 8, 16, 4, 81), 2, 82);
  before.config.mask.causal = true;
  before.config.mask.window = 3;
  for (PositionalType type : {PositionalType::Rope, PositionalType::Alibi, PositionalType::Sinusoidal}) {
    before.config.positional.type = type;
    al::Session after = before;
    Tensor x = *before.x;
    x.data[5] += 1.0f;  // one cell of X
    after.x = al::make_tensor(std::move(x));
    auto previous = compute_ok(before);
    auto incremental = al::compute(after, {}, &before, previous);
    REQUIRE(incremental.ok());
    auto fresh = compute_ok(after);
    for (Stage st : al::kAllStages) {
      REQUIRE(incremental.value()->has(st) == fresh->has(st));
      if (fresh->has(st)) CHECK_MESSAGE(incremental.value()->stage(st) == fresh->stage(st), al::stage_name(st));
    }
    // Switching the positions off recomputes to the plain trace.
    al::Session plain = after;
    plain.config.positional = {};
    auto switched = al::compute(plain, {}, &after, fresh);
    REQUIRE(switched.ok());
    check_same_values(switched.value()->stage(Stage::Output), compute_ok(plain)->stage(Stage::Output), "off", 0);
  }
}

TEST_CASE("FlashAttention gives the trace's output with GQA, RoPE, ALiBi, windows and global tokens") {
  al::Session s = with_kv_heads(random_projection_session(2, 70, 24, 6, 91), 3, 92);
  s.config.mask.window = 9;
  s.config.mask.global_tokens = {0};
  for (PositionalType type : {PositionalType::Rope, PositionalType::Alibi, PositionalType::Sinusoidal}) {
    s.config.positional.type = type;
    auto flash = al::flash_attention(s, {16, 32});
    REQUIRE(flash.ok());
    check_same_values(flash->output, compute_ok(s)->stage(Stage::Output), "flash", 1e-5);
  }
  s.config.positional.type = PositionalType::Rope;
  s.config.mask.window = 0;
  s.config.mask.global_tokens = {};
  auto linear = al::linear_attention(s, false);
  REQUIRE(linear.ok());  // GQA and RoPE work with linear attention; windows and ALiBi are refused
  s.config.mask.window = 4;
  CHECK(al::linear_attention(s, false).error().message.find("sliding window") != std::string::npos);
}

TEST_CASE("validate refuses impossible combinations and says why") {
  al::Session s = random_projection_session(1, 5, 8, 4, 97);
  s.config.num_kv_heads = 3;
  CHECK(error_of(s).find("divides num_heads = 4") != std::string::npos);
  s.config.num_kv_heads = 2;
  CHECK(error_of(s).find("w_k has shape 8x8 but must be 8x4") != std::string::npos);
  s.config.num_kv_heads = 0;
  s.config.num_heads = 8;  // d_k = 1
  s.config.positional.type = PositionalType::Rope;
  CHECK(error_of(s).find("d_k = d_model / num_heads must be even") != std::string::npos);
  s.config.num_heads = 4;
  s.config.positional.rope_base = 1.0;
  CHECK(error_of(s).find("rope_base") != std::string::npos);
  s.config.positional = {};
  s.config.mask.global_tokens = {5};
  CHECK(error_of(s).find("global token 5 is not a position of the sequence (0 to 4)") != std::string::npos);
  s.config.mask.global_tokens = {};
  al::Session direct = random_direct_session(1, 4, 4, 8, 2, 99);
  direct.config.positional.type = PositionalType::Sinusoidal;
  CHECK(error_of(direct).find("direct mode has no x") != std::string::npos);
  direct.config.positional.type = PositionalType::None;
  direct.config.num_kv_heads = 1;
  CHECK(error_of(direct).find("k has shape 1x4x8 but num_kv_heads·d_k is 4") != std::string::npos);
  al::Session cross = random_direct_session(1, 4, 6, 8, 2, 101);
  cross.config.mask.global_tokens = {0};
  CHECK(error_of(cross).find("need self attention") != std::string::npos);
}
