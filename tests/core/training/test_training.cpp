// The training lab's model: the toy tasks' data, determinism, and that the
// app's own forward and backward train a head that solves previous_token and
// max_so_far with the pattern a learner should see.
#include <doctest/doctest.h>

#include <algorithm>

#include "numerics/attention.hpp"
#include "training/training.hpp"

using al::Index;
using al::ToyTask;

TEST_CASE("toy tasks: targets follow each task's definition") {
  const al::ToyBatch prev = al::toy_batch(ToyTask::PreviousToken, 3, 0, 50);
  const al::ToyBatch max = al::toy_batch(ToyTask::MaxSoFar, 3, 0, 50);
  const al::ToyBatch dup = al::toy_batch(ToyTask::Duplicate, 3, 0, 50);
  Index repeats = 0, news = 0;
  for (Index b = 0; b < 50; ++b)
    for (Index i = 0; i < 8; ++i) {
      const size_t n = size_t(b * 8 + i);
      CHECK(prev.targets[n] == (i == 0 ? -1 : prev.tokens[n - 1]));
      CHECK(max.targets[n] == *std::max_element(max.tokens.begin() + b * 8, max.tokens.begin() + long(n) + 1));
      if (i == 0) {
        CHECK(dup.tokens[n] == 0);  // <s>
        CHECK(dup.targets[n] == -1);
        continue;
      }
      const bool seen = std::count(dup.tokens.begin() + b * 8 + 1, dup.tokens.begin() + long(n), dup.tokens[n]) > 0;
      CHECK(dup.targets[n] == (seen ? 1 : 0));
      (seen ? repeats : news) += 1;
    }
  CHECK(repeats > 100);  // both answers are common
  CHECK(news > 100);
  // Held-out and training sequences differ; the same counter gives the same sequence.
  CHECK(al::toy_batch(ToyTask::MaxSoFar, 3, 7, 1).tokens == al::toy_batch(ToyTask::MaxSoFar, 3, 7, 1).tokens);
  CHECK(al::toy_batch(ToyTask::MaxSoFar, 3, 7, 1).tokens != al::toy_batch(ToyTask::MaxSoFar, 3, 8, 1).tokens);
}

TEST_CASE("ideal shares: each head's weight on the ideal keys, rows after the first") {
  // previous_token on 3 tokens: the ideal keys are 0 (row 0), 0 (row 1) and 1 (row 2).
  const al::Tensor ideal = al::toy_ideal_pattern(ToyTask::PreviousToken, {5, 6, 7});
  const al::Tensor weights({1, 2, 3, 3}, {1.0f, 0.0f, 0.0f,  // head 0: row 1 0.75 on key 0, row 2 0.5 on key 1
                                          0.75f, 0.25f, 0.0f,  //
                                          0.2f, 0.5f, 0.3f,    //
                                          1.0f, 0.0f, 0.0f,    // head 1: row 1 0.25, row 2 0.9
                                          0.25f, 0.75f, 0.0f,  //
                                          0.0f, 0.9f, 0.1f});
  const al::IdealShares shares = al::ideal_shares(weights, ideal);
  REQUIRE(shares.per_head.size() == 2);
  CHECK(shares.per_head[0] == doctest::Approx((0.75 + 0.5) / 2));
  CHECK(shares.per_head[1] == doctest::Approx((0.25 + 0.9) / 2));
  CHECK(shares.best_head == doctest::Approx((0.75 + 0.9) / 2));  // head 0 on row 1, head 1 on row 2
  // Two ideal keys (the maximum twice): a row's share is their sum.
  const al::Tensor two = al::toy_ideal_pattern(ToyTask::MaxSoFar, {3, 1, 3});
  const al::Tensor w2({1, 1, 3, 3}, {1.0f, 0.0f, 0.0f, 0.6f, 0.4f, 0.0f, 0.3f, 0.3f, 0.4f});
  CHECK(al::ideal_shares(w2, two).per_head[0] == doctest::Approx((0.6 + 0.7) / 2));
}

TEST_CASE("training: the same seed gives the same run, another seed another") {
  auto losses = [](std::uint64_t seed) {
    al::TrainingConfig c = al::default_training(ToyTask::MaxSoFar);
    c.seed = seed;
    al::Trainer t(c);
    std::vector<double> l;
    for (int s = 0; s < 20; ++s) l.push_back(t.step());
    return l;
  };
  const std::vector<double> a = losses(5), b = losses(5), c = losses(6);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.back() < a.front());
}

TEST_CASE("training: previous_token learns the off-diagonal head, with learned positions and with RoPE") {
  al::TrainingConfig config = al::default_training(ToyTask::PreviousToken);
  SUBCASE("learned positions") {}
  SUBCASE("RoPE: no position in x, q and k turned by position") { config.positions = al::Positions::Rope; }
  al::Trainer trainer(config);
  for (int s = 0; s < trainer.config().steps; ++s) trainer.step();
  CHECK(trainer.heldout_accuracy() >= 0.98);
  CHECK((trainer.heldout_session().config.positional.type == al::PositionalType::Rope) ==
        (config.positions == al::Positions::Rope));
  // The learned layer, as a session: some head puts most of every row (after
  // the first) on the token before.
  const al::Session session = trainer.heldout_session(4);
  auto trace = al::compute(session);
  REQUIRE(trace);
  const al::Tensor& w = (*trace)->stage(al::Stage::Weights);  // (4, h, 8, 8)
  for (Index b = 0; b < 4; ++b) {
    if (config.positions == al::Positions::Learned) {  // one head is the previous-token head
      bool some_head = false;
      for (Index h = 0; h < w.dim(1); ++h) {
        bool all_rows = true;
        for (Index i = 1; i < 8; ++i) all_rows = all_rows && w.at({b, h, i, i - 1}) > 0.5f;
        some_head = some_head || all_rows;
      }
      CHECK(some_head);
    } else {  // RoPE's scores depend on the tokens too: the heads share the rows between them
      for (Index i = 1; i < 8; ++i) {
        bool some_head = false;
        for (Index h = 0; h < w.dim(1); ++h) some_head = some_head || w.at({b, h, i, i - 1}) > 0.5f;
        CHECK_MESSAGE(some_head, "sequence " << b << " row " << i);
      }
    }
  }
  CHECK(session.tokens.size() == 8);
}

TEST_CASE("training: max_so_far attends the maximum") {
  al::Trainer trainer(al::default_training(ToyTask::MaxSoFar));
  for (int s = 0; s < trainer.config().steps; ++s) trainer.step();
  CHECK(trainer.heldout_accuracy() >= 0.98);
  const al::Session session = trainer.heldout_session(8);
  auto trace = al::compute(session);
  REQUIRE(trace);
  const std::vector<int> tokens = trainer.heldout_tokens(8);
  const al::Tensor& w = (*trace)->stage(al::Stage::Weights);  // (8, h, 8, 8)
  // Summed over the positions holding the running maximum, some head's weight
  // is the largest share of the row in most rows.
  Index rows = 0, on_max = 0;
  for (Index b = 0; b < 8; ++b)
    for (Index i = 0; i < 8; ++i, ++rows) {
      const al::Tensor ideal = al::toy_ideal_pattern(ToyTask::MaxSoFar, {tokens.begin() + b * 8, tokens.begin() + b * 8 + 8});
      float best = 0;
      for (Index h = 0; h < w.dim(1); ++h) {
        float share = 0;
        for (Index j = 0; j <= i; ++j)
          if (ideal.at({i, j}) > 0) share += w.at({b, h, i, j});
        best = std::max(best, share);
      }
      on_max += best > 0.5f;
    }
  CHECK(on_max >= rows * 9 / 10);
}
