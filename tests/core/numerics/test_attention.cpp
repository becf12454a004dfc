// The attention computation: real values from hand computations and from an
// independent double-precision reference (attention_reference.hpp), invariants,
// and every error's message. Masks, dropout, scale and bias: test_attention_options.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "numerics/attention.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::Stage;

namespace {

// Seed 003 §6: Q, K, V of 5 tokens with d_k = 2, in direct mode, one head, no W_O.
al::Session seed_003_session() {
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.d_model = 2;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.q = tensor({1, 5, 2}, {1.0f, 0.0f, 0.5f, 0.5f, 0.0f, 1.0f, 1.0f, 1.0f, 0.3f, 0.7f});
  s.k = tensor({1, 5, 2}, {1.0f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f, 0.0f, 1.0f, 1.0f, 0.0f});
  s.v = tensor({1, 5, 2}, {10.0f, 0.0f, 0.0f, 10.0f, 5.0f, 5.0f, 0.0f, 0.0f, 1.0f, 1.0f});
  return s;
}

// Tiny 2-head case worked by hand, d_model = 4 (d_k = 2), L = 2, direct mode.
// The custom scale ln 3 makes exp(scaled score) = 3^score, so the weights are
// simple fractions:
//   head 0: Q0 = [[1,0],[0,1]], K0 = [[1,0],[0,0]] -> scores [[1,0],[0,0]]
//           -> exp [[3,1],[1,1]] -> weights [[3/4,1/4],[1/2,1/2]]
//   head 1: Q1 = [[0,1],[1,0]], K1 = [[0,0],[1,0]] -> scores [[0,0],[0,1]]
//           -> weights [[1/2,1/2],[1/4,3/4]]
//   V0 = [[4,0],[0,4]], V1 = [[8,0],[0,8]]
//   context0 = [[3,1],[2,2]], context1 = [[4,4],[2,6]]
//   concat = [[3,1,4,4],[2,2,2,6]]
//   W_O = [[1,0,0,0],[0,1,0,0],[0,0,1,0],[1,1,1,1]], b_O = [1,-1,0,0.5]
//   output = concat·W_O + b_O = [[7,5,8,4]+b_O, [8,8,8,6]+b_O] = [[8,4,8,4.5],[9,7,8,6.5]]
al::Session two_head_session() {
  al::Session s;
  s.config.mode = al::InputMode::Direct;
  s.config.d_model = 4;
  s.config.num_heads = 2;
  s.config.bias = true;
  s.config.scale = {al::ScaleMode::Custom, std::log(3.0)};
  s.q = tensor({1, 2, 4}, {1, 0, 0, 1, 0, 1, 1, 0});
  s.k = tensor({1, 2, 4}, {1, 0, 0, 0, 0, 0, 1, 0});
  s.v = tensor({1, 2, 4}, {4, 0, 8, 0, 0, 4, 0, 8});
  s.weights.w_o = tensor({4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1});
  s.weights.b_o = tensor({4}, {1, -1, 0, 0.5f});
  return s;
}

}  // namespace

TEST_CASE("seed 003 §6 example: true weights and outputs") {
  auto t = compute_ok(seed_003_session());
  const Tensor& w = t->stage(Stage::Weights);
  const Tensor& out = t->stage(Stage::Output);
  REQUIRE(w.shape == std::vector<Index>{1, 1, 5, 5});
  REQUIRE(out.shape == std::vector<Index>{1, 5, 2});

  // Row 1 by hand: q1 = [1, 0], so scores = q1·k_j = [1, 0.5, 1, 0, 1];
  // divided by √2: [0.7071, 0.3536, 0.7071, 0, 0.7071].
  // exp: [2.028115, 1.424119, 2.028115, 1, 2.028115], sum = 8.508464
  // α_1 = [0.238364, 0.167377, 0.238364, 0.117530, 0.238364]
  CHECK(t->stage(Stage::Scaled).data[0] == doctest::Approx(0.707107).epsilon(1e-5));
  CHECK(t->stage(Stage::Scaled).data[1] == doctest::Approx(0.353553).epsilon(1e-5));
  CHECK(t->stage(Stage::Scaled).data[3] == doctest::Approx(0.0));
  CHECK(w.data[0] == doctest::Approx(0.238364).epsilon(1e-5));
  CHECK(w.data[1] == doctest::Approx(0.167377).epsilon(1e-5));
  CHECK(w.data[2] == doctest::Approx(0.238364).epsilon(1e-5));
  CHECK(w.data[3] == doctest::Approx(0.117530).epsilon(1e-5));
  CHECK(w.data[4] == doctest::Approx(0.238364).epsilon(1e-5));
  CHECK(t->row_max->data[0] == doctest::Approx(0.707107).epsilon(1e-5));
  CHECK(t->row_sum->data[0] == doctest::Approx(8.508464 / 2.028115).epsilon(1e-5));  // sum of exp(x - max)
  // Output row 1 = Σ α_1j v_j = [10·α11 + 5·α13 + α15, 10·α12 + 5·α13 + α15]
  //             = [16 · 0.238364, 1.67377 + 6 · 0.238364] = [3.81383, 3.10396]
  CHECK(out.data[0] == doctest::Approx(3.81383).epsilon(1e-5));
  CHECK(out.data[1] == doctest::Approx(3.10396).epsilon(1e-5));
  // Row 4 by hand: q4 = [1, 1]: scores [1.5, 1.5, 2, 1, 1] / √2; the third key wins:
  // exp [2.888279, 2.888279, 4.113250, 2.028115, 2.028115], sum 13.946038 -> α_43 = 0.294940
  CHECK(w.data[3 * 5 + 2] == doctest::Approx(0.294940).epsilon(1e-5));

  // Every value against the independent reference.
  const Reference ref = reference_attention(seed_003_session());
  check_close(t->stage(Stage::Scores), ref.scores, "scores");
  check_close(w, ref.weights, "weights");
  check_close(out, ref.output, "output");
  check_rows_sum_to_one(*t);
  // Direct mode without W_O: the output is the concat itself, stored once.
  CHECK(t->stage_ptr(Stage::Output) == t->stage_ptr(Stage::Concat));
}

TEST_CASE("seed 003 §6: the seed's printed numbers are wrong") {
  auto t = compute_ok(seed_003_session());
  const Tensor& w = t->stage(Stage::Weights);
  // The seed prints α_11 = 0.2514; the true value is 0.2384.
  CHECK(std::abs(w.data[0] - 0.2514) > 0.01);
  // It prints α_11 = 0.2514 and α_13 = 0.2250, but k_1·q_1 = k_3·q_1 = 1, so α_11 must equal α_13.
  CHECK(w.data[0] == w.data[2]);
  // It prints the output of position 1 as [-0.2697, 0.2697]; the output is a weighted
  // average of the rows of V, all of which are >= 0, so no output can be negative.
  const Tensor& out = t->stage(Stage::Output);
  for (float value : out.data) CHECK(value >= 0.0f);
  CHECK(std::abs(out.data[0] - (-0.2697)) > 1.0);
}

TEST_CASE("two heads worked by hand (direct mode, W_O and b_O)") {
  auto t = compute_ok(two_head_session());
  CHECK(t->scale == doctest::Approx(std::log(3.0)));
  check_close(t->stage(Stage::Scores), {1, 0, 0, 0, /* head 1 */ 0, 0, 0, 1}, "scores");
  check_close(t->stage(Stage::Weights), {0.75, 0.25, 0.5, 0.5, /* head 1 */ 0.5, 0.5, 0.25, 0.75}, "weights", 1e-6,
              1e-6);
  check_close(t->stage(Stage::Context), {3, 1, 2, 2, /* head 1 */ 4, 4, 2, 6}, "context");
  check_close(t->stage(Stage::Concat), {3, 1, 4, 4, 2, 2, 2, 6}, "concat");
  check_close(t->stage(Stage::Output), {8, 4, 8, 4.5, 9, 7, 8, 6.5}, "output");
  CHECK(t->stage(Stage::Q).shape == std::vector<Index>{1, 2, 2, 2});
  // Head 1 of Q is columns 2..3: row 0 = [0, 1].
  CHECK(t->stage(Stage::Q).at({0, 1, 0, 0}) == 0.0f);
  CHECK(t->stage(Stage::Q).at({0, 1, 0, 1}) == 1.0f);

  SUBCASE("bias off ignores b_O") {
    al::Session s = two_head_session();
    s.config.bias = false;
    auto u = compute_ok(s);
    check_close(u->stage(Stage::Output), {7, 5, 8, 4, 8, 8, 8, 6}, "output without bias");
  }
}

TEST_CASE("projection mode reproduces the hand-worked two-head case") {
  // X picks rows 0 and 1 of every weight, so Q = rows 0..1 of W_Q and so on.
  al::Session direct = two_head_session();
  al::Session s;
  s.config = direct.config;
  s.config.mode = al::InputMode::Projection;
  s.x = tensor({2, 4}, {1, 0, 0, 0, 0, 1, 0, 0});  // 2-D input: B = 1
  auto padded = [](const TensorPtr& rows) {
    std::vector<float> w(16, 0.0f);
    std::copy(rows->data.begin(), rows->data.end(), w.begin());
    return tensor({4, 4}, w);
  };
  s.weights.w_q = padded(direct.q);
  s.weights.w_k = padded(direct.k);
  s.weights.w_v = padded(direct.v);
  s.weights.w_o = direct.weights.w_o;
  s.weights.b_o = direct.weights.b_o;
  const TensorPtr zero = tensor({4}, {0, 0, 0, 0});
  s.weights.b_q = s.weights.b_k = s.weights.b_v = zero;
  auto t = compute_ok(s);
  check_close(t->stage(Stage::Output), {8, 4, 8, 4.5, 9, 7, 8, 6.5}, "output");

  SUBCASE("biases shift Q, K and V") {
    s.weights.b_v = tensor({4}, {1, 2, 3, 4});
    auto u = compute_ok(s);
    // Weights are unchanged and each row of weights sums to 1, so context gains exactly b_V's block.
    check_close(u->stage(Stage::Context), {4, 3, 3, 4, /* head 1 */ 7, 8, 5, 10}, "context");
    s.weights.b_q = tensor({4}, {0.5f, -1, 2, 0});
    check_close(compute_ok(s)->stage(Stage::Output), reference_attention(s).output, "output");
  }
}

TEST_CASE("random multi-head projection against the reference; rows sum to 1") {
  al::Session s = random_projection_session(2, 7, 8, 2, 11);
  auto t = compute_ok(s);
  const Reference ref = reference_attention(s);
  check_close(t->stage(Stage::Q), ref.q, "q");
  check_close(t->stage(Stage::K), ref.k, "k");
  check_close(t->stage(Stage::V), ref.v, "v");
  check_close(t->stage(Stage::Scores), ref.scores, "scores");
  check_close(t->stage(Stage::Weights), ref.weights, "weights");
  check_close(t->stage(Stage::Concat), ref.concat, "concat");
  check_close(t->stage(Stage::Output), ref.output, "output");
  check_rows_sum_to_one(*t);
  // Without mask, dropout or a scale of 1 the shared stages are stored once.
  CHECK(t->stage_ptr(Stage::Masked) == t->stage_ptr(Stage::Scaled));
  CHECK(t->stage_ptr(Stage::Dropped) == t->stage_ptr(Stage::Weights));
  CHECK(t->stage_ptr(Stage::Scaled) != t->stage_ptr(Stage::Scores));
  CHECK(t->mask == nullptr);
  CHECK_FALSE(t->any_fully_masked());
  CHECK(t->fully_masked_rows.size() == 14u);

  SUBCASE("stage shapes") {
    const std::vector<Index> qk = {2, 2, 7, 4}, square = {2, 2, 7, 7}, model = {2, 7, 8};
    for (Stage st : {Stage::Q, Stage::K, Stage::V, Stage::Context}) CHECK(t->stage(st).shape == qk);
    for (Stage st : {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Dropped})
      CHECK(t->stage(st).shape == square);
    CHECK(t->stage(Stage::Concat).shape == model);
    CHECK(t->stage(Stage::Output).shape == model);
    CHECK(t->row_max->shape == std::vector<Index>{2, 2, 7});
  }
}

TEST_CASE("big enough to run in parallel: matches the reference") {
  // L = 300 spans several row blocks per head and both threads; two sequences.
  al::Session s = random_projection_session(2, 300, 32, 4, 5);
  s.config.mask.causal = true;
  auto t = compute_ok(s);
  const Reference ref = reference_attention(s);
  check_close(t->stage(Stage::Weights), ref.weights, "weights", 1e-4, 1e-5);
  check_close(t->stage(Stage::Concat), ref.concat, "concat", 1e-4, 1e-4);
  check_close(t->stage(Stage::Output), ref.output, "output", 1e-4, 1e-4);
}

TEST_CASE("concat holds each head's context side by side, written by the per-head pass") {
  // Past kSweepAboveKeys keys, several row blocks and a partial one, two sequences, two query
  // heads per K/V head: concat (B, L, d) against context (B, h, L, d_k), cell by cell.
  al::Session s = random_projection_session(2, 300, 64, 4, 9);
  s.config.num_kv_heads = 2;
  s.weights.w_k = random_tensor({64, 32}, 10);
  s.weights.w_v = random_tensor({64, 32}, 11);
  s.weights.b_k = random_tensor({32}, 12);
  s.weights.b_v = random_tensor({32}, 13);
  auto t = compute_ok(s);
  const al::Tensor &context = t->stage(Stage::Context), &concat = t->stage(Stage::Concat);
  REQUIRE(context.shape == std::vector<Index>{2, 4, 300, 16});
  REQUIRE(concat.shape == std::vector<Index>{2, 300, 64});
  Index differing = 0;
  for (Index b = 0; b < 2; ++b)
    for (Index l = 0; l < 300; ++l)
      for (Index h = 0; h < 4; ++h)
        for (Index c = 0; c < 16; ++c)
          differing += concat.data[size_t((b * 300 + l) * 64 + h * 16 + c)] !=
                       context.data[size_t(((b * 4 + h) * 300 + l) * 16 + c)];
  CHECK(differing == 0);
}

namespace {

// The same session with W_qkv = [W_Q | W_K | W_V] column blocks and b_qkv = [b_Q, b_K, b_V]
// in place of the three separate weights.
al::Session with_fused_qkv(al::Session s) {
  const Index d = s.config.d_model;
  std::vector<float> w(size_t(d * 3 * d)), b;
  const TensorPtr ws[3] = {s.weights.w_q, s.weights.w_k, s.weights.w_v};
  const TensorPtr bs[3] = {s.weights.b_q, s.weights.b_k, s.weights.b_v};
  for (int part = 0; part < 3; ++part) {
    for (Index r = 0; r < d; ++r)
      for (Index c = 0; c < d; ++c) w[size_t(r * 3 * d + part * d + c)] = ws[part]->data[size_t(r * d + c)];
    b.insert(b.end(), bs[part]->data.begin(), bs[part]->data.end());
  }
  s.weights.w_q = s.weights.w_k = s.weights.w_v = nullptr;
  s.weights.b_q = s.weights.b_k = s.weights.b_v = nullptr;
  s.weights.w_qkv = tensor({d, 3 * d}, w);
  s.weights.b_qkv = tensor({3 * d}, b);
  return s;
}

// x (B, L, d) · w (d, heads·d_k) + bias, in double, one element at a time, laid out as the
// trace keeps it: (B, heads, L, d_k).
std::vector<double> heads_of_projection(const Tensor& x, const Tensor& w, const Tensor& bias, Index heads) {
  const Index batch = x.shape[0], len = x.shape[1], d = x.shape[2], d_k = w.shape[1] / heads;
  std::vector<double> out(static_cast<size_t>(batch * heads * len * d_k));
  for (Index b = 0; b < batch; ++b)
    for (Index h = 0; h < heads; ++h)
      for (Index l = 0; l < len; ++l)
        for (Index c = 0; c < d_k; ++c) {
          double sum = bias.data[size_t(h * d_k + c)];
          for (Index p = 0; p < d; ++p)
            sum += double(x.data[size_t((b * len + l) * d + p)]) * w.data[size_t(p * w.shape[1] + h * d_k + c)];
          out[size_t(((b * heads + h) * len + l) * d_k + c)] = sum;
        }
  return out;
}

}  // namespace

TEST_CASE("projections with d_k a multiple of 16 are written straight into the heads") {
  // d_k = 16 and 32 take the path that writes each head's rows in place (no copy); row
  // blocks of B·L rows cross from one batch element to the next, K/V may have fewer heads,
  // and a fused W_qkv's column blocks span Q, K and V.
  auto check_projections = [](const al::Session& s, const al::Trace& t) {
    const al::Config& c = s.config;
    const Tensor& x_kv = c.attention == al::AttentionKind::Cross ? *s.x_kv : *s.x;
    const Index kv = c.kv_heads(), d_k = c.d_model / c.num_heads;
    check_close(t.stage(Stage::Q), heads_of_projection(*s.x, *s.weights.w_q, *s.weights.b_q, c.num_heads), "q");
    check_close(t.stage(Stage::K), heads_of_projection(x_kv, *s.weights.w_k, *s.weights.b_k, kv), "k");
    check_close(t.stage(Stage::V), heads_of_projection(x_kv, *s.weights.w_v, *s.weights.b_v, kv), "v");
    CHECK(t.stage(Stage::K).shape == std::vector<Index>{x_kv.shape[0], kv, x_kv.shape[1], d_k});
  };
  SUBCASE("self attention, B = 3, L = 37, d_k = 32") {
    al::Session s = random_projection_session(3, 37, 64, 2, 61);
    check_projections(s, *compute_ok(s));
  }
  SUBCASE("grouped K/V: 4 query heads over 2, d_k = 16, B = 2, L = 150") {
    al::Session s = with_kv_heads(random_projection_session(2, 150, 64, 4, 62), 2, 63);
    check_projections(s, *compute_ok(s));
  }
  SUBCASE("cross attention, Lq = 20, Lk = 33, d_k = 16") {
    al::Session s = random_projection_session(2, 20, 32, 2, 64);
    s.config.attention = al::AttentionKind::Cross;
    s.x_kv = random_tensor({2, 33, 32}, 65);
    check_projections(s, *compute_ok(s));
  }
  SUBCASE("fused W_qkv: the same bits as separate weights") {
    const al::Session sep = random_projection_session(2, 70, 32, 2, 66);
    auto a = compute_ok(sep), f = compute_ok(with_fused_qkv(sep));
    check_projections(sep, *a);
    for (Stage st : {Stage::Q, Stage::K, Stage::V, Stage::Output}) CHECK(f->stage(st).data == a->stage(st).data);
  }
}

TEST_CASE("a session's first trace reads its weights in place, later ones packed: the same bits") {
  // L = 40 is under kInPlaceRows: the first trace multiplies the weights in place, the second
  // their packings (numerics/panel_gemm.hpp). Both equal the reference; every stage bit for bit.
  const al::Session s = random_projection_session(2, 40, 64, 4, 67);
  auto first = compute_ok(s), second = compute_ok(s);
  const Reference ref = reference_attention(s);
  check_close(first->stage(Stage::Q), ref.q, "q");
  check_close(first->stage(Stage::Output), ref.output, "output");
  for (Stage st : {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Weights, Stage::Context, Stage::Output})
    CHECK(second->stage(st).data == first->stage(st).data);
}

TEST_CASE("fused W_qkv gives the same trace as separate W_Q, W_K, W_V") {
  for (bool cross : {false, true}) {
    CAPTURE(cross);
    al::Session sep = random_projection_session(2, 6, 8, 2, 21);
    if (cross) {
      sep.config.attention = al::AttentionKind::Cross;
      sep.x_kv = random_tensor({2, 9, 8}, 99);
    }
    auto a = compute_ok(sep), f = compute_ok(with_fused_qkv(sep));
    for (Stage st : al::kAllStages)
      if (a->has(st)) check_same_values(f->stage(st), a->stage(st), al::stage_name(st), 1e-6);
  }
}

TEST_CASE("one head equals the single-head formula softmax(QKᵀ/√d)V·W_O") {
  al::Session s = random_projection_session(1, 5, 6, 1, 31);
  s.config.bias = false;
  auto t = compute_ok(s);
  // Straight from the formula, no head bookkeeping at all.
  const Index L = 5, d = 6;
  auto mat = [&](const TensorPtr& w) { return naive_linear(*s.x, *w, 0, nullptr, d); };
  const std::vector<double> Q = mat(s.weights.w_q), K = mat(s.weights.w_k), V = mat(s.weights.w_v);
  std::vector<double> out(size_t(L * d), 0.0);
  for (Index i = 0; i < L; ++i) {
    std::vector<double> e(static_cast<size_t>(L));
    double sum = 0;
    for (Index j = 0; j < L; ++j) {
      double dot = 0;
      for (Index c = 0; c < d; ++c) dot += Q[size_t(i * d + c)] * K[size_t(j * d + c)];
      e[size_t(j)] = std::exp(dot / std::sqrt(6.0));
      sum += e[size_t(j)];
    }
    std::vector<double> head(static_cast<size_t>(d), 0.0);
    for (Index j = 0; j < L; ++j)
      for (Index c = 0; c < d; ++c) head[size_t(c)] += e[size_t(j)] / sum * V[size_t(j * d + c)];
    for (Index c = 0; c < d; ++c)
      for (Index t2 = 0; t2 < d; ++t2) out[size_t(i * d + c)] += head[size_t(t2)] * s.weights.w_o->data[size_t(t2 * d + c)];
  }
  check_close(t->stage(Stage::Output), out, "output");
  CHECK(t->scale == doctest::Approx(1.0 / std::sqrt(6.0)));
}

TEST_CASE("cross attention: Lq != Lk") {
  al::Session s = random_projection_session(2, 3, 8, 2, 41);
  s.config.attention = al::AttentionKind::Cross;
  s.x_kv = random_tensor({2, 5, 8}, 42);
  auto t = compute_ok(s);
  CHECK(t->dims.len_q == 3);
  CHECK(t->dims.len_kv == 5);
  CHECK(t->stage(Stage::Q).shape == std::vector<Index>{2, 2, 3, 4});
  CHECK(t->stage(Stage::K).shape == std::vector<Index>{2, 2, 5, 4});
  CHECK(t->stage(Stage::V).shape == std::vector<Index>{2, 2, 5, 4});
  CHECK(t->stage(Stage::Weights).shape == std::vector<Index>{2, 2, 3, 5});
  CHECK(t->stage(Stage::Context).shape == std::vector<Index>{2, 2, 3, 4});
  CHECK(t->stage(Stage::Output).shape == std::vector<Index>{2, 3, 8});
  const Reference ref = reference_attention(s);
  check_close(t->stage(Stage::Weights), ref.weights, "weights");
  check_close(t->stage(Stage::Output), ref.output, "output");
  check_rows_sum_to_one(*t);

  SUBCASE("direct mode cross attention") {
    al::Session d = random_direct_session(1, 4, 7, 4, 2, 43);
    auto u = compute_ok(d);
    check_close(u->stage(Stage::Output), reference_attention(d).output, "output");
  }
}

TEST_CASE("NaN and infinite inputs propagate without crashing") {
  al::Session s = random_direct_session(1, 3, 3, 2, 1, 121);
  std::vector<float> q(s.q->data.begin(), s.q->data.end());
  q[2] = std::nanf("");  // query 1
  s.q = tensor({1, 3, 2}, q);
  auto t = compute_ok(s);
  for (Index j = 0; j < 3; ++j) {
    CHECK(std::isnan(t->stage(Stage::Weights).at({0, 0, 1, j})));
    CHECK_FALSE(std::isnan(t->stage(Stage::Weights).at({0, 0, 0, j})));
  }
  std::vector<float> k(s.k->data.begin(), s.k->data.end());
  k[0] = std::numeric_limits<float>::infinity();
  s.k = tensor({1, 3, 2}, k);
  CHECK(compute_ok(s)->stage(Stage::Output).shape == std::vector<Index>{1, 3, 2});
}

TEST_CASE("memory: the estimate matches the trace, and too large sessions are refused") {
  SUBCASE("estimate == memory_bytes in every sharing configuration") {
    for (int variant = 0; variant < 5; ++variant) {
      CAPTURE(variant);
      al::Session s = variant < 3 ? random_projection_session(2, 5, 4, 2, 131) : random_direct_session(2, 5, 6, 4, 2, 132);
      if (variant == 1) s.config.mask.causal = true;
      if (variant == 2) s.config.dropout = {0.2, true, 1};
      if (variant == 3) s.config.scale = {al::ScaleMode::None, 1};
      if (variant == 4) s.config.mask.key_padding = tensor({2, 6}, std::vector<float>(12, 1.0f));
      auto estimate = al::estimate_trace_bytes(s);
      REQUIRE(estimate.ok());
      CHECK(*estimate == compute_ok(s)->memory_bytes);
    }
    // By hand, seed 003 (B = 1, h = 1, L = 5, d = 2, no mask, no dropout, no W_O):
    // q, k, v 3·10 + scores, scaled, weights 3·25 + context, concat 2·10 + row_max, row_sum 2·5
    // = 135 floats = 540 bytes, + 5 bytes of fully-masked flags.
    CHECK(*al::estimate_trace_bytes(seed_003_session()) == 545);
  }
  SUBCASE("L = 10^6 needs terabytes: TooLarge, with the byte count") {
    al::Session s;
    s.config.mode = al::InputMode::Direct;
    s.config.d_model = 2;
    s.config.num_heads = 1;
    const Index L = 1000000;
    s.q = s.k = s.v = al::make_tensor(Tensor({1, L, 2}, 0.0f));
    auto estimate = al::estimate_trace_bytes(s);
    REQUIRE(estimate.ok());
    CHECK(*estimate > 3 * 4 * L * L);  // scores, scaled, weights
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::TooLarge);
    CHECK(e.message.find(std::to_string(*estimate) + " bytes") != std::string::npos);
    CHECK(e.message.find("TiB") != std::string::npos);
    CHECK(e.message.find("limit") != std::string::npos);
  }
  SUBCASE("an explicit limit") {
    al::Session s = seed_003_session();
    al::ComputeOptions options;
    options.memory_limit_bytes = 544;
    const al::Error e = compute_error(s, options);
    CHECK(e.code == al::ErrorCode::TooLarge);
    CHECK(e.message ==
          "this session's trace would need 545 bytes, more than the memory limit of 544 bytes; "
          "make the sequences shorter, the batch smaller or use fewer heads, or keep only the stages one view "
          "shows (the attention weights alone: 345 bytes)");  // 545 less scores and scaled, 2 x 5 x 5 floats
    options.memory_limit_bytes = 545;
    CHECK(al::compute(s, options).ok());
  }
  SUBCASE("a tensor whose shape overflows is refused, not indexed") {
    al::Session s = seed_003_session();
    Tensor forged;
    forged.shape = {1, Index(1) << 40, Index(1) << 40};
    s.k = al::make_tensor(forged);
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::ShapeMismatch);
    CHECK(e.message.find("k has an impossible shape") == 0);
  }
  CHECK(al::default_memory_limit() > (Index(1) << 28));
}

TEST_CASE("errors name what is wrong") {
  SUBCASE("heads that do not divide d_model") {
    al::Session s = random_projection_session(1, 3, 10, 3);
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::HeadsDoNotDivide);
    CHECK(e.message ==
          "d_model = 10 cannot be split into 3 heads: each head takes d_k = d_model / heads columns, "
          "and 10 is not divisible by 3");
  }
  SUBCASE("seed 002's 9-long key padding mask for 10 keys") {
    al::Session s = random_direct_session(1, 5, 10, 64, 1, 141);
    s.config.mask.key_padding = tensor({1, 9}, {0, 0, 1, 1, 0, 0, 0, 0, 0});
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::MaskShapeMismatch);
    CHECK(e.message == "key padding mask has shape 1x9 but the keys need 1x10 (B x Lk)");
  }
  SUBCASE("custom mask of the wrong shape") {
    al::Session s = random_direct_session(2, 5, 10, 4, 1, 142);
    s.config.mask.custom = tensor({5, 9}, std::vector<float>(45, 1.0f));
    const al::Error e = compute_error(s);
    CHECK(e.code == al::ErrorCode::MaskShapeMismatch);
    CHECK(e.message == "custom mask has shape 5x9 but the scores need 5x10 (Lq x Lk) or 2x5x10 (B x Lq x Lk)");
  }
  SUBCASE("missing inputs") {
    al::Session s = random_projection_session(1, 3, 4, 2);
    s.weights.w_v = nullptr;
    CHECK(compute_error(s).message == "projection mode needs w_v (d_model x d_model), or a fused w_qkv");
    s = random_projection_session(1, 3, 4, 2);
    s.weights.w_o = nullptr;
    CHECK(compute_error(s).code == al::ErrorCode::MissingInput);
    s.x = nullptr;
    CHECK(compute_error(s).message == "projection mode needs x (B x L x d_model)");
    s = random_projection_session(1, 3, 4, 2);
    s.config.attention = al::AttentionKind::Cross;
    CHECK(compute_error(s).message ==
          "cross attention in projection mode needs x_kv (B x Lk x d_model) for the keys and values");
    al::Session d = random_direct_session(1, 3, 3, 4, 2);
    d.v = nullptr;
    CHECK(compute_error(d).message == "direct mode needs v (B x L x d_model)");
  }
  SUBCASE("shapes that do not fit") {
    al::Session s = random_projection_session(1, 3, 4, 2);
    s.x = random_tensor({1, 3, 5}, 1);
    CHECK(compute_error(s).message == "x has shape 1x3x5 but d_model is 4: its last dimension must be 4");
    s = random_projection_session(1, 3, 4, 2);
    s.weights.w_k = random_tensor({4, 3}, 1);
    CHECK(compute_error(s).message == "w_k has shape 4x3 but must be 4x4 (d_model x d_model)");
    s = random_projection_session(1, 3, 4, 2);
    s.weights.w_qkv = random_tensor({4, 8}, 1);
    s.weights.b_qkv = random_tensor({12}, 1);
    CHECK(compute_error(s).message == "w_qkv has shape 4x8 but must be 4x12 (d_model x 3·d_model, Q then K then V)");
    al::Session d = random_direct_session(1, 3, 3, 4, 2);
    d.v = random_tensor({1, 4, 4}, 1);
    CHECK(compute_error(d).message ==
          "v has shape 1x4x4 but k has shape 1x3x4: every key needs its value, so both need the same B and L");
    d = random_direct_session(1, 3, 3, 4, 2);
    d.k = d.v = random_tensor({1, 5, 4}, 1);
    CHECK(compute_error(d).message ==
          "k has shape 1x5x4 but q has shape 1x3x4: self attention needs as many keys as queries (use cross "
          "attention for Lk != Lq)");
    d = random_direct_session(1, 3, 3, 4, 2);
    d.q = al::make_tensor(Tensor({1, 0, 4}));
    CHECK(compute_error(d).message == "q has shape 1x0x4: it needs at least one row");
  }
  SUBCASE("config out of range") {
    al::Session s = random_projection_session(1, 3, 4, 2);
    s.config.num_heads = 0;
    CHECK(compute_error(s).message == "the number of heads must be at least 1, but it is 0");
    s.config.num_heads = 2;
    s.config.mask_fill = std::nan("");
    CHECK(compute_error(s).message == "the mask fill value must be a number, not NaN");
    // +∞ would give masked cells the row's whole weight as NaN: refused, with the way out named.
    s.config.mask_fill = std::numeric_limits<double>::infinity();
    CHECK(compute_error(s).code == al::ErrorCode::InvalidConfig);
    CHECK(compute_error(s).message.find("must not be +∞") != std::string::npos);
    s.config.mask_fill = 1e9;  // a large finite fill is allowed: the masked keys take the weight, as the checks warn
    CHECK(compute_ok(s));
  }
}
