// Every built-in preset loads and traces; each shows what its description promises.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "numerics/attention.hpp"
#include "io/session_io.hpp"

using namespace al;

namespace {

std::shared_ptr<const Trace> trace_of(const std::string& preset) {
  auto session = load_preset(preset);
  REQUIRE_MESSAGE(session.ok(), (session.ok() ? "" : session.error().message));
  auto trace = compute(*session);
  REQUIRE_MESSAGE(trace.ok(), (trace.ok() ? "" : trace.error().message));
  return *trace;
}

// Index of the largest weight in row i of (b, head).
Index argmax_key(const Trace& t, Index b, Index head, Index i) {
  const Tensor& w = t.stage(Stage::Weights);
  Index best = 0;
  for (Index j = 1; j < t.dims.len_kv; ++j)
    if (w.at({b, head, i, j}) > w.at({b, head, i, best})) best = j;
  return best;
}

}  // namespace

TEST_CASE("presets: all of them are listed with a description, load and trace") {
  const auto presets = list_presets();
  std::vector<std::string> names;
  for (const PresetInfo& p : presets) {
    CAPTURE(p.name);
    names.push_back(p.name);
    CHECK_FALSE(p.description.empty());
    auto trace = trace_of(p.name);
    // Softmax rows sum to 1 everywhere (no preset has a fully masked row).
    const Tensor& w = trace->stage(Stage::Weights);
    for (Index r = 0; r < w.size() / w.cols(); ++r) {
      double sum = 0;
      for (Index j = 0; j < w.cols(); ++j) sum += w.data[static_cast<size_t>(r * w.cols() + j)];
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    CHECK_FALSE(trace->any_fully_masked());
  }
  for (const char* required : {"default", "seed-003-example", "causal-decoder", "padded-batch", "cross-attention",
                               "seed-000-usage", "seed-002-mask-bug", "seed-004-fused", "llama-block",
                               "mistral-window", "alibi-6-heads", "longformer-global"})
    CHECK(std::find(names.begin(), names.end(), required) != names.end());
  CHECK(std::string(default_preset_name()) == "default");
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("presets: seed-003-example holds the seed's Q, K, V and gives the true weights and outputs") {
  // Seed 003 §6, typed from the seed.
  const double q[5][2] = {{1.0, 0.0}, {0.5, 0.5}, {0.0, 1.0}, {1.0, 1.0}, {0.3, 0.7}};
  const double k[5][2] = {{1.0, 0.5}, {0.5, 1.0}, {1.0, 1.0}, {0.0, 1.0}, {1.0, 0.0}};
  const double v[5][2] = {{10.0, 0.0}, {0.0, 10.0}, {5.0, 5.0}, {0.0, 0.0}, {1.0, 1.0}};
  auto session = load_preset("seed-003-example");
  REQUIRE(session.ok());
  CHECK(session->config.mode == InputMode::Direct);
  CHECK(session->config.d_model == 2);
  CHECK(session->config.num_heads == 1);
  CHECK(session->weights.w_o == nullptr);
  for (int i = 0; i < 5; ++i)
    for (int c = 0; c < 2; ++c) {
      CHECK(session->q->at({0, i, c}) == static_cast<float>(q[i][c]));
      CHECK(session->k->at({0, i, c}) == static_cast<float>(k[i][c]));
      CHECK(session->v->at({0, i, c}) == static_cast<float>(v[i][c]));
    }

  auto trace = trace_of("seed-003-example");
  CHECK(trace->scale == doctest::Approx(1.0 / std::sqrt(2.0)));
  // Independent reference: softmax(q·k / sqrt(2)) row by row, then the weighted sum of v.
  for (int i = 0; i < 5; ++i) {
    double score[5], total = 0;
    for (int j = 0; j < 5; ++j) {
      score[j] = std::exp((q[i][0] * k[j][0] + q[i][1] * k[j][1]) / std::sqrt(2.0));
      total += score[j];
    }
    for (int j = 0; j < 5; ++j)
      CHECK(trace->stage(Stage::Weights).at({0, 0, i, j}) == doctest::Approx(score[j] / total).epsilon(1e-6));
    for (int c = 0; c < 2; ++c) {
      double out = 0;
      for (int j = 0; j < 5; ++j) out += score[j] / total * v[j][c];
      CHECK(trace->stage(Stage::Output).at({0, i, c}) == doctest::Approx(out).epsilon(1e-6));
    }
  }
  // The seed prints α_11 = 0.2514; the true value (computed by hand: e^0.7071 / Σ) differs.
  CHECK(trace->stage(Stage::Weights).at({0, 0, 0, 0}) != doctest::Approx(0.2514).epsilon(1e-3));
}

TEST_CASE("presets: default has a previous-word head and a different second head") {
  auto trace = trace_of("default");
  CHECK(trace->dims.heads == 2);
  CHECK(trace->dims.len_q == 6);
  int rows_that_differ = 0;
  for (Index i = 1; i < 6; ++i) {
    CHECK(argmax_key(*trace, 0, 0, i) == i - 1);  // head 1: the word before
    rows_that_differ += argmax_key(*trace, 0, 1, i) != i - 1;
  }
  CHECK(rows_that_differ >= 4);
  // head 2: "sat" (2) looks at "cat" (1), "on" (3) looks at a noun.
  CHECK(argmax_key(*trace, 0, 1, 2) == 1);
  const Index on_looks_at = argmax_key(*trace, 0, 1, 3);
  CHECK((on_looks_at == 1 || on_looks_at == 5));
}

TEST_CASE("presets: cross-attention aligns le/the, chat/cat, dort/sleeping with Lq != Lk") {
  auto trace = trace_of("cross-attention");
  CHECK(trace->dims.len_q == 3);
  CHECK(trace->dims.len_kv == 5);
  CHECK(trace->stage(Stage::Weights).shape == std::vector<Index>{1, 2, 3, 5});
  CHECK(argmax_key(*trace, 0, 0, 0) == 0);
  CHECK(argmax_key(*trace, 0, 0, 1) == 1);
  CHECK(argmax_key(*trace, 0, 0, 2) == 3);
  // "head 1 finds the verb": every query's largest weight is on "is" (2) or "sleeping" (3).
  for (Index i = 0; i < 3; ++i) {
    const Index key = argmax_key(*trace, 0, 1, i);
    CHECK((key == 2 || key == 3));
  }
}

TEST_CASE("presets: causal-decoder's weights above the diagonal are exactly 0") {
  auto trace = trace_of("causal-decoder");
  const Tensor& w = trace->stage(Stage::Weights);
  for (Index h = 0; h < 2; ++h)
    for (Index i = 0; i < 6; ++i)
      for (Index j = 0; j < 6; ++j)
        if (j > i) CHECK(w.at({0, h, i, j}) == 0.0f);
        else CHECK(w.at({0, h, i, j}) > 0.0f);
}

TEST_CASE("presets: padded-batch gives padded keys exactly 0 weight, per sentence") {
  auto trace = trace_of("padded-batch");
  const Index lengths[3] = {5, 3, 2};
  const Tensor& w = trace->stage(Stage::Weights);
  for (Index b = 0; b < 3; ++b)
    for (Index h = 0; h < 2; ++h)
      for (Index i = 0; i < 5; ++i)
        for (Index j = 0; j < 5; ++j)
          if (j >= lengths[b]) CHECK(w.at({b, h, i, j}) == 0.0f);
          else CHECK(w.at({b, h, i, j}) > 0.0f);
}

TEST_CASE("presets: seed-002's -1e-20 fill does not mask: 'masked' keys keep real weight") {
  auto session = load_preset("seed-002-mask-bug");
  REQUIRE(session.ok());
  CHECK(session->config.mask_fill == -1e-20);
  CHECK(session->config.mask.key_padding->shape == std::vector<Index>{1, 10});
  CHECK(*session->k == *session->v);  // the seed's value = key
  auto trace = trace_of("seed-002-mask-bug");
  const Tensor& w = trace->stage(Stage::Weights);
  double masked_share = 0;
  for (Index j : {0, 1, 4, 5, 6, 7, 8, 9}) masked_share += w.at({0, 0, 0, j});
  CHECK(masked_share > 0.5);  // 8 of 10 keys are "masked" yet hold most of the weight
}

TEST_CASE("presets: seed-004-fused reads a torch-layout fused weight, drops in training") {
  auto session = load_preset("seed-004-fused");
  REQUIRE(session.ok());
  REQUIRE(session->weights.fused());
  CHECK(session->weights.w_qkv->shape == std::vector<Index>{8, 24});  // math layout (d, 3d)
  CHECK(session->config.dropout.training);
  auto trace = trace_of("seed-004-fused");
  CHECK(trace->stage(Stage::Dropped).data != trace->stage(Stage::Weights).data);
  // The padded last key of the second sentence: fill -1e20 makes its weight 0 (exp underflows).
  for (Index i = 0; i < 4; ++i) CHECK(trace->stage(Stage::Weights).at({1, 0, i, 3}) == 0.0f);
}

TEST_CASE("presets: the trained heads do what their descriptions say, in every head") {
  // learned-previous-token: "puts each token's attention on the token before it".
  auto previous = trace_of("learned-previous-token");
  for (Index h = 0; h < previous->dims.heads; ++h)
    for (Index i = 1; i < previous->dims.len_q; ++i) CHECK(argmax_key(*previous, 0, h, i) == i - 1);
  // learned-max: "each token attends to the largest letter seen so far", found here by a loop over
  // the tokens themselves.
  auto session = load_preset("learned-max");
  REQUIRE(session.ok());
  const std::vector<std::string>& tokens = session->tokens;
  auto largest = trace_of("learned-max");
  REQUIRE(static_cast<Index>(tokens.size()) == largest->dims.len_q);
  Index largest_so_far = 0;
  for (Index i = 0; i < largest->dims.len_q; ++i) {
    if (tokens[static_cast<size_t>(i)] > tokens[static_cast<size_t>(largest_so_far)]) largest_so_far = i;
    for (Index h = 0; h < largest->dims.heads; ++h) CHECK(argmax_key(*largest, 0, h, i) == largest_so_far);
  }
}

TEST_CASE("presets: seed-000-usage has the seed's sizes") {
  auto session = load_preset("seed-000-usage");
  REQUIRE(session.ok());
  CHECK(session->x->shape == std::vector<Index>{16, 100, 512});
  CHECK(session->config.num_heads == 8);
  auto bytes = estimate_trace_bytes(*session);
  REQUIRE(bytes.ok());
  CHECK(*bytes > 16 * 8 * 100 * 100 * 4);  // at least one (B, h, L, L) stage
}

TEST_CASE("presets: an unknown name is an UnknownPreset error listing the presets") {
  auto r = load_preset("defualt");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::UnknownPreset);
  CHECK(r.error().message.find("'defualt'") != std::string::npos);
  CHECK(r.error().message.find("seed-003-example") != std::string::npos);
}

TEST_CASE("presets of today's attention: each is what its description says, checked on the weights") {
  auto weight = [](const Trace& t, Index h, Index i, Index j) { return t.stage(Stage::Weights).at({0, h, i, j}); };
  {
    auto session = load_preset("llama-block");
    REQUIRE(session.ok());
    CHECK(session->config.num_heads == 8);
    CHECK(session->config.kv_heads() == 2);
    CHECK(session->config.positional.type == PositionalType::Rope);
    CHECK(session->config.positional.rope_style == RopeStyle::Half);
    auto t = trace_of("llama-block");
    CHECK(t->stage(Stage::K).shape == std::vector<Index>{1, 2, 8, 4});  // (B, h_kv, Lk, d_k)
    CHECK(t->has(Stage::QRot));
    CHECK(t->has(Stage::KRot));
    for (Index h = 0; h < 8; ++h)
      for (Index i = 0; i < 8; ++i)
        for (Index j = 0; j < 8; ++j) CHECK((weight(*t, h, i, j) > 0) == (j <= i));  // causal
  }
  {
    auto t = trace_of("mistral-window");
    CHECK(t->dims.kv_heads == 2);
    CHECK(t->dims.heads == 4);
    for (Index i = 0; i < 10; ++i)
      for (Index j = 0; j < 10; ++j) CHECK((weight(*t, 1, i, j) > 0) == (i - 3 < j && j <= i));  // the 3 most recent
  }
  {
    auto t = trace_of("alibi-6-heads");
    const std::vector<double> slopes = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
    REQUIRE(t->alibi_slopes.size() == 6);
    for (size_t h = 0; h < 6; ++h) CHECK(t->alibi_slopes[h] == slopes[h]);
    CHECK(t->has(Stage::Biased));
    // "the scaled scores stay within ±2.4" — small next to the steep heads' penalty (up to 7/2).
    const Tensor& scaled = t->stage(Stage::Scaled);
    for (float v : scaled.data) CHECK(std::fabs(v) <= 2.4f);
    // "the steep heads 4, 0 and 5 look at nearby tokens, the flat heads 1, 2 and 3 spread out": the
    // mean distance Σ_j α_ij·|i − j| over queries 1..7, ordered as the slopes within the steep heads,
    // and every steep head nearer than every flat one (a uniform causal row gives 2.0).
    auto mean_distance = [&](Index h) {
      double total = 0;
      for (Index i = 1; i < 8; ++i)
        for (Index j = 0; j <= i; ++j) total += weight(*t, h, i, j) * static_cast<double>(i - j);
      return total / 7;
    };
    CHECK(mean_distance(4) < mean_distance(0));
    CHECK(mean_distance(0) < mean_distance(5));
    for (Index steep : {4, 0, 5})
      for (Index flat : {1, 2, 3}) CHECK(mean_distance(steep) < mean_distance(flat));
    CHECK(mean_distance(4) < 1.2);  // slope 1/2: about half of the uniform row's 2.0
  }
  {
    auto session = load_preset("longformer-global");
    REQUIRE(session.ok());
    CHECK(session->tokens[0] == "[CLS]");
    auto t = trace_of("longformer-global");
    CHECK(t->has(Stage::XPos));
    for (Index i = 0; i < 10; ++i)
      for (Index j = 0; j < 10; ++j)  // window 2: |i − j| < 2, or the global token 0 on either side
        CHECK((weight(*t, 0, i, j) > 0) == (std::abs(i - j) < 2 || i == 0 || j == 0));
  }
}
