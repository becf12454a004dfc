// "Explain this cell" for today's attention (issue 14): grouped-query heads read
// the K/V head of their group, RoPE's rotated cells, ALiBi's bias and sinusoidal
// positions, with values worked out by hand (cos 1, sin 1, cos 0.3, slope 1/2).
#include <doctest/doctest.h>

#include <cmath>

#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "teaching/explain.hpp"

using al::CellAddress;
using al::ExplainKind;
using al::Stage;

namespace {

// Two query heads share one K/V head (d_k = 2), RoPE half (one pair: θ = p), not causal.
// Q rows [1, 0 | 0, 1] and [0, 1 | 1, 1]; K rows [1, 0] and [0, 2]; V the identity.
const char* kGroupedRope = R"({
  "format": "attention-lab/session", "version": 1,
  "config": {"mode": "direct", "attention": "self", "d_model": 4, "num_heads": 2, "num_kv_heads": 1,
             "positional": {"type": "rope", "rope_style": "half", "rope_base": 10000},
             "bias": false, "scale": "sqrt_dk", "mask_fill": "-inf"},
  "tokens": ["a", "b"],
  "q": [[1, 0, 0, 1], [0, 1, 1, 1]],
  "k": [[1, 0], [0, 2]],
  "v": [[1, 0], [0, 1]]
})";

al::Session session_of(const char* json) {
  auto s = al::parse_session_json(json, ".");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  return *s;
}

al::Session preset(const char* name) {
  auto s = al::load_preset(name);
  REQUIRE_MESSAGE(s.ok(), name);
  return *s;
}

std::shared_ptr<const al::Trace> trace_of(const al::Session& s) {
  auto t = al::compute(s);
  REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  return *t;
}

al::Explanation explain(const al::Trace& t, const al::Session& s, CellAddress cell) {
  auto e = al::explain_cell(t, s, cell);
  REQUIRE_MESSAGE(e.ok(), (e.ok() ? "" : e.error().message));
  return *e;
}

}  // namespace

TEST_CASE("explain GQA + RoPE: query head 1 reads K/V head 0 and the rotated q and k, by hand") {
  const al::Session s = session_of(kGroupedRope);
  auto t = trace_of(s);
  const double c1 = std::cos(1.0), s1 = std::sin(1.0);

  // q_rot, head 1, row 1 (position 1, θ = 1): (1, 1) → (cos 1 − sin 1, cos 1 + sin 1).
  const al::Explanation q = explain(*t, s, {Stage::QRot, 0, 1, 1, 1});
  CHECK(q.kind == ExplainKind::Rotated);
  CHECK(q.pair == 0);
  CHECK(q.dim_a == 0);
  CHECK(q.dim_b == 1);
  CHECK(q.position == 1);
  CHECK(q.angle == doctest::Approx(1.0));
  CHECK(q.x_a == doctest::Approx(1.0));
  CHECK(q.x_b == doctest::Approx(1.0));
  CHECK(q.value == doctest::Approx(1.3817732906760363).epsilon(1e-6));  // cos 1 + sin 1

  // k_rot has one head (the K/V head): row 1 (0, 2) → (−2 sin 1, 2 cos 1). Head 1 does not exist.
  const al::Explanation k = explain(*t, s, {Stage::KRot, 0, 0, 1, 0});
  CHECK(k.value == doctest::Approx(-1.682941969615793).epsilon(1e-6));
  CHECK(k.x_a == doctest::Approx(0.0));
  CHECK(k.x_b == doctest::Approx(2.0));
  CHECK_FALSE(al::explain_cell(*t, s, {Stage::KRot, 0, 1, 1, 0}).ok());
  CHECK_FALSE(al::explain_cell(*t, s, {Stage::K, 0, 1, 0, 0}).ok());

  // Score head 1, query 1 · key 0: (cos 1 − sin 1, cos 1 + sin 1)·(1, 0) = cos 1 − sin 1.
  const al::Explanation far = explain(*t, s, {Stage::Scores, 0, 1, 1, 0});
  CHECK(far.kind == ExplainKind::Score);
  CHECK(far.kv_head == 0);
  CHECK(far.value == doctest::Approx(c1 - s1).epsilon(1e-6));
  REQUIRE(far.sources.size() == 2);
  CHECK(far.sources[0].matrix == "q_rot");
  CHECK(far.sources[0].head == 1);
  CHECK(far.sources[1].matrix == "k_rot");
  CHECK(far.sources[1].head == 0);  // the K/V head, not query head 1
  CHECK(far.sources[1].index == 0);
  // Query 1 · key 1: both turned by the same angle, so the score is the unrotated (1, 1)·(0, 2) = 2.
  CHECK(explain(*t, s, {Stage::Scores, 0, 1, 1, 1}).value == doctest::Approx(2.0).epsilon(1e-6));

  // Context head 1, row 1, column 0 with V = I: the weight α_10 = e^(s0)/(e^(s0) + e^(s1)),
  // s0 = (cos 1 − sin 1)/√2, s1 = 2/√2.
  const al::Explanation ctx = explain(*t, s, {Stage::Context, 0, 1, 1, 0});
  CHECK(ctx.kv_head == 0);
  CHECK(ctx.value == doctest::Approx(0.16421814034891183).epsilon(1e-6));
  CHECK(ctx.sources[1].matrix == "v");
  CHECK(ctx.sources[1].head == 0);
}

TEST_CASE("explain ALiBi: alibi-6-heads' head 4 has slope 1/2, so key 2 of query 5 loses 1.5") {
  const al::Session s = preset("alibi-6-heads");
  auto t = trace_of(s);
  const al::Explanation e = explain(*t, s, {Stage::Biased, 0, 4, 5, 2});
  CHECK(e.kind == ExplainKind::Biased);
  CHECK(e.slope == 0.5);
  CHECK(e.distance == 3);
  CHECK(e.input == t->stage(Stage::Scaled).at({0, 4, 5, 2}));
  CHECK(e.value == doctest::Approx(e.input - 1.5).epsilon(1e-6));
  // The mask step reads the biased scores.
  const al::Explanation m = explain(*t, s, {Stage::Masked, 0, 4, 5, 2});
  CHECK(m.input == e.value);
  CHECK(m.sources[0].matrix == "biased");
}

TEST_CASE("explain sinusoidal positions: longformer-global's x_pos[3, 5] = x[3, 5] + cos(3 / 10000^(4/16))") {
  const al::Session s = preset("longformer-global");
  auto t = trace_of(s);
  const al::Explanation e = explain(*t, s, {Stage::XPos, 0, 0, 3, 5});
  CHECK(e.kind == ExplainKind::Positional);
  CHECK(e.position == 3);
  CHECK(e.angle == doctest::Approx(0.3));
  CHECK(e.encoding == doctest::Approx(0.955336489125606));  // cos 0.3: column 5 is odd
  CHECK(e.input == s.x->data[3 * 16 + 5]);
  CHECK(e.value == doctest::Approx(s.x->data[3 * 16 + 5] + 0.955336489125606).epsilon(1e-6));
  // The projections read X + PE.
  const al::Explanation q = explain(*t, s, {Stage::Q, 0, 1, 3, 0});
  CHECK(q.sources[0].matrix == "x_pos");
}

TEST_CASE("explain GQA projection: llama-block's K/V head 1 is column block 4..7 of the 32 × 8 W_K") {
  const al::Session s = preset("llama-block");
  auto t = trace_of(s);
  REQUIRE(t->dims.kv_heads == 2);
  const al::Explanation e = explain(*t, s, {Stage::K, 0, 1, 2, 3});
  CHECK(e.kind == ExplainKind::Projection);
  double sum = 0;  // Σ_p x[2, p] · W_K[p, 4 + 3]
  for (int p = 0; p < 32; ++p) sum += double(s.x->data[size_t(2 * 32 + p)]) * s.weights.w_k->data[size_t(p * 8 + 7)];
  CHECK(e.sum.total == doctest::Approx(sum).epsilon(1e-9));
  CHECK(e.sources[1].index == 7);
  // Query heads 4..7 read K/V head 1 (and 0..3 K/V head 0).
  for (al::Index h = 0; h < 8; ++h) CHECK(explain(*t, s, {Stage::Scores, 0, h, 3, 1}).kv_head == h / 4);
}
