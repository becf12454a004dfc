// Editing grouped-query heads, positions, the window and global tokens
// (config_edits.hpp, and the K/V shapes of edits.hpp and import.hpp with
// num_kv_heads). Expected values are written out by hand.
#include <doctest/doctest.h>

#include "base/random.hpp"
#include "editing/config_edits.hpp"
#include "editing/edits.hpp"
#include "editing/import.hpp"
#include "numerics/attention.hpp"

using namespace al;

namespace {

// A (rows, cols) tensor with cell (r, c) = 10·r + c.
TensorPtr numbered(Index rows, Index cols) {
  Tensor t({rows, cols});
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) t.at({r, c}) = static_cast<float>(10 * r + c);
  return make_tensor(std::move(t));
}

TensorPtr row(std::vector<float> values) {
  const Index n = static_cast<Index>(values.size());
  return make_tensor(Tensor({n}, std::move(values)));
}

// Projection, self attention, d_model d, h heads, multi-head: W_K cell (r, c) = 10r + c.
Session projection(Index d, Index heads, Index len = 3) {
  Session s;
  s.config.d_model = d;
  s.config.num_heads = heads;
  s.x = make_tensor(random_normal({1, len, d}, 1));
  Weights& w = s.weights;
  w.w_q = make_tensor(random_normal({d, d}, 2));
  w.w_k = numbered(d, d);
  w.w_v = make_tensor(random_normal({d, d}, 4));
  w.w_o = make_tensor(random_normal({d, d}, 5));
  w.b_q = make_tensor(Tensor({d}, 0.0f));
  std::vector<float> ramp;
  for (Index c = 0; c < d; ++c) ramp.push_back(static_cast<float>(c));
  w.b_k = row(ramp);  // 0, 1, ..., d-1
  w.b_v = make_tensor(Tensor({d}, 0.0f));
  w.b_o = make_tensor(Tensor({d}, 0.0f));
  return s;
}

std::vector<float> values(const TensorPtr& t) { return {t->data.begin(), t->data.end()}; }

}  // namespace

TEST_CASE("with_heads: fewer K/V heads mean-pool each group, more repeat the shared head") {
  // d = 4, h = 2, d_k = 2: W_K's heads are columns {0, 1} and {2, 3}.
  const Session s = projection(4, 2);
  const Session mqa = with_heads(s, 2, 1);
  CHECK(mqa.config.num_heads == 2);
  CHECK(mqa.config.num_kv_heads == 1);
  REQUIRE(mqa.weights.w_k->shape == std::vector<Index>{4, 2});
  for (Index r = 0; r < 4; ++r) {
    CHECK(mqa.weights.w_k->at({r, 0}) == doctest::Approx(10 * r + 1));  // mean of 10r + 0 and 10r + 2
    CHECK(mqa.weights.w_k->at({r, 1}) == doctest::Approx(10 * r + 2));  // mean of 10r + 1 and 10r + 3
  }
  CHECK(values(mqa.weights.b_k) == std::vector<float>{1, 2});
  CHECK(mqa.weights.w_v->shape == std::vector<Index>{4, 2});
  CHECK(mqa.weights.b_v->shape == std::vector<Index>{2});
  CHECK(mqa.weights.w_q == s.weights.w_q);  // queries keep every head
  CHECK_FALSE(validate(mqa));

  const Session back = with_heads(mqa, 2, 2);
  CHECK(back.config.num_kv_heads == 0);  // multi-head again
  CHECK(values(back.weights.b_k) == std::vector<float>{1, 2, 1, 2});
  CHECK(back.weights.w_k->at({3, 2}) == doctest::Approx(31));
  CHECK_FALSE(validate(back));
}

TEST_CASE("with_heads: 8 query heads to 4 to 2 K/V heads, and changing num_heads") {
  // d = 16, h = 8, d_k = 2: b_K = 0..15, head q holds 2q and 2q + 1.
  const Session s = projection(16, 8);
  const Session gqa4 = with_heads(s, 8, 4);  // groups {0,1} {2,3} {4,5} {6,7}
  CHECK(values(gqa4.weights.b_k) == std::vector<float>{1, 2, 5, 6, 9, 10, 13, 14});
  const Session gqa2 = with_heads(gqa4, 8, 2);  // groups {0..3} {4..7}
  CHECK(values(gqa2.weights.b_k) == std::vector<float>{3, 4, 11, 12});
  CHECK(gqa2.weights.w_k->shape == std::vector<Index>{16, 4});
  CHECK_FALSE(validate(gqa2));

  SUBCASE("a num_kv_heads that does not divide num_heads falls back to multi-head") {
    const Session bad = with_heads(s, 8, 3);
    CHECK(bad.config.num_kv_heads == 0);
    CHECK(bad.weights.w_k == s.weights.w_k);  // nothing to reshape
  }
  SUBCASE("fewer query heads keeping 2 K/V heads: d_k grows to 4") {
    // Expanded to one head per query head (d_k 2): 3 4 3 4 3 4 3 4 11 12 ... then
    // seen as 4 heads of d_k 4 in 2 groups: {3 4 3 4, 3 4 3 4} and {11 12 11 12, ...}.
    const Session four = with_heads(gqa2, 4, 2);
    CHECK(four.config.num_kv_heads == 2);
    CHECK(values(four.weights.b_k) == std::vector<float>{3, 4, 3, 4, 11, 12, 11, 12});
    CHECK_FALSE(validate(four));
  }
  SUBCASE("a head count whose K/V heads no longer divide keeps a valid session") {
    const Session three = with_heads(gqa4, 2, 4);  // 4 K/V heads for 2 query heads: multi-head
    CHECK(three.config.num_heads == 2);
    CHECK(three.config.num_kv_heads == 0);
    CHECK(three.weights.b_k->shape == std::vector<Index>{16});
    CHECK_FALSE(validate(three));
  }
  SUBCASE("heads that do not split d_model: multi-head shapes, validate() says why") {
    const Session odd = with_heads(gqa2, 5, 1);
    CHECK(odd.config.num_kv_heads == 0);
    CHECK(odd.weights.b_k->shape == std::vector<Index>{16});
    CHECK(validate(odd));
  }
}

TEST_CASE("with_heads on a fused session regroups the K and V blocks of W_qkv") {
  const Session s = with_fused(projection(4, 2), true);
  const Session mqa = with_heads(s, 2, 1);
  REQUIRE(mqa.weights.fused());
  REQUIRE(mqa.weights.w_qkv->shape == std::vector<Index>{4, 8});  // d + 2·H_kv·d_k = 4 + 2 + 2
  CHECK(values(mqa.weights.b_qkv)[4] == 1);  // b_K pooled: columns [4, 6)
  CHECK(values(mqa.weights.b_qkv)[5] == 2);
  CHECK(mqa.weights.w_qkv->at({2, 4}) == doctest::Approx(21));
  CHECK(mqa.weights.w_qkv->at({2, 0}) == s.weights.w_qkv->at({2, 0}));  // W_Q untouched
  CHECK_FALSE(validate(mqa));
  // Blocks read and written through input(): W_K is (4, 2), W_V the last two columns.
  CHECK(input(mqa, InputId::WK)->shape == std::vector<Index>{4, 2});
  const Session edited = with_cell(mqa, InputId::WV, 3 * 2 + 1, -5.0f);  // W_V row 3, column 1
  CHECK(edited.weights.w_qkv->at({3, 7}) == -5.0f);
  CHECK(with_fused(mqa, false).weights.w_v->shape == std::vector<Index>{4, 2});
  // Same layout (multi-head with another head count that keeps d_k's grouping): pointers kept.
  CHECK(with_heads(s, 4, 0).weights.w_qkv == s.weights.w_qkv);
}

TEST_CASE("with_heads in direct mode reshapes K and V (B, Lk, H_kv·d_k)") {
  Session s;
  s.config.mode = InputMode::Direct;
  s.config.d_model = 4;
  s.config.num_heads = 2;
  s.q = make_tensor(random_normal({1, 2, 4}, 1));
  s.k = make_tensor(Tensor({1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}));
  s.v = make_tensor(random_normal({1, 2, 4}, 3));
  const Session mqa = with_heads(s, 2, 1);
  REQUIRE(mqa.k->shape == std::vector<Index>{1, 2, 2});
  CHECK(values(mqa.k) == std::vector<float>{1, 2, 5, 6});
  CHECK_FALSE(validate(mqa));
}

TEST_CASE("sizes, fills and imports follow the K/V width of grouped-query heads") {
  const Session gqa = with_heads(projection(4, 2), 2, 1);  // K/V width 2
  const Session longer = with_sizes(gqa, 1, 5, 5, 4);
  CHECK(longer.weights.w_k->shape == std::vector<Index>{4, 2});
  CHECK_FALSE(validate(longer));
  const Session wider = with_sizes(gqa, 1, 3, 3, 8);  // d_k 4: W_K (8, 4)
  CHECK(wider.weights.w_k->shape == std::vector<Index>{8, 4});
  CHECK(wider.weights.b_v->shape == std::vector<Index>{4});
  CHECK_FALSE(validate(wider));
  CHECK_FALSE(validate(with_sizes(with_fused(gqa, true), 1, 3, 3, 8)));
  CHECK(with_filled(gqa, InputId::WK, Fill::Identity).weights.w_k->shape == std::vector<Index>{4, 2});
  CHECK_FALSE(validate(with_mode(gqa, InputMode::Direct)));
  CHECK(with_mode(gqa, InputMode::Direct).k->shape == std::vector<Index>{1, 3, 2});

  CHECK(expected_import_shape(gqa, InputId::WK) == std::vector<Index>{4, 2});
  CHECK(expected_import_shape(gqa, InputId::BV) == std::vector<Index>{2});
  CHECK(expected_import_shape(gqa, InputId::WQkv) == std::vector<Index>{4, 8});
  CHECK(expected_import_shape(gqa, InputId::WQ) == std::vector<Index>{4, 4});
  const Result<Session> wrong = import_matrix(gqa, InputId::WK, Tensor({4, 4}), "w.csv", {});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("W_K must be 4x2 (d_model x num_kv_heads*d_k); w.csv holds 4x4.") != std::string::npos);
  CHECK(wrong.error().message.find("num_kv_heads*d_k") != std::string::npos);
  const Result<Session> right = import_matrix(gqa, InputId::WK, Tensor({4, 2}, 0.5f), "w.csv", {});
  REQUIRE(right);
  CHECK(right->weights.w_k->at({3, 1}) == 0.5f);
}

TEST_CASE("positions, window and global tokens") {
  const Session s = projection(4, 2, 4);
  PositionalSpec rope;
  rope.type = PositionalType::Rope;
  rope.rope_style = RopeStyle::Interleaved;
  rope.rope_base = 500;
  CHECK(with_positional(s, rope).config.positional == rope);
  CHECK(with_window(s, 2).config.mask.window == 2);
  CHECK(with_window(s, -3).config.mask.window == 0);
  const Session g = with_global_token(with_global_token(s, 3, true), 0, true);
  CHECK(g.config.mask.global_tokens == std::vector<Index>{0, 3});
  CHECK(with_global_token(g, 3, false).config.mask.global_tokens == std::vector<Index>{0});
  CHECK(with_global_token(g, 9, true).config.mask.global_tokens == g.config.mask.global_tokens);
  // Shortening the sequence drops global tokens past its end.
  CHECK(with_sizes(g, 1, 2, 2, 4).config.mask.global_tokens == std::vector<Index>{0});
  CHECK_FALSE(validate(with_sizes(g, 1, 2, 2, 4)));
}
