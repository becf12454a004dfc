// The session model: undo/redo, the last valid trace beside an error, the
// synchronous path at teaching sizes and the background worker above them.
// Output values are checked against a naive softmax(q·Kᵀ/√d)·V written here.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "editing/edits.hpp"
#include "base/random.hpp"
#include "editing/session_model.hpp"

using namespace al;

namespace {

// Direct mode, one head, no W_O: output = softmax(Q·Kᵀ/√d)·V. q, k, v (1, L, d).
Session direct_session(Index len, Index d, std::uint64_t seed = 1) {
  Session s;
  s.config.mode = InputMode::Direct;
  s.config.d_model = d;
  s.config.num_heads = 1;
  s.config.bias = false;
  s.q = make_tensor(random_normal({1, len, d}, seed));
  s.k = make_tensor(random_normal({1, len, d}, seed + 1));
  s.v = make_tensor(random_normal({1, len, d}, seed + 2));
  return s;
}

// Row i of the output of a direct_session, by the textbook formula in double.
std::vector<double> naive_output_row(const Session& s, Index i) {
  const Index len = s.k->dim(1), d = s.k->dim(2);
  std::vector<double> scores(static_cast<size_t>(len));
  double max_score = -INFINITY;
  for (Index j = 0; j < len; ++j) {
    double dot = 0;
    for (Index c = 0; c < d; ++c) dot += double(s.q->at({0, i, c})) * s.k->at({0, j, c});
    scores[j] = dot / std::sqrt(double(d));
    max_score = std::max(max_score, scores[j]);
  }
  double sum = 0;
  for (double& e : scores) sum += (e = std::exp(e - max_score));
  std::vector<double> row(static_cast<size_t>(d), 0.0);
  for (Index j = 0; j < len; ++j)
    for (Index c = 0; c < d; ++c) row[c] += scores[j] / sum * s.v->at({0, j, c});
  return row;
}

void check_output_row(const Trace& trace, const Session& s, Index i) {
  const std::vector<double> expected = naive_output_row(s, i);
  const Tensor& out = trace.stage(Stage::Output);  // (1, L, d)
  for (Index c = 0; c < static_cast<Index>(expected.size()); ++c)
    CHECK(out.at({0, i, c}) == doctest::Approx(expected[c]).epsilon(1e-4));
}

}  // namespace

TEST_CASE("compute policy: teaching sizes here and now, big sessions in the background") {
  CHECK_FALSE(computes_in_background(direct_session(8, 4)));
  CHECK_FALSE(computes_in_background(direct_session(1024, 64)));  // 3.7e8 flops, 12 MiB: fits in a frame
  CHECK(computes_in_background(direct_session(2048, 64)));         // 1.5e9 flops, 48 MiB: over the byte limit
  // 4·L²·d for the two products plus 100 per score cell: 4·64²·16 + 100·64² = 671744.
  CHECK(estimate_compute_flops(direct_session(64, 16)) == doctest::Approx(671744));
  Session invalid = direct_session(8, 4);
  invalid.config.num_heads = 3;
  CHECK_FALSE(computes_in_background(invalid));
}

TEST_CASE("a small session has its trace as soon as it is edited") {
  const Session s = direct_session(5, 4);
  SessionModel model(s);
  REQUIRE(model.trace());
  CHECK_FALSE(model.computing());
  CHECK_FALSE(model.error());
  CHECK_FALSE(model.modified());
  check_output_row(*model.trace(), s, 2);

  const Session edited = with_cell(s, InputId::V, 3, 9.0f);
  const std::uint64_t before = model.revision();
  model.edit(edited, "Edit V");
  CHECK(model.revision() == before + 1);
  CHECK_FALSE(model.computing());
  CHECK(model.session().v == edited.v);
  check_output_row(*model.trace(), edited, 2);
  CHECK(model.trace_session().v == edited.v);
  CHECK_FALSE(model.poll());  // nothing pending: the result was installed in edit()

  SUBCASE("only the stages downstream of V are recomputed") {
    SessionModel fresh(s);
    const auto first = fresh.trace();
    fresh.edit(edited, "Edit V");
    const auto second = fresh.trace();
    CHECK(second->stage_ptr(Stage::Weights) == first->stage_ptr(Stage::Weights));
    CHECK(second->stage_ptr(Stage::Scores) == first->stage_ptr(Stage::Scores));
    CHECK(second->stage_ptr(Stage::Output) != first->stage_ptr(Stage::Output));
  }
}

TEST_CASE("undo and redo restore sessions exactly, with labels") {
  const Session s0 = direct_session(4, 4);
  SessionModel model(s0);
  CHECK_FALSE(model.can_undo());
  CHECK_FALSE(model.undo());
  const Session s1 = with_cell(s0, InputId::Q, 0, 1.5f);
  const Session s2 = with_filled(s1, InputId::K, Fill::Identity);
  model.edit(s1, "Edit Q");
  model.edit(s2, "Identity K");
  CHECK(model.undo_label() == "Identity K");

  REQUIRE(model.undo());
  CHECK(model.session().q == s1.q);
  CHECK(model.session().k == s1.k);
  CHECK(model.redo_label() == "Identity K");
  CHECK(model.undo_label() == "Edit Q");
  check_output_row(*model.trace(), s1, 0);

  REQUIRE(model.undo());
  CHECK(model.session().q == s0.q);
  CHECK_FALSE(model.can_undo());
  check_output_row(*model.trace(), s0, 0);

  REQUIRE(model.redo());
  REQUIRE(model.redo());
  CHECK_FALSE(model.redo());
  CHECK(model.session().k == s2.k);
  check_output_row(*model.trace(), s2, 3);

  SUBCASE("a new edit clears the redo steps") {
    model.undo();
    CHECK(model.can_redo());
    model.edit(with_cell(s1, InputId::V, 0, 2.0f), "Edit V");
    CHECK_FALSE(model.can_redo());
    CHECK(model.redo_label().empty());
  }
}

TEST_CASE("edits with the same merge key are one undo step") {
  const Session s0 = direct_session(4, 4);
  SessionModel model(s0);
  Session dragged = s0;
  for (int step = 1; step <= 5; ++step) {
    dragged = with_cell(dragged, InputId::Q, 6, 0.25f * step);
    model.edit(dragged, "Drag Q", "drag q 6");
  }
  CHECK(model.session().q->data[6] == 1.25f);
  model.edit(with_cell(dragged, InputId::Q, 7, 3.0f), "Type Q", "type q 7");
  model.edit(with_cell(model.session(), InputId::Q, 7, 31.0f), "Type Q", "type q 7");

  REQUIRE(model.undo());  // the typing
  CHECK(model.session().q == dragged.q);
  REQUIRE(model.undo());  // the whole drag
  CHECK(model.session().q == s0.q);
  CHECK_FALSE(model.can_undo());

  SUBCASE("end_merge starts a new step with the same key; undo ends a run too") {
    SessionModel other(s0);
    other.edit(with_cell(s0, InputId::Q, 0, 1.0f), "Drag Q", "drag");
    other.end_merge();
    other.edit(with_cell(other.session(), InputId::Q, 0, 2.0f), "Drag Q", "drag");
    other.undo();
    CHECK(other.session().q->data[0] == 1.0f);
    other.edit(with_cell(other.session(), InputId::Q, 0, 3.0f), "Drag Q", "drag");
    other.undo();
    CHECK(other.session().q->data[0] == 1.0f);
  }
}

TEST_CASE("an invalid edit keeps the last valid trace and says why") {
  const Session s = direct_session(4, 4);
  SessionModel model(s);
  const auto valid = model.trace();
  Session bad = s;
  bad.config.num_heads = 3;  // 4 is not divisible by 3
  model.edit(bad, "Heads");
  REQUIRE(model.error());
  CHECK(model.error()->code == ErrorCode::HeadsDoNotDivide);
  CHECK(model.error()->message.find('3') != std::string::npos);
  CHECK(model.error()->message.find('4') != std::string::npos);
  CHECK(model.trace() == valid);
  CHECK(model.session().config.num_heads == 3);  // still the session, so it can be fixed
  CHECK(model.trace_session().config.num_heads == 1);
  CHECK_FALSE(model.computing());

  model.edit(with_cell(model.session(), InputId::Q, 0, 5.0f), "Edit Q");  // still invalid
  CHECK(model.error());
  CHECK(model.trace() == valid);

  model.undo();
  model.undo();
  CHECK_FALSE(model.error());
  check_output_row(*model.trace(), s, 1);

  SUBCASE("a session over the memory limit is refused with its size") {
    ComputeOptions tiny;
    tiny.memory_limit_bytes = 1000;
    SessionModel refused(direct_session(64, 8), tiny);
    REQUIRE(refused.error());
    CHECK(refused.error()->code == ErrorCode::TooLarge);
    CHECK_FALSE(refused.trace());
    CHECK_FALSE(refused.computing());
  }
}

TEST_CASE("modified() follows edits, saves and undo back to the saved state") {
  SessionModel model(direct_session(3, 2));
  CHECK_FALSE(model.modified());
  const Session a = with_cell(model.session(), InputId::V, 0, 1.0f);
  model.edit(a, "a");
  CHECK(model.modified());
  model.mark_saved();
  CHECK_FALSE(model.modified());
  model.edit(with_cell(a, InputId::V, 1, 2.0f), "b");
  CHECK(model.modified());
  model.undo();
  CHECK_FALSE(model.modified());  // back to what was saved
  model.undo();
  CHECK(model.modified());
  model.redo();
  CHECK_FALSE(model.modified());

  const std::uint64_t revision = model.revision();
  model.reset(direct_session(6, 2, 9));
  CHECK(model.revision() > revision);
  CHECK_FALSE(model.modified());
  CHECK_FALSE(model.can_undo());
  CHECK_FALSE(model.can_redo());
  check_output_row(*model.trace(), model.session(), 5);
}

TEST_CASE("big sessions compute in the background; the newest edit wins") {
  const Session big = direct_session(2048, 64);  // a 48 MiB trace: over the byte limit
  SessionModel model(big);
  CHECK(model.computing());
  CHECK_FALSE(model.trace());  // nothing valid yet
  model.wait_idle();
  CHECK_FALSE(model.computing());
  REQUIRE(model.trace());
  CHECK_FALSE(model.error());
  CHECK(model.progress() == 1.0f);
  check_output_row(*model.trace(), big, 0);
  check_output_row(*model.trace(), big, 1023);
  const auto first = model.trace();

  // Two quick edits: the second cancels (or supersedes) the first.
  const Session older = with_cell(big, InputId::V, 0, 50.0f);
  const Session newer = with_cell(older, InputId::V, 64, -50.0f);  // row 1, column 0
  model.edit(older, "Edit V");
  CHECK(model.computing());
  CHECK(model.trace() == first);  // the previous trace stays while computing
  model.edit(newer, "Edit V");
  CHECK(model.trace() == first);
  CHECK(model.progress() >= 0.0f);
  CHECK(model.progress() <= 1.0f);
  model.wait_idle();
  REQUIRE(model.trace() != first);
  CHECK(model.trace_session().v == newer.v);
  check_output_row(*model.trace(), newer, 0);
  check_output_row(*model.trace(), newer, 700);
  // Incremental: V changed, so the weights were reused from the first trace.
  CHECK(model.trace()->stage_ptr(Stage::Weights) == first->stage_ptr(Stage::Weights));
  CHECK_FALSE(model.poll());

  SUBCASE("an invalid edit drops the pending computation and shows its error at once") {
    model.edit(with_cell(newer, InputId::Q, 0, 1.0f), "Edit Q");
    Session bad = model.session();
    bad.config.num_heads = 5;
    model.edit(bad, "Heads");
    CHECK_FALSE(model.computing());
    REQUIRE(model.error());
    model.wait_idle();
    CHECK(model.trace_session().v == newer.v);  // the dropped result was not installed
    CHECK(model.error());
  }
  SUBCASE("undo to a small session supersedes a running computation") {
    SessionModel mixed(direct_session(4, 4));
    mixed.edit(big, "Open big");
    CHECK(mixed.computing());
    mixed.undo();
    CHECK_FALSE(mixed.computing());
    mixed.wait_idle();
    CHECK(mixed.trace()->dims.len_q == 4);
  }
  SUBCASE("destroying the model while it computes joins the worker") {
    auto busy = std::make_unique<SessionModel>(big);
    busy->edit(with_cell(big, InputId::K, 0, 2.0f), "Edit K");
    REQUIRE(busy->computing());  // the case this subcase is about: a worker still running
    busy.reset();  // must neither hang nor crash
  }
}

TEST_CASE("the finished-computation hook fires once per background result, on the worker, and not after it is cleared") {
  const Session big = direct_session(2048, 64);  // over the byte limit: computed on the worker
  std::atomic<int> calls{0};
  std::atomic<bool> on_other_thread{false};
  const auto ui_thread = std::this_thread::get_id();
  SessionModel model(direct_session(4, 4));
  model.set_on_finished([&] {
    ++calls;
    on_other_thread = std::this_thread::get_id() != ui_thread;
  });
  model.edit(with_cell(direct_session(4, 4), InputId::V, 0, 2.0f), "Edit V");  // small: no worker
  CHECK(calls == 0);
  model.edit(big, "Open big");
  model.wait_idle();  // the hook runs under the lock that wait_idle waits on
  CHECK(calls == 1);
  CHECK(on_other_thread);
  REQUIRE(model.trace());
  CHECK(model.trace_session().v == big.v);

  model.set_on_finished(nullptr);
  model.edit(with_cell(big, InputId::V, 0, 3.0f), "Edit V");
  model.wait_idle();
  CHECK(calls == 1);
}

TEST_CASE("the stages set_peak_stages names come with peaks, here and on the worker") {
  ComputeOptions options;
  options.peak_texels = 512;
  for (const Session& s : {direct_session(600, 8), direct_session(2048, 64)}) {  // here and now; in the background
    INFO("L = " << s.q->dim(1));
    SessionModel model(s, options);
    model.wait_idle();
    REQUIRE(model.trace());
    CHECK(model.trace()->summary(Stage::Weights)->peaks == nullptr);  // no stage named yet
    model.set_peak_stages(stage_set({Stage::Weights}));
    model.edit(with_cell(s, InputId::Q, 0, 2.0f), "Edit Q");
    model.wait_idle();
    REQUIRE(model.trace());
    const StageSummary& weights = *model.trace()->summary(Stage::Weights);
    REQUIRE(weights.peaks != nullptr);
    CHECK(weights.peak_texels == 512);
    const Index block = (s.q->dim(1) + 511) / 512, texels = (s.q->dim(1) + block - 1) / block;
    CHECK(weights.peaks->shape == std::vector<Index>{1, 1, texels, texels});
    // Row 0's first texel: the largest of its block of weights (all positive and finite).
    const Tensor& w = model.trace()->stage(Stage::Weights);
    float largest = 0.0f;
    for (Index c = 0; c < block; ++c)
      for (Index r = 0; r < block; ++r) largest = std::max(largest, w.at({0, 0, r, c}));
    CHECK(weights.peaks->data[0] == largest);
    CHECK(model.trace()->summary(Stage::Scores)->peaks == nullptr);
  }
}
