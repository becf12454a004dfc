// Edits return a copy in which only the edited input has a new pointer (the
// incremental recompute relies on it); values are checked against loops written
// here, not against other code under test.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/attention.hpp"
#include "editing/edits.hpp"
#include "base/random.hpp"

using namespace al;

namespace {

// Projection, self attention, separate weights with biases: x (B, L, d).
Session projection_session(Index batch = 1, Index len = 3, Index d = 4, Index heads = 2) {
  Session s;
  s.config.d_model = d;
  s.config.num_heads = heads;
  s.tokens = {};
  for (Index i = 0; i < len; ++i) s.tokens.push_back("w" + std::to_string(i));
  s.x = make_tensor(random_normal({batch, len, d}, 1));
  Weights& w = s.weights;
  w.w_q = make_tensor(random_normal({d, d}, 2));
  w.w_k = make_tensor(random_normal({d, d}, 3));
  w.w_v = make_tensor(random_normal({d, d}, 4));
  w.w_o = make_tensor(random_normal({d, d}, 5));
  w.b_q = make_tensor(random_normal({d}, 6));
  w.b_k = make_tensor(random_normal({d}, 7));
  w.b_v = make_tensor(random_normal({d}, 8));
  w.b_o = make_tensor(random_normal({d}, 9));
  return s;
}

// Raw storage pointers (no fused-block copies), to compare identities.
std::vector<const Tensor*> storage(const Session& s) {
  const Weights& w = s.weights;
  return {s.x.get(),   s.x_kv.get(), s.q.get(),     s.k.get(),     s.v.get(),
          w.w_q.get(), w.b_q.get(),  w.w_k.get(),   w.b_k.get(),   w.w_v.get(),
          w.b_v.get(), w.w_qkv.get(), w.b_qkv.get(), w.w_o.get(),  w.b_o.get(),
          s.config.mask.custom.get(), s.config.mask.key_padding.get()};
}

// Indices (into storage()) whose pointers differ.
std::vector<size_t> changed_slots(const Session& a, const Session& b) {
  std::vector<size_t> changed;
  const auto pa = storage(a), pb = storage(b);
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i] != pb[i]) changed.push_back(i);
  return changed;
}

size_t slot_index(InputId id) { return static_cast<size_t>(id); }

}  // namespace

TEST_CASE("input names are the session file's keys") {
  CHECK(std::string(input_name(InputId::X)) == "x");
  CHECK(std::string(input_name(InputId::WQkv)) == "w_qkv");
  CHECK(std::string(input_name(InputId::MaskCustom)) == "mask.custom");
  CHECK(std::string(input_name(InputId::KeyPadding)) == "mask.key_padding");
}

TEST_CASE("with_cell changes one value and only that input's pointer") {
  const Session s = projection_session();
  const Session e = with_cell(s, InputId::WK, 5, 42.5f);  // W_K (4x4): row 1, column 1
  CHECK(e.weights.w_k->at({1, 1}) == 42.5f);
  for (Index i = 0; i < 16; ++i)
    if (i != 5) CHECK(e.weights.w_k->data[i] == s.weights.w_k->data[i]);
  CHECK(changed_slots(s, e) == std::vector<size_t>{slot_index(InputId::WK)});
  CHECK(*s.weights.w_k == *projection_session().weights.w_k);  // the original is untouched

  SUBCASE("out of range or absent leaves the session unchanged") {
    CHECK(changed_slots(s, with_cell(s, InputId::WK, 16, 1.0f)).empty());
    CHECK(changed_slots(s, with_cell(s, InputId::WK, -1, 1.0f)).empty());
    CHECK(changed_slots(s, with_cell(s, InputId::Q, 0, 1.0f)).empty());  // no Q in projection mode
  }
  SUBCASE("NaN and infinity are values a learner may type") {
    const Session n = with_cell(s, InputId::X, 0, NAN);
    CHECK(std::isnan(n.x->data[0]));
    CHECK(with_cell(s, InputId::X, 1, INFINITY).x->data[1] == INFINITY);
  }
}

TEST_CASE("with_filled: zero, identity on every trailing matrix, seeded random") {
  const Session s = projection_session(2, 3, 4);
  const Session z = with_filled(s, InputId::X, Fill::Zero);
  for (float v : z.x->data) CHECK(v == 0.0f);
  CHECK(z.x->shape == std::vector<Index>{2, 3, 4});

  const Session id = with_filled(s, InputId::X, Fill::Identity);  // (2, 3, 4)
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < 3; ++i)
      for (Index j = 0; j < 4; ++j) CHECK(id.x->at({b, i, j}) == (i == j ? 1.0f : 0.0f));
  CHECK(changed_slots(s, id) == std::vector<size_t>{slot_index(InputId::X)});

  const Session r1 = with_filled(s, InputId::WQ, Fill::Random, 7);
  const Session r2 = with_filled(s, InputId::WQ, Fill::Random, 7);
  const Session r3 = with_filled(s, InputId::WQ, Fill::Random, 8);
  CHECK(*r1.weights.w_q == *r2.weights.w_q);
  CHECK_FALSE(*r1.weights.w_q == *r3.weights.w_q);

  SUBCASE("random weights have std 1/sqrt(d_model)") {
    const Session big = projection_session(1, 2, 64, 8);
    const Session filled = with_filled(big, InputId::WV, Fill::Random, 3);
    const Tensor& w = *filled.weights.w_v;  // 4096 draws
    double sum = 0, sum_sq = 0;
    for (float v : w.data) sum += v, sum_sq += double(v) * v;
    const double n = static_cast<double>(w.size());
    const double stddev = std::sqrt(sum_sq / n - (sum / n) * (sum / n));
    CHECK(stddev == doctest::Approx(1.0 / 8.0).epsilon(0.05));
  }
  SUBCASE("a random mask is made of 0 and 1, and an absent one is created in full shape") {
    const Session m = with_filled(s, InputId::MaskCustom, Fill::Random, 1);
    REQUIRE(m.config.mask.custom);
    CHECK(m.config.mask.custom->shape == std::vector<Index>{2, 3, 3});
    int ones = 0;
    for (float v : m.config.mask.custom->data) {
      CHECK((v == 0.0f || v == 1.0f));
      ones += v == 1.0f;
    }
    CHECK(ones > 0);
    CHECK(ones < 18);
  }
}

TEST_CASE("fused sessions: W_Q/W_K/W_V are column blocks of W_qkv") {
  const Session s = projection_session(1, 3, 4, 2);
  const Session f = with_fused(s, true);
  REQUIRE(f.weights.fused());
  CHECK(f.weights.w_qkv->shape == std::vector<Index>{4, 12});
  CHECK(f.weights.b_qkv->shape == std::vector<Index>{12});
  CHECK_FALSE(f.weights.w_q);
  const TensorPtr parts[] = {s.weights.w_q, s.weights.w_k, s.weights.w_v};
  const TensorPtr biases[] = {s.weights.b_q, s.weights.b_k, s.weights.b_v};
  for (Index p = 0; p < 3; ++p)
    for (Index r = 0; r < 4; ++r)
      for (Index c = 0; c < 4; ++c) {
        CHECK(f.weights.w_qkv->at({r, p * 4 + c}) == parts[p]->at({r, c}));
        if (r == 0) CHECK(f.weights.b_qkv->at({p * 4 + c}) == biases[p]->at({c}));
      }
  CHECK(f.x == s.x);
  CHECK(f.weights.w_o == s.weights.w_o);

  SUBCASE("fused -> separate round trip gives the same values") {
    const Session back = with_fused(f, false);
    CHECK_FALSE(back.weights.fused());
    CHECK(*back.weights.w_q == *s.weights.w_q);
    CHECK(*back.weights.w_k == *s.weights.w_k);
    CHECK(*back.weights.w_v == *s.weights.w_v);
    CHECK(*back.weights.b_q == *s.weights.b_q);
    CHECK(*back.weights.b_v == *s.weights.b_v);
    CHECK(changed_slots(f, with_fused(f, true)).empty());  // already fused: no-op
  }
  SUBCASE("reading and editing W_K of a fused session goes through the block") {
    CHECK(*input(f, InputId::WK) == *s.weights.w_k);
    CHECK(*input(f, InputId::BV) == *s.weights.b_v);
    const Session e = with_cell(f, InputId::WK, 2 * 4 + 3, -7.0f);  // W_K row 2, column 3
    CHECK(e.weights.w_qkv->at({2, 4 + 3}) == -7.0f);
    CHECK(changed_slots(f, e) == std::vector<size_t>{slot_index(InputId::WQkv)});
    Index differing = 0;
    for (Index i = 0; i < 48; ++i) differing += e.weights.w_qkv->data[i] != f.weights.w_qkv->data[i];
    CHECK(differing == 1);
  }
  SUBCASE("a W_Q of another shape splits the weights so validate() can name it") {
    const Session e = with_input(f, InputId::WQ, make_tensor(Tensor({3, 4})));
    CHECK_FALSE(e.weights.fused());
    CHECK(e.weights.w_q->shape == std::vector<Index>{3, 4});
    CHECK(*e.weights.w_k == *s.weights.w_k);
  }
  SUBCASE("setting W_qkv on a separate session fuses it") {
    const Session e = with_input(s, InputId::WQkv, make_tensor(Tensor({4, 12}, 0.5f)));
    CHECK(e.weights.fused());
    CHECK_FALSE(e.weights.w_q);
    CHECK(e.weights.w_qkv->data[11] == 0.5f);
    CHECK(*input(e, InputId::BK) == *s.weights.b_k);
  }
}

TEST_CASE("with_sizes keeps the overlapping values") {
  Session s = projection_session(1, 3, 4, 2);
  s.config.mask.custom = make_tensor(Tensor({3, 3}, 1.0f));  // (Lq, Lk)
  s = with_mask_cell(s, 0, 0, 2, false);                         // becomes (1, 3, 3)
  s = with_padding_length(s, 0, 2);                              // keys 0, 1 only
  const Session r = with_sizes(s, 2, 5, 5, 6);
  CHECK(r.config.d_model == 6);
  CHECK(r.config.num_heads == 2);
  REQUIRE(r.x->shape == std::vector<Index>{2, 5, 6});
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 4; ++j) CHECK(r.x->at({0, i, j}) == s.x->at({0, i, j}));
  REQUIRE(r.weights.w_q->shape == std::vector<Index>{6, 6});
  for (Index i = 0; i < 4; ++i)
    for (Index j = 0; j < 4; ++j) CHECK(r.weights.w_q->at({i, j}) == s.weights.w_q->at({i, j}));
  CHECK(r.weights.b_q->at({5}) == 0.0f);  // new bias cells are zero
  CHECK(r.tokens == std::vector<std::string>{"w0", "w1", "w2", "t3", "t4"});

  const Tensor& mask = *r.config.mask.custom;  // (2, 5, 5): new cells attend
  REQUIRE(mask.shape == std::vector<Index>{2, 5, 5});
  CHECK(mask.at({0, 0, 2}) == 0.0f);
  CHECK(mask.at({0, 0, 4}) == 1.0f);
  CHECK(mask.at({1, 0, 2}) == 1.0f);
  const Tensor& padding = *r.config.mask.key_padding;  // (2, 5)
  REQUIRE(padding.shape == std::vector<Index>{2, 5});
  const float item0[] = {1, 1, 0, 0, 0};  // still attends to its first 2 keys only
  for (Index j = 0; j < 5; ++j) {
    CHECK(padding.at({0, j}) == item0[j]);
    CHECK(padding.at({1, j}) == 1.0f);  // a new batch item attends to everything
  }

  SUBCASE("shrinking keeps the prefix") {
    const Session small = with_sizes(r, 1, 2, 2, 3);
    CHECK(small.x->shape == std::vector<Index>{1, 2, 3});
    CHECK(small.x->at({0, 1, 2}) == s.x->at({0, 1, 2}));
    CHECK(small.tokens == std::vector<std::string>{"w0", "w1"});
    CHECK(small.config.mask.key_padding->shape == std::vector<Index>{1, 2});
  }
  SUBCASE("unchanged sizes keep every pointer") {
    CHECK(changed_slots(r, with_sizes(r, 2, 5, 5, 6)).empty());
  }
  SUBCASE("d_model no longer divisible by the heads: heads kept, validate() reports it") {
    const Session odd = with_sizes(s, 1, 3, 3, 5);
    CHECK(odd.config.num_heads == 2);
    const auto error = validate(odd);
    REQUIRE(error);
    CHECK(error->code == ErrorCode::HeadsDoNotDivide);
  }
  SUBCASE("a fused session resizes block by block") {
    const Session f = with_fused(s, true);
    const Session rf = with_sizes(f, 1, 3, 3, 6);
    REQUIRE(rf.weights.fused());
    CHECK(rf.weights.w_qkv->shape == std::vector<Index>{6, 18});
    for (Index i = 0; i < 4; ++i)
      for (Index j = 0; j < 4; ++j) CHECK(input(rf, InputId::WV)->at({i, j}) == s.weights.w_v->at({i, j}));
    CHECK(changed_slots(f, with_sizes(f, 1, 3, 3, 4)).empty());
  }
  SUBCASE("a 2-D (L, d) input stays 2-D at B = 1 and gains a batch axis for B > 1") {
    Session flat = s;
    flat.x = make_tensor(Tensor({3, 4}, s.x->data));
    CHECK(with_sizes(flat, 1, 4, 4, 4).x->shape == std::vector<Index>{4, 4});
    const Session batched = with_sizes(flat, 2, 3, 3, 4);
    REQUIRE(batched.x->shape == std::vector<Index>{2, 3, 4});
    CHECK(batched.x->at({0, 2, 3}) == s.x->at({0, 2, 3}));
  }
}

TEST_CASE("check_sizes refuses sizes below 1 and inputs that would not fit") {
  const Session s = with_mask_cell(projection_session(), 0, 0, 0, false);  // has a custom mask
  CHECK_FALSE(check_sizes(s, 2, 16, 16, 8));
  const auto zero = check_sizes(s, 1, 0, 3, 4);
  REQUIRE(zero);
  CHECK(zero->code == ErrorCode::InvalidConfig);
  // A (1, 1e6, 1e6) custom mask alone is 4 TB.
  const auto huge = check_sizes(s, 1, 1000000, 1000000, 4);
  REQUIRE(huge);
  CHECK(huge->code == ErrorCode::TooLarge);
  CHECK(huge->message.find("MB") != std::string::npos);
  CHECK(changed_slots(s, with_sizes(s, 1, 1000000, 1000000, 4)).empty());
  CHECK(with_sizes(s, 1, 1000000, 1000000, 4).len_q() == 3);
}

TEST_CASE("with_mode and with_attention create what is needed and drop what is unused") {
  const Session s = projection_session(2, 3, 4, 2);
  const Session d = with_mode(s, InputMode::Direct);
  CHECK(d.config.mode == InputMode::Direct);
  REQUIRE((d.q && d.k && d.v));
  CHECK(d.q->shape == std::vector<Index>{2, 3, 4});
  CHECK(d.k->shape == std::vector<Index>{2, 3, 4});
  CHECK_FALSE(d.x);
  CHECK_FALSE(d.weights.w_q);
  CHECK(d.weights.w_o == s.weights.w_o);  // W_O stays optional in direct mode
  CHECK_FALSE(validate(d));

  const Session p = with_mode(d, InputMode::Projection);
  REQUIRE((p.x && p.weights.w_q && p.weights.b_k && p.weights.w_o));
  CHECK(p.x->shape == std::vector<Index>{2, 3, 4});
  CHECK_FALSE(p.q);
  CHECK(p.weights.b_k->data == std::vector<float>(4, 0.0f));  // created biases are zero
  CHECK_FALSE(validate(p));

  const Session c = with_attention(s, AttentionKind::Cross);
  REQUIRE(c.x_kv);
  CHECK(c.x_kv->shape == std::vector<Index>{2, 3, 4});
  CHECK(c.tokens_kv == s.tokens);
  CHECK(c.x == s.x);
  const Session c5 = with_sizes(c, 2, 3, 5, 4);  // keys longer than queries
  CHECK(c5.x == c.x);
  CHECK(c5.x_kv->shape == std::vector<Index>{2, 5, 4});
  CHECK(c5.tokens_kv.size() == 5);
  CHECK(c5.len_kv() == 5);
  CHECK_FALSE(validate(c5));

  const Session back = with_attention(c5, AttentionKind::Self);
  CHECK_FALSE(back.x_kv);
  CHECK(back.tokens_kv.empty());
  CHECK(back.x == s.x);
  CHECK_FALSE(validate(back));

  SUBCASE("direct cross attention to self resizes K and V to the queries' length") {
    const Session dc = with_sizes(with_attention(d, AttentionKind::Cross), 2, 3, 6, 4);
    CHECK(dc.k->shape == std::vector<Index>{2, 6, 4});
    const Session ds = with_attention(dc, AttentionKind::Self);
    CHECK(ds.k->shape == std::vector<Index>{2, 3, 4});
    CHECK(ds.v->shape == std::vector<Index>{2, 3, 4});
    CHECK_FALSE(validate(ds));
  }
}

TEST_CASE("with_bias drops biases when off and creates zero ones when on") {
  const Session s = projection_session();
  const Session off = with_bias(s, false);
  CHECK_FALSE(off.config.bias);
  for (const TensorPtr& b : {off.weights.b_q, off.weights.b_k, off.weights.b_v, off.weights.b_o})
    CHECK_FALSE(b);
  CHECK(off.weights.w_q == s.weights.w_q);
  const Session on = with_bias(off, true);
  for (const TensorPtr& b : {on.weights.b_q, on.weights.b_k, on.weights.b_v, on.weights.b_o}) {
    REQUIRE(b);
    CHECK(b->data == std::vector<float>(4, 0.0f));
  }
  const Session fused_on = with_bias(with_fused(off, true), true);
  REQUIRE(fused_on.weights.b_qkv);
  CHECK(fused_on.weights.b_qkv->data == std::vector<float>(12, 0.0f));
}

TEST_CASE("mask painter") {
  const Session s = projection_session(2, 3, 4);
  SUBCASE("the first painted cell creates a (B, Lq, Lk) mask of ones") {
    const Session m = with_mask_cell(s, 1, 2, 0, false);
    const Tensor& mask = *m.config.mask.custom;
    REQUIRE(mask.shape == std::vector<Index>{2, 3, 3});
    for (Index b = 0; b < 2; ++b)
      for (Index i = 0; i < 3; ++i)
        for (Index j = 0; j < 3; ++j)
          CHECK(mask.at({b, i, j}) == ((b == 1 && i == 2 && j == 0) ? 0.0f : 1.0f));
    CHECK(changed_slots(s, m) == std::vector<size_t>{slot_index(InputId::MaskCustom)});
    CHECK(with_mask_cell(m, 1, 2, 0, true).config.mask.custom->at({1, 2, 0}) == 1.0f);
    CHECK(changed_slots(m, with_mask_cell(m, 1, 2, 0, false)).empty());  // already masked
  }
  SUBCASE("a 2-D mask is broadcast to every batch item when one is painted") {
    Session two_d = s;
    Tensor lower({3, 3}, 0.0f);
    for (Index i = 0; i < 3; ++i)
      for (Index j = 0; j <= i; ++j) lower.at({i, j}) = 1.0f;
    two_d.config.mask.custom = make_tensor(lower);
    const Session painted = with_mask_cell(two_d, 0, 0, 2, true);
    const Tensor& mask = *painted.config.mask.custom;
    REQUIRE(mask.shape == std::vector<Index>{2, 3, 3});
    CHECK(mask.at({0, 0, 2}) == 1.0f);
    CHECK(mask.at({1, 0, 2}) == 0.0f);
    CHECK(mask.at({1, 2, 1}) == 1.0f);
  }
  SUBCASE("out of range cells and misfit masks leave the session unchanged") {
    CHECK_FALSE(with_mask_cell(s, 2, 0, 0, false).config.mask.custom);
    CHECK_FALSE(with_mask_cell(s, 0, 3, 0, false).config.mask.custom);
    CHECK_FALSE(with_mask_cell(s, 0, 0, -1, false).config.mask.custom);
    Session misfit = s;
    misfit.config.mask.custom = make_tensor(Tensor({1, 2}, 1.0f));
    CHECK(changed_slots(misfit, with_mask_cell(misfit, 0, 0, 0, false)).empty());
  }
  SUBCASE("padding by length, causal, cleared") {
    const Session p = with_padding_length(with_padding_length(s, 1, 1), 0, 7);  // 7 clamps to 3
    const Tensor& padding = *p.config.mask.key_padding;  // (2, 3)
    REQUIRE(padding.shape == std::vector<Index>{2, 3});
    CHECK(padding.data == std::vector<float>{1, 1, 1, 1, 0, 0});
    const Session c = with_causal(p, true);
    CHECK(c.config.mask.causal);
    CHECK(c.config.mask.key_padding == p.config.mask.key_padding);
    const Session cleared = with_mask_cleared(with_mask_cell(c, 0, 0, 0, false));
    CHECK_FALSE(cleared.config.mask.causal);
    CHECK_FALSE(cleared.config.mask.key_padding);
    CHECK_FALSE(cleared.config.mask.custom);
    CHECK(cleared.x == s.x);
    CHECK(changed_slots(s, with_padding_length(s, 2, 1)).empty());  // no batch item 2
  }
}
