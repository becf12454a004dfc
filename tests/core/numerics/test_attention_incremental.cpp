// Incremental recompute (stages an edit did not reach are the previous trace's
// very tensors, and the result equals a fresh computation), cancellation and
// progress.
#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <vector>

#include "numerics/attention.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::Stage;

namespace {

struct Recomputed {
  std::shared_ptr<const al::Trace> before, after;
};

// Computes `before`, then `after` incrementally from it, and checks the
// incremental trace equals a fresh computation of `after`, value for value.
Recomputed recompute(const al::Session& before, const al::Session& after) {
  Recomputed r;
  r.before = compute_ok(before);
  auto incremental = al::compute(after, {}, &before, r.before);
  REQUIRE_MESSAGE(incremental.ok(), incremental.error().message);
  r.after = incremental.value();
  auto fresh = compute_ok(after);
  for (Stage s : al::kAllStages) {
    REQUIRE(r.after->has(s) == fresh->has(s));
    if (fresh->has(s)) CHECK_MESSAGE(r.after->stage(s) == fresh->stage(s), std::string(al::stage_name(s)));
  }
  CHECK(*r.after->row_max == *fresh->row_max);
  CHECK(*r.after->row_sum == *fresh->row_sum);
  CHECK(r.after->fully_masked_rows == fresh->fully_masked_rows);
  CHECK(r.after->memory_bytes == fresh->memory_bytes);
  CHECK(r.after->scale == fresh->scale);
  return r;
}

// Which stages are the previous trace's own tensors.
void check_reused(const Recomputed& r, std::initializer_list<Stage> reused) {
  for (Stage s : al::kAllStages) {
    if (!r.after->has(s)) continue;
    const bool expected = std::find(reused.begin(), reused.end(), s) != reused.end();
    CHECK_MESSAGE((r.after->stage_ptr(s) == r.before->stage_ptr(s)) == expected,
                  al::stage_name(s) << (expected ? " should be reused" : " should be recomputed"));
  }
}

TensorPtr edited(const TensorPtr& t, Index index, float value) {
  Tensor copy = *t;
  copy.data[static_cast<size_t>(index)] = value;
  return al::make_tensor(std::move(copy));
}

}  // namespace

TEST_CASE("incremental: editing V does not recompute scores or softmax") {
  al::Session s = random_projection_session(2, 6, 8, 2, 201);
  s.config.mask.causal = true;
  al::Session e = s;
  e.weights.w_v = edited(s.weights.w_v, 3, 2.5f);
  auto r = recompute(s, e);
  check_reused(r, {Stage::Q, Stage::K, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Dropped});
  CHECK(r.after->row_max == r.before->row_max);
  CHECK(r.after->mask == r.before->mask);

  SUBCASE("direct mode, editing v") {
    al::Session d = random_direct_session(1, 5, 5, 4, 2, 202);
    al::Session dv = d;
    dv.v = edited(d.v, 0, -3.0f);
    auto u = recompute(d, dv);
    check_reused(u, {Stage::Q, Stage::K, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Dropped});
  }
}

TEST_CASE("incremental: editing the mask does not recompute projections or scores") {
  al::Session s = random_projection_session(1, 6, 8, 2, 211);
  s.config.mask.key_padding = tensor({1, 6}, {1, 1, 1, 1, 1, 1});
  al::Session e = s;
  e.config.mask.key_padding = tensor({1, 6}, {1, 1, 1, 1, 0, 0});
  auto r = recompute(s, e);
  check_reused(r, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled});
  CHECK(r.after->mask != r.before->mask);

  SUBCASE("turning the causal mask on, from no mask at all") {
    al::Session none = random_projection_session(1, 6, 8, 2, 212);
    al::Session causal = none;
    causal.config.mask.causal = true;
    auto u = recompute(none, causal);
    check_reused(u, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled});
    CHECK(u.before->stage_ptr(Stage::Masked) == u.before->stage_ptr(Stage::Scaled));
    CHECK(u.after->stage_ptr(Stage::Masked) != u.after->stage_ptr(Stage::Scaled));
  }
  SUBCASE("changing only the fill value keeps the combined mask") {
    al::Session fill = s;
    fill.config.mask_fill = -1e9;
    auto u = recompute(s, fill);
    check_reused(u, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled});
    CHECK(u.after->mask == u.before->mask);
  }
}

TEST_CASE("incremental: changing dropout reuses everything up to the weights") {
  al::Session s = random_projection_session(1, 8, 8, 2, 221);
  al::Session e = s;
  e.config.dropout = {0.25, true, 3};
  auto r = recompute(s, e);
  check_reused(r, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights});
  CHECK(r.after->row_sum == r.before->row_sum);

  SUBCASE("a new seed") {
    al::Session seed = e;
    seed.config.dropout.seed = 4;
    auto u = recompute(e, seed);
    check_reused(u, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights});
  }
  SUBCASE("p changed while in eval: nothing to recompute") {
    al::Session eval = s;
    eval.config.dropout.p = 0.4;
    auto u = recompute(s, eval);
    check_reused(u, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights,
                     Stage::Dropped, Stage::Context, Stage::Concat, Stage::Output});
  }
}

TEST_CASE("incremental: other edits reach exactly their downstream stages") {
  al::Session s = random_projection_session(2, 5, 8, 2, 231);
  SUBCASE("nothing changed: every stage reused") {
    auto r = recompute(s, s);
    check_reused(r, {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights,
                     Stage::Dropped, Stage::Context, Stage::Concat, Stage::Output});
  }
  SUBCASE("W_O") {
    al::Session e = s;
    e.weights.w_o = edited(s.weights.w_o, 0, 1.0f);
    check_reused(recompute(s, e), {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked,
                                   Stage::Weights, Stage::Dropped, Stage::Context, Stage::Concat});
  }
  SUBCASE("W_Q") {
    al::Session e = s;
    e.weights.w_q = edited(s.weights.w_q, 0, 1.0f);
    check_reused(recompute(s, e), {Stage::K, Stage::V});
  }
  SUBCASE("b_K with bias on; with bias off an edited bias changes nothing") {
    al::Session e = s;
    e.weights.b_k = edited(s.weights.b_k, 0, 1.0f);
    check_reused(recompute(s, e), {Stage::Q, Stage::V});
    al::Session off = s;
    off.config.bias = false;
    al::Session off_edited = off;
    off_edited.weights.b_k = e.weights.b_k;
    auto u = recompute(off, off_edited);
    CHECK(u.after->stage_ptr(Stage::Output) == u.before->stage_ptr(Stage::Output));
  }
  SUBCASE("X in self attention reaches everything") {
    al::Session e = s;
    e.x = edited(s.x, 0, 1.0f);
    check_reused(recompute(s, e), {});
  }
  SUBCASE("the scale") {
    al::Session e = s;
    e.config.scale = {al::ScaleMode::Custom, 0.3};
    check_reused(recompute(s, e), {Stage::Q, Stage::K, Stage::V, Stage::Scores});
  }
  SUBCASE("x_kv in cross attention leaves Q") {
    al::Session c = s;
    c.config.attention = al::AttentionKind::Cross;
    c.x_kv = random_tensor({2, 7, 8}, 232);
    al::Session e = c;
    e.x_kv = edited(c.x_kv, 5, 0.0f);
    check_reused(recompute(c, e), {Stage::Q});
  }
  SUBCASE("fused W_qkv: one pointer feeds Q, K and V") {
    al::Session f = s;
    f.weights.w_qkv = random_tensor({8, 24}, 233);
    f.weights.b_qkv = random_tensor({24}, 234);
    al::Session e = f;
    e.weights.w_qkv = edited(f.weights.w_qkv, 0, 1.0f);
    check_reused(recompute(f, e), {});
    al::Session o = f;
    o.weights.w_o = edited(f.weights.w_o, 1, 1.0f);
    check_reused(recompute(f, o), {Stage::Q, Stage::K, Stage::V, Stage::Scores, Stage::Scaled, Stage::Masked,
                                   Stage::Weights, Stage::Dropped, Stage::Context, Stage::Concat});
  }
  SUBCASE("new sizes: nothing reused") {
    al::Session e = random_projection_session(2, 6, 8, 2, 231);
    e.weights = s.weights;  // same weight pointers, longer X
    check_reused(recompute(s, e), {});
  }
  SUBCASE("an invalid previous session: computed from scratch") {
    al::Session bad = s;
    bad.config.num_heads = 3;
    auto before = compute_ok(s);
    auto after = al::compute(s, {}, &bad, before);
    REQUIRE(after.ok());
    CHECK(after.value()->stage_ptr(Stage::Q) != before->stage_ptr(Stage::Q));
  }
}

TEST_CASE("cancellation and progress") {
  al::Session s = random_projection_session(1, 512, 64, 4, 241);  // several work items per pass
  SUBCASE("cancelled before starting") {
    std::atomic<bool> cancel{true};
    al::ComputeOptions options;
    options.cancel = &cancel;
    auto r = al::compute(s, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == al::ErrorCode::Cancelled);
  }
  SUBCASE("cancelled while computing") {
    std::atomic<bool> cancel{false};
    al::ComputeOptions options;
    options.cancel = &cancel;
    float last = -1;
    options.progress = [&](float f) {
      last = f;
      if (f >= 0.2f) cancel = true;  // a newer edit arrives once the projections are done
    };
    auto r = al::compute(s, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == al::ErrorCode::Cancelled);
    CHECK(r.error().message == "the computation was cancelled by a newer edit");
    CHECK(last < 1.0f);
  }
  SUBCASE("progress rises from 0 to 1") {
    std::vector<float> seen;
    al::ComputeOptions options;
    options.progress = [&](float f) { seen.push_back(f); };
    REQUIRE(al::compute(s, options).ok());
    REQUIRE(seen.size() >= 3);
    CHECK(seen.front() == 0.0f);
    CHECK(seen.back() == 1.0f);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
  }
}

// Projections are computed in work items of 64 input rows or more: after an edit of X,
// the rows that did not change are copied from the previous Q, K, V, inside the edited
// row's work item too.
TEST_CASE("incremental: editing one cell of X recomputes only its row of projected Q, K, V") {
  // B=2, L=100: 200 input rows, work items of 128 rows [0,128) [128,200) (numerics/work_items:
  // too few multiply-adds for a second thread); d_model 8, 2 heads.
  const al::Session s = random_projection_session(2, 100, 8, 2, 301);
  const Index row = 150, d_model = 8;  // batch item 1, token 50: item [128, 200)

  SUBCASE("the result equals a fresh computation, and Q, K, V are new tensors") {
    al::Session e = s;
    e.x = edited(s.x, row * d_model + 3, 4.0f);
    check_reused(recompute(s, e), {});
  }
  SUBCASE("fused W_qkv: the same, through one widened GEMM") {
    al::Session f = s;
    f.weights.w_qkv = random_tensor({8, 24}, 302);
    f.weights.b_qkv = random_tensor({24}, 303);
    al::Session e = f;
    e.x = edited(f.x, row * d_model, -2.0f);
    check_reused(recompute(f, e), {});
  }
  SUBCASE("unchanged rows are copied, not recomputed: markers planted in the previous Q show through") {
    // White-box: plant a value no projection of these inputs gives in the previous trace's
    // Q at (b=0, head 1, token 10, 0), a row in another work item than the edit's, and at
    // (b=1, head 0, token 49, 2) and (b=1, head 1, token 51, 1), the edited row's neighbours
    // in its own work item.
    auto before = compute_ok(s);
    auto& planted = const_cast<Tensor&>(before->stage(Stage::Q));
    const Index len = 100, d_k = 4;
    const std::vector<size_t> markers = {static_cast<size_t>(((0 * 2 + 1) * len + 10) * d_k),
                                         static_cast<size_t>(((1 * 2 + 0) * len + 49) * d_k + 2),
                                         static_cast<size_t>(((1 * 2 + 1) * len + 51) * d_k + 1)};
    for (size_t at : markers) planted.data[at] = 12345.0f;
    al::Session e = s;
    e.x = edited(s.x, row * d_model + 3, 4.0f);
    auto after = al::compute(e, {}, &s, before);
    REQUIRE(after.ok());
    for (size_t at : markers) CHECK(after.value()->stage(Stage::Q).data[at] == 12345.0f);
    // The edited row is recomputed: its values equal a fresh computation's.
    auto fresh = compute_ok(e);
    const size_t edited_at = static_cast<size_t>(((1 * 2 + 0) * len + 50) * d_k);
    for (size_t c = 0; c < static_cast<size_t>(d_k); ++c)
      CHECK(after.value()->stage(Stage::Q).data[edited_at + c] == fresh->stage(Stage::Q).data[edited_at + c]);
  }
  SUBCASE("heads of whole 16-column panels (the kernels' other path): edits of one row, two rows and rows in two work items equal fresh computations") {
    // d_model 64, 2 heads: d_k 32, projected straight into the heads' layout by 16-lane tiles
    // (AVX-512) or 8-lane ones, whose rows are cut into tiles at other places than a fresh
    // computation's.
    const al::Session p = random_projection_session(2, 100, 64, 2, 304);
    al::Session one = p, two = p, apart = p;
    one.x = edited(p.x, 137 * 64 + 5, 3.0f);
    two.x = edited(edited(p.x, 137 * 64, 3.0f), 138 * 64 + 63, -3.0f);
    apart.x = edited(edited(p.x, 7 * 64 + 1, 3.0f), 193 * 64 + 2, -3.0f);
    for (const al::Session* e : {&one, &two, &apart}) check_reused(recompute(p, *e), {});
  }
  SUBCASE("new weights: every row is projected again") {
    auto before = compute_ok(s);
    auto& planted = const_cast<Tensor&>(before->stage(Stage::Q));
    planted.data[0] = 12345.0f;
    al::Session e = s;
    e.x = edited(s.x, row * d_model + 3, 4.0f);
    e.weights.w_q = edited(s.weights.w_q, 0, 0.5f);
    auto after = al::compute(e, {}, &s, before);
    REQUIRE(after.ok());
    CHECK(after.value()->stage(Stage::Q).data[0] != 12345.0f);
    CHECK(after.value()->stage(Stage::Q) == compute_ok(e)->stage(Stage::Q));
  }
}
