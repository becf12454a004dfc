// Linear attention: the O(n·d²) form must equal the explicit n×n formula
// (computed here with naive double loops), its implicit matrix must have rows
// summing to 1, masks must drop keys, and the operation counts are checked by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "attention_reference.hpp"
#include "numerics/linear_attention.hpp"

using namespace attention_test;

namespace {

double phi(double x) { return x > 0 ? x + 1 : std::exp(x); }

al::LinearAttentionResult linear_ok(const al::Session& s, bool with_matrix) {
  auto r = al::linear_attention(s, with_matrix);
  if (!r) FAIL(r.error().message);
  return std::move(r.value());
}

struct Explicit {
  std::vector<double> attention;  // (B, h, Lq, Lk)
  std::vector<double> context;    // (B, h, Lq, d_k)
};

// A_ij = φ(q_i)·φ(k_j) over the keys query i may see, divided by the row's sum;
// context = A·V. Direct mode: Q, K, V are the session's inputs split into heads.
Explicit explicit_linear(const al::Session& s) {
  const Index B = s.q->dim(0), Lq = s.q->dim(1), Lk = s.k->dim(1), d = s.config.d_model, h = s.config.num_heads;
  const Index dk = d / h;
  const auto q = split_heads(to_double(*s.q), B, Lq, d, h), k = split_heads(to_double(*s.k), B, Lk, d, h),
             v = split_heads(to_double(*s.v), B, Lk, d, h);
  Explicit e;
  e.attention.assign(size_t(B * h * Lq * Lk), 0.0);
  e.context.assign(size_t(B * h * Lq * dk), 0.0);
  for (Index b = 0; b < B; ++b)
    for (Index hh = 0; hh < h; ++hh)
      for (Index i = 0; i < Lq; ++i) {
        const Index bh = b * h + hh;
        std::vector<double> row(size_t(Lk), 0.0);
        double sum = 0;
        for (Index j = 0; j < Lk; ++j) {
          const bool padded = s.config.mask.key_padding && s.config.mask.key_padding->data[size_t(b * Lk + j)] == 0;
          if (padded || (s.config.mask.causal && j > i)) continue;
          for (Index t = 0; t < dk; ++t)
            row[size_t(j)] += phi(q[size_t((bh * Lq + i) * dk + t)]) * phi(k[size_t((bh * Lk + j) * dk + t)]);
          sum += row[size_t(j)];
        }
        for (Index j = 0; j < Lk; ++j) {
          const double a = row[size_t(j)] / sum;
          e.attention[size_t((bh * Lq + i) * Lk + j)] = a;
          for (Index t = 0; t < dk; ++t)
            e.context[size_t((bh * Lq + i) * dk + t)] += a * v[size_t((bh * Lk + j) * dk + t)];
        }
      }
  return e;
}

void check_rows_sum_to_one(const Tensor& a) {
  const Index lk = a.cols();
  for (Index row = 0; row < a.size() / lk; ++row) {
    double sum = 0;
    for (Index j = 0; j < lk; ++j) sum += a.data[size_t(row * lk + j)];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("elu + 1 by hand") {
  CHECK(al::elu_plus_one(0.0f) == 1.0f);
  CHECK(al::elu_plus_one(1.5f) == 2.5f);
  CHECK(al::elu_plus_one(-1.0f) == doctest::Approx(std::exp(-1.0)));
  CHECK(al::elu_plus_one(-100.0f) >= 0.0f);  // always non-negative: a valid similarity
}

TEST_CASE("one query, two keys, by hand") {
  // q = 0, k = [1, -1], v = [3, 5]: φ(q) = 1, φ(k) = [2, e⁻¹]
  // out = (2·3 + e⁻¹·5) / (2 + e⁻¹)
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.attention = al::AttentionKind::Cross;
  s.config.d_model = 1;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.q = tensor({1, 1, 1}, {0});
  s.k = tensor({1, 2, 1}, {1, -1});
  s.v = tensor({1, 2, 1}, {3, 5});
  const auto r = linear_ok(s, true);
  const double e = std::exp(-1.0);
  CHECK(r.context.data[0] == doctest::Approx((6 + 5 * e) / (2 + e)));
  CHECK(r.output.data[0] == doctest::Approx((6 + 5 * e) / (2 + e)));  // no W_O: output = concat
  CHECK(r.attention.data[0] == doctest::Approx(2 / (2 + e)));
  CHECK(r.attention.data[1] == doctest::Approx(e / (2 + e)));
}

TEST_CASE("O(n·d²) output equals the explicit n×n formula; rows sum to 1") {
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    al::Session s = random_direct_session(2, 7, causal ? 7 : 11, 8, 2, 101);
    s.config.mask.causal = causal;
    const auto r = linear_ok(s, true);
    const Explicit e = explicit_linear(s);
    check_close(r.context, e.context, "context");
    check_close(r.attention, e.attention, "attention");
    check_rows_sum_to_one(r.attention);
    CHECK(r.attention.shape == std::vector<Index>{2, 2, 7, causal ? 7 : 11});
    // Without the matrix, the same context and no (Lq, Lk) tensor.
    const auto lean = linear_ok(s, false);
    CHECK(lean.attention.empty());
    CHECK(lean.context == r.context);
  }
}

TEST_CASE("key padding leaves keys out; a query with no key left is NaN") {
  al::Session s = random_direct_session(2, 5, 6, 4, 2, 111);
  s.config.mask.key_padding = tensor({2, 6}, {1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0});
  const auto r = linear_ok(s, true);
  const Explicit e = explicit_linear(s);  // batch 1: 0/0 = NaN there too
  check_close(r.context, e.context, "context");
  for (Index i = 0; i < 5; ++i) {
    CHECK(r.attention.at({0, 1, i, 2}) == 0.0f);
    CHECK(std::isnan(r.context.at({1, 0, i, 0})));
  }
}

TEST_CASE("projection mode: output = concat · W_O + b_O") {
  al::Session s = random_projection_session(1, 6, 8, 2, 121);
  const auto r = linear_ok(s, false);
  const Index d = 8, dk = 4;
  for (Index i = 0; i < 6; ++i)
    for (Index c = 0; c < d; ++c) {
      double expected = s.weights.b_o->data[size_t(c)];
      for (Index t = 0; t < d; ++t) expected += double(r.context.at({0, t / dk, i, t % dk})) * s.weights.w_o->at({t, c});
      CHECK(r.output.at({0, i, c}) == doctest::Approx(expected).epsilon(1e-5));
    }
}

TEST_CASE("a custom mask is refused with a reason") {
  al::Session s = random_direct_session(1, 3, 3, 2, 1, 131);
  s.config.mask.custom = tensor({3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1});
  auto r = al::linear_attention(s, true);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == al::ErrorCode::InvalidConfig);
  CHECK(r.error().message.find("custom mask") != std::string::npos);
}

TEST_CASE("operation counts by hand") {
  // One head, Lq = Lk = 4, d_k = 2:
  //   softmax: QKᵀ 4·4·2 = 32, weights·V 4·4·2 = 32 -> 64 multiply-adds; 16 exp; 16 divisions
  //   linear:  φ(K)ᵀV 4·2·2 = 16, φ(K)ᵀ1 4·2 = 8, φ(Q)·KV 4·2·2 = 16, φ(Q)·z 4·2 = 8 -> 48;
  //            φ of 8 rows of 2 = 16; 4 outputs of 2 divided = 8
  const al::AttentionCosts tiny = al::attention_costs(al::Dims{1, 1, 4, 4, 2, 2});
  CHECK(tiny.softmax.multiply_adds == 64);
  CHECK(tiny.softmax.exponentials == 16);
  CHECK(tiny.softmax.divisions == 16);
  CHECK(tiny.linear.multiply_adds == 48);
  CHECK(tiny.linear.exponentials == 16);
  CHECK(tiny.linear.divisions == 8);

  // Seed 000's example, B = 16, 8 heads, L = 100, d_k = 64 (128 heads in all):
  //   softmax 128·(100·100·64·2) = 163 840 000; linear 128·(2·100·64·64 + 2·100·64) = 106 496 000.
  const al::AttentionCosts seed = al::attention_costs(al::Dims{16, 8, 100, 100, 512, 64});
  CHECK(seed.softmax.multiply_adds == 163840000);
  CHECK(seed.linear.multiply_adds == 106496000);
  // At L = 2048 the n² term wins: linear is 2048/(64+1) ≈ 31.5 times fewer.
  const al::AttentionCosts long_seq = al::attention_costs(al::Dims{1, 8, 2048, 2048, 512, 64});
  CHECK(long_seq.softmax.multiply_adds == 8LL * 2048 * 2048 * 128);
  CHECK(long_seq.linear.multiply_adds == 8LL * 2 * 2048 * 65 * 64);
}
