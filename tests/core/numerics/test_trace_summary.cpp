// ComputeOptions::summarize: the head means and value ranges the app's views
// show, checked against naive loops over the trace's own stages.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>

#include "base/random.hpp"
#include "numerics/attention.hpp"
#include "numerics/stage_summary.hpp"
#include "attention_reference.hpp"

using namespace attention_test;
using al::Stage;

namespace {

al::ComputeOptions summarizing() {
  al::ComputeOptions options;
  options.summarize = true;
  return options;
}

// The summary of stage `s` against a naive pass over its (B, h, R, C) values.
void check_summary(const al::Trace& trace, Stage s) {
  INFO("stage " << al::stage_name(s));
  const al::StageSummary* summary = trace.summary(s);
  REQUIRE(summary != nullptr);
  const Tensor& t = trace.stage(s);
  const Index batch = t.dim(0), heads = t.dim(1), rows = t.rows(), cols = t.cols();
  const bool skip_masked = s == Stage::Masked && trace.mask;
  REQUIRE(summary->head_mean->shape == std::vector<Index>{batch, rows, cols});
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      float max_abs = 0.0f, max_value = -std::numeric_limits<float>::infinity();
      for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) {
          const float v = t.at({b, h, r, c});
          if (!std::isfinite(v) || (skip_masked && trace.mask->at({b, r, c}) == 0.0f)) continue;
          max_abs = std::max(max_abs, std::fabs(v));
          max_value = std::max(max_value, v);
        }
      CHECK(summary->max_abs[static_cast<size_t>(b * heads + h)] == max_abs);
      CHECK(summary->max_value[static_cast<size_t>(b * heads + h)] == max_value);
    }
    for (Index r = 0; r < rows; ++r)
      for (Index c = 0; c < cols; ++c) {
        float sum = 0.0f;  // in head order, as the GUI averaged before
        for (Index h = 0; h < heads; ++h) sum += t.at({b, h, r, c});
        const float mean = sum / static_cast<float>(heads), got = summary->head_mean->at({b, r, c});
        if (std::isnan(mean)) CHECK(std::isnan(got));
        else CHECK(got == mean);
      }
  }
}

// The peak of cells [r0, r1) x [c0, c1) of a (rows, cols) matrix at `m`, by its definition:
// NaN if any cell is NaN, else the finite cell of largest magnitude, the first of equals in
// column-major order (down each column, columns left to right), else the top-left cell.
float naive_peak(const float* m, Index cols, Index r0, Index r1, Index c0, Index c1) {
  const float* best = nullptr;
  for (Index c = c0; c < c1; ++c)
    for (Index r = r0; r < r1; ++r) {
      const float& v = m[r * cols + c];
      if (std::isnan(v)) return v;
      if (std::isfinite(v) && (!best || std::fabs(v) > std::fabs(*best))) best = &v;
    }
  return best ? *best : m[r0 * cols + c0];
}

// `peaks` (Tr, Tc) against the naive peaks of the (rows, cols) matrix at `m` in blocks for
// `max_texels` texels a side: ceil(rows / max_texels) rows, the last block what is left.
void check_peaks(const float* peaks, const float* m, Index rows, Index cols, Index max_texels) {
  const Index block_rows = (rows + max_texels - 1) / max_texels, block_cols = (cols + max_texels - 1) / max_texels;
  const Index texel_rows = (rows + block_rows - 1) / block_rows, texel_cols = (cols + block_cols - 1) / block_cols;
  Index wrong = 0;
  for (Index t = 0; t < texel_rows; ++t)
    for (Index u = 0; u < texel_cols; ++u) {
      const float want = naive_peak(m, cols, t * block_rows, std::min(rows, (t + 1) * block_rows), u * block_cols,
                                    std::min(cols, (u + 1) * block_cols));
      const float got = peaks[t * texel_cols + u];
      const bool same = std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want);
      if (!same && wrong++ < 5) FAIL_CHECK("texel (" << t << ", " << u << "): " << got << ", want " << want);
    }
  CHECK(wrong == 0);
}

constexpr std::array<Stage, 9> kPerHead = {Stage::Q,       Stage::K,       Stage::V,
                                           Stage::Scores,  Stage::Scaled,  Stage::Masked,
                                           Stage::Weights, Stage::Dropped, Stage::Context};

}  // namespace

TEST_CASE("summarize: head means and ranges of every per-head stage") {
  // 37 keys: rows that are not a multiple of the vector width exercise the tail.
  al::Session s = random_projection_session(2, 37, 16, 4, 301);
  auto plain = compute_ok(s);
  for (Stage st : al::kAllStages) CHECK(plain->summary(st) == nullptr);  // off unless asked

  SUBCASE("no mask, eval: shared stages share their summary") {
    auto t = compute_ok(s, summarizing());
    for (Stage st : kPerHead) check_summary(*t, st);
    CHECK(t->summary(Stage::Masked) == t->summary(Stage::Scaled));
    CHECK(t->summary(Stage::Dropped) == t->summary(Stage::Weights));
    CHECK(t->summary(Stage::Concat) == nullptr);
    // Weights are probabilities: every row sums to 1, so no value exceeds 1.
    for (float v : t->summary(Stage::Weights)->max_value) CHECK((v > 0.0f && v <= 1.0f));
  }
  SUBCASE("a causal mask with a finite fill: masked cells are not in the masked stage's range") {
    s.config.mask.causal = true;
    s.config.mask_fill = -1e9;
    auto t = compute_ok(s, summarizing());
    for (Stage st : kPerHead) check_summary(*t, st);
    for (float v : t->summary(Stage::Masked)->max_abs) CHECK(v < 1e3f);
  }
  SUBCASE("a fully masked row with -inf fill: NaN weights stay NaN in the mean, out of the range") {
    s.config.mask.key_padding = tensor({2, 37}, std::vector<float>(2 * 37, 0.0f));
    s.config.mask_fill = -std::numeric_limits<double>::infinity();
    auto t = compute_ok(s, summarizing());
    REQUIRE(t->any_fully_masked());
    CHECK(std::isnan(t->summary(Stage::Weights)->head_mean->data[0]));
    for (float v : t->summary(Stage::Weights)->max_value) CHECK(v == -std::numeric_limits<float>::infinity());
    for (float v : t->summary(Stage::Masked)->max_abs) CHECK(v == 0.0f);
    check_summary(*t, Stage::Weights);
  }
}

TEST_CASE("summarize: an incremental recompute reuses the summaries of the stages it reuses") {
  al::Session s = random_projection_session(1, 40, 16, 2, 311);
  auto before = compute_ok(s, summarizing());
  al::Session e = s;
  Tensor w_v = *s.weights.w_v;
  w_v.data[5] = 3.0f;
  e.weights.w_v = al::make_tensor(std::move(w_v));
  auto after = al::compute(e, summarizing(), &s, before);
  REQUIRE(after.ok());
  const al::Trace& t = *after.value();
  CHECK(t.summary(Stage::Weights) == before->summary(Stage::Weights));
  CHECK(t.summary(Stage::Q) == before->summary(Stage::Q));
  CHECK(t.summary(Stage::V) != before->summary(Stage::V));
  for (Stage st : kPerHead) check_summary(t, st);
}

TEST_CASE("summarize_stage: many heads and row blocks, on both threads, against a naive loop") {
  // (2, 12, 130, 77): 77 columns leave whole four-packet steps, single packets and a scalar tail
  // at both vector widths; 130 rows are five row blocks (the last of 2), on both threads (240 240
  // values, above kParallelFlops); 12 heads are summed in registers.
  const Index batch = 2, heads = 12, rows = 130, cols = 77;
  Tensor stage = al::random_normal({batch, heads, rows, cols}, 907, 3.0);
  const float inf = std::numeric_limits<float>::infinity();
  auto cell = [&](Index b, Index h, Index r, Index c) -> float& {
    return stage.data[static_cast<size_t>(((b * heads + h) * rows + r) * cols + c)];
  };
  for (Index h = 0; h < heads; ++h) cell(0, h, 3, 5) = -0.0f;  // 0 + -0 + ... is +0, as the loop sums
  cell(0, 2, 10, 40) = std::numeric_limits<float>::quiet_NaN();   // in the mean, out of the ranges
  cell(1, 7, 129, 76) = inf;                                       // in the tail
  cell(1, 3, 33, 20) = -inf;
  cell(1, 11, 0, 0) = 1e6f;  // the largest value, on a masked cell below
  Tensor attend = al::random_uniform({batch, rows, cols}, 911, 0.0, 1.0);
  for (float& a : attend.data) a = a < 0.3f ? 0.0f : 1.0f;
  attend.data[static_cast<size_t>((1 * rows + 0) * cols + 0)] = 0.0f;

  // The mean goes into a tensor of any values (a recycled buffer's): here NaN, all overwritten.
  auto summarize = [&](const float* mask) {
    return al::detail::summarize_stage(
        stage, mask, std::make_shared<Tensor>(std::vector<Index>{batch, rows, cols}, std::numeric_limits<float>::quiet_NaN()),
        0);
  };
  for (const float* mask : {static_cast<const float*>(nullptr), static_cast<const float*>(attend.data.data())}) {
    INFO((mask ? "with a mask" : "no mask"));
    const al::StageSummary summary = summarize(mask);
    for (Index b = 0; b < batch; ++b) {
      for (Index h = 0; h < heads; ++h) {
        float max_abs = 0.0f, max_value = -inf;
        for (Index r = 0; r < rows; ++r)
          for (Index c = 0; c < cols; ++c) {
            const float v = cell(b, h, r, c);
            if (!std::isfinite(v) || (mask && mask[(b * rows + r) * cols + c] == 0.0f)) continue;
            max_abs = std::max(max_abs, std::fabs(v));
            max_value = std::max(max_value, v);
          }
        CHECK(summary.max_abs[static_cast<size_t>(b * heads + h)] == max_abs);
        CHECK(summary.max_value[static_cast<size_t>(b * heads + h)] == max_value);
      }
      for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) {
          float sum = 0.0f;
          for (Index h = 0; h < heads; ++h) sum += cell(b, h, r, c);
          const float mean = sum / static_cast<float>(heads), got = summary.head_mean->at({b, r, c});
          if (std::isnan(mean)) {
            CHECK(std::isnan(got));
          } else {
            CHECK(got == mean);
            CHECK(std::signbit(got) == std::signbit(mean));
          }
        }
    }
  }
  CHECK(summarize(nullptr).max_value[static_cast<size_t>(heads + 11)] == 1e6f);
  CHECK(summarize(attend.data.data()).max_value[static_cast<size_t>(heads + 11)] < 1e6f);
}

TEST_CASE("summarize: head means written into the buffers of a freed trace's means are right") {
  // 160 keys: a (160, 160) mean is 25 600 floats, large enough to be recycled like a stage.
  std::set<const float*> freed;
  {
    auto first = compute_ok(random_projection_session(1, 160, 16, 2, 313), summarizing());
    for (Stage st : kPerHead) freed.insert(first->summary(st)->head_mean->data.data());
  }
  auto t = compute_ok(random_projection_session(1, 160, 16, 2, 317), summarizing());
  bool reused = false;
  for (Stage st : kPerHead) {
    check_summary(*t, st);
    reused = reused || freed.count(t->summary(st)->head_mean->data.data()) > 0;
  }
  CHECK(reused);  // the case this test is for: a mean on a buffer holding the earlier trace's values
}

TEST_CASE("summarize_stage: the peaks of every head and of the mean, against their definition") {
  // (2, 3, 1030, 700) for 512 texels: blocks of 3 rows (the last block one row) and 2 columns,
  // 344 x 350 texels; rows of blocks of 3 cut the summary's tasks at 33 rows, on both threads.
  const Index batch = 2, heads = 3, rows = 1030, cols = 700, texels = 512;
  Tensor stage = al::random_normal({batch, heads, rows, cols}, 919, 2.0);
  const float inf = std::numeric_limits<float>::infinity();
  auto cell = [&](Index b, Index h, Index r, Index c) -> float& {
    return stage.data[static_cast<size_t>(((b * heads + h) * rows + r) * cols + c)];
  };
  cell(0, 0, 0, 1) = 9.0f;    // a tie in block (0, 0): -9 comes first down the columns
  cell(0, 0, 1, 0) = -9.0f;
  cell(0, 1, 40, 41) = std::numeric_limits<float>::quiet_NaN();  // NaN wins its block
  cell(1, 2, 1029, 698) = inf;                                    // the last block, one row, none finite:
  cell(1, 2, 1029, 699) = -inf;                                   // its first cell
  for (Index r = 15; r < 18; ++r)                                 // block (5, 5) all -inf: stays -inf
    for (Index c = 10; c < 12; ++c) cell(1, 0, r, c) = -inf;
  for (Index r = 30; r < 33; ++r)                                 // block (10, 5): -inf but one cell
    for (Index c = 10; c < 12; ++c) cell(1, 0, r, c) = r == 32 && c == 11 ? 0.25f : -inf;

  const al::StageSummary summary =
      al::detail::summarize_stage(stage, nullptr, std::make_shared<Tensor>(std::vector<Index>{batch, rows, cols}), texels);
  REQUIRE(summary.peaks != nullptr);
  REQUIRE(summary.mean_peaks != nullptr);
  CHECK(summary.peak_texels == texels);
  CHECK(summary.peaks->shape == std::vector<Index>{batch, heads, 344, 350});
  CHECK(summary.mean_peaks->shape == std::vector<Index>{batch, 344, 350});
  const Index texel_count = 344 * 350;
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      INFO("batch " << b << ", head " << h);
      check_peaks(summary.peaks->data.data() + (b * heads + h) * texel_count, &cell(b, h, 0, 0), rows, cols, texels);
    }
    std::vector<float> mean(static_cast<size_t>(rows * cols));  // summed in head order, as the summary
    for (Index i = 0; i < rows * cols; ++i) {
      float sum = 0.0f;
      for (Index h = 0; h < heads; ++h) sum += stage.data[static_cast<size_t>((b * heads + h) * rows * cols + i)];
      mean[static_cast<size_t>(i)] = sum / static_cast<float>(heads);
    }
    INFO("batch " << b << ", the mean");
    check_peaks(summary.mean_peaks->data.data() + b * texel_count, mean.data(), rows, cols, texels);
  }
  const float* head0 = summary.peaks->data.data();
  CHECK(head0[0] == -9.0f);
  CHECK(std::isnan(summary.peaks->data[static_cast<size_t>(texel_count + 13 * 350 + 20)]));
  const float* batch1_head0 = head0 + 3 * texel_count;
  CHECK(batch1_head0[5 * 350 + 5] == -inf);
  CHECK(batch1_head0[10 * 350 + 5] == 0.25f);
  CHECK(head0[6 * texel_count - 1] == inf);

  SUBCASE("no peaks for a stage no longer than the texels, nor without texels") {
    Tensor small = al::random_normal({1, 2, 512, 300}, 923, 1.0);
    const al::StageSummary s = al::detail::summarize_stage(small, nullptr, std::make_shared<Tensor>(std::vector<Index>{1, 512, 300}), 512);
    CHECK(s.peaks == nullptr);
    CHECK(s.mean_peaks == nullptr);
    CHECK(s.peak_texels == 0);
    const al::StageSummary none = al::detail::summarize_stage(stage, nullptr, std::make_shared<Tensor>(std::vector<Index>{batch, rows, cols}), 0);
    CHECK(none.peaks == nullptr);
  }
}

TEST_CASE("summarize: a trace's peaks for its heatmaps, with a causal -inf mask, against their definition") {
  // 600 tokens, 2 heads of 8: the (600, 600) stages and the (600, 8) Q, K, V are longer than 512
  // on a side, in blocks of 2 rows (and 2 columns).
  al::Session s = random_projection_session(1, 600, 16, 2, 331);
  s.config.mask.causal = true;
  s.config.mask_fill = -std::numeric_limits<double>::infinity();
  al::ComputeOptions options = summarizing();
  options.peak_texels = 512;
  for (Stage st : kPerHead) options.peak_stages.set(static_cast<size_t>(st));
  options.peak_stages.reset(static_cast<size_t>(Stage::V));
  auto t = compute_ok(s, options);
  CHECK(t->summary(Stage::V)->peaks == nullptr);  // not asked for
  for (Stage st : kPerHead) {
    if (st == Stage::V) continue;
    INFO("stage " << al::stage_name(st));
    const al::StageSummary* summary = t->summary(st);
    REQUIRE(summary != nullptr);
    REQUIRE(summary->peaks != nullptr);
    const Tensor& stage = t->stage(st);
    const Index heads = stage.dim(1), rows = stage.rows(), cols = stage.cols();
    const Index texel_count = summary->peaks->rows() * summary->peaks->cols();
    for (Index h = 0; h < heads; ++h)
      check_peaks(summary->peaks->data.data() + h * texel_count, stage.data.data() + h * rows * cols, rows, cols, 512);
    check_peaks(summary->mean_peaks->data.data(), summary->head_mean->data.data(), rows, cols, 512);
  }
  CHECK(t->summary(Stage::Masked)->peaks->data[1] == -std::numeric_limits<float>::infinity());  // above the diagonal
  CHECK(compute_ok(s, summarizing())->summary(Stage::Weights)->peaks == nullptr);  // no texels asked for

  // With no mask the masked stage is the scaled one, summary and all: asking for it reduces that.
  s.config.mask.causal = false;
  options.peak_stages = al::stage_set({Stage::Masked});
  auto unmasked = compute_ok(s, options);
  REQUIRE(unmasked->stage_ptr(Stage::Masked) == unmasked->stage_ptr(Stage::Scaled));
  const al::StageSummary* masked = unmasked->summary(Stage::Masked);
  REQUIRE(masked->peaks != nullptr);
  CHECK(masked == unmasked->summary(Stage::Scaled));
  check_peaks(masked->peaks->data.data(), unmasked->stage(Stage::Masked).data.data(), 600, 600, 512);
  CHECK(unmasked->summary(Stage::Scores)->peaks == nullptr);
}
