#include "numerics/attention_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

#include "base/thread_team.hpp"
#include "numerics/kernel_dispatch.hpp"
#include "numerics/panel_gemm.hpp"
#include "numerics/positions.hpp"
#include "numerics/row_kernels.hpp"
#include "numerics/work_items.hpp"

namespace al::detail {

namespace {

// Rows per work item of the per-head pass: big enough for an efficient GEMM, small enough
// that two cores share even a single head and cancellation is noticed quickly.
constexpr Index kHeadRows = 128;
// Rows of scores swept at a time by multiply_panels_scaled: their scaled rows are read back by
// the softmax from L2.
constexpr Index kSweepRows = 12;
// A fresh stage's block of rows is faulted in with one system call from this size (64 KiB,
// 16 pages) up. Smaller blocks share pages: at the training lab's size (B = 64, L = 8) a call per
// block made an Adam step 0.55 -> 0.92 ms, for the few faults it saved.
constexpr Index kFaultInFloats = Index{1} << 14;

// Runs body(task) for task in [0, count), on the thread team (base/thread_team) when
// `parallel`, skipping what is left once cancelled. Progress is reported by the calling
// thread, as the contract of ComputeOptions asks.
template <class Body>
void for_each_task(Index count, bool parallel, const Progress& progress, float from, float to, Body&& body) {
  std::atomic<Index> done{0};
  parallel_for(count, parallel, [&](Index task, bool on_caller) {
    if (progress.cancelled()) return;
    body(task);
    const Index finished = ++done;
    if (on_caller) progress(from + (to - from) * static_cast<float>(finished) / static_cast<float>(count));
  });
}

// One GEMM (or, in direct mode, one copy) whose column blocks go to consecutive
// targets among Q, K, V: d_model columns for Q, H_kv·d_k for K and V.
struct ProjectionJob {
  const Tensor* input = nullptr;   // (B, L, d_model)
  TensorPtr weight;                // (d_model, n), null in direct mode
  const Tensor* bias = nullptr;    // (n) or null
  Index column = 0, width = 0;     // the weight's column block [column, column + width)
  Index length = 0;                // L of the input
  std::vector<Tensor*> targets;    // (B, heads, L, d_k) each
  std::vector<Index> target_heads; // h for Q, h_kv for K and V; their d_k-blocks fill the width
  // The same projection's previous input and outputs (one per target), or null.
  const Tensor* previous_input = nullptr;
  std::vector<const Tensor*> previous_targets;
};

std::vector<ProjectionJob> projection_jobs(const Plan& plan, const std::array<Tensor*, 3>& targets,
                                           const std::array<PreviousProjection, 3>& before) {
  std::vector<ProjectionJob> jobs;
  int previous = -1;  // index among Q, K, V of the last target added
  for (int i = 0; i < 3; ++i) {
    if (!targets[i]) continue;
    const ProjectionSource& src = plan.qkv[i];
    const Index heads = i == kQ ? plan.dims.heads : plan.dims.kv_heads;
    const Index width = heads * plan.dims.d_k;
    if (!jobs.empty() && previous == i - 1 && src.weight) {
      ProjectionJob& last = jobs.back();
      // W_qkv's next column block on the same input: widen the GEMM instead of starting another.
      if (last.input == src.input.get() && last.weight == src.weight && last.bias == src.bias.get() &&
          last.column + last.width == src.column) {
        last.width += width;
        last.targets.push_back(targets[i]);
        last.target_heads.push_back(heads);
        // Rows are copied only when every target of the widened GEMM has its previous output.
        if (last.previous_input && last.previous_input == before[i].input)
          last.previous_targets.push_back(before[i].output);
        else
          last.previous_input = nullptr;
        previous = i;
        continue;
      }
    }
    ProjectionJob job;
    job.input = src.input.get();
    job.weight = src.weight;
    job.bias = src.bias.get();
    job.column = src.column;
    job.width = width;
    job.length = i == kQ ? plan.dims.len_q : plan.dims.len_kv;
    job.targets = {targets[i]};
    job.target_heads = {heads};
    if (src.weight && before[i].input) {
      job.previous_input = before[i].input;
      job.previous_targets = {before[i].output};
    }
    jobs.push_back(std::move(job));
    previous = i;
  }
  return jobs;
}

// The targets' heads side by side across a job's width, d_k columns each ("slots"): the
// target and head of slot `slot`.
std::pair<size_t, Index> slot_target(const ProjectionJob& job, Index slot) {
  size_t t = 0;
  while (slot >= job.target_heads[t]) slot -= job.target_heads[t++];
  return {t, slot};
}

// Copies rows [first, first + count) of a (B·L, slots × d_k) row-major block holding slots
// [slot, slot + slots) to their targets: row (b, l), slot s = head hh of target t goes to
// target t at (b, hh, l, :).
void scatter_to_heads(const Dims& dims, const ProjectionJob& job, const float* rows, Index stride, Index first,
                      Index count, Index slot, Index slots) {
  const Index d_k = dims.d_k;
  for (Index s = 0; s < slots; ++s) {
    const auto [t, head] = slot_target(job, slot + s);
    float* dest = job.targets[t]->data.data();
    const Index heads = job.target_heads[t];
    for (Index r = 0; r < count; ++r) {
      const Index b = (first + r) / job.length, l = (first + r) % job.length;
      std::memcpy(dest + ((b * heads + head) * job.length + l) * d_k, rows + r * stride + s * d_k,
                  sizeof(float) * static_cast<size_t>(d_k));
    }
  }
}

// Rows [first, first + count) of slots [slot, slot + slots) of a projection, x (count, d_model)
// times the packed weight block of those slots, written straight into each target's head
// layout (B, heads, L, d_k) and the bias added: the bits of computing the rows whole and
// scatter_to_heads, without the copy (4 % of a trace at L = 256). Needs d_k a multiple of
// kPanelWidth, so that no panel straddles two heads.
void project_into_heads(const Dims& dims, const ProjectionJob& job, const float* x, const PanelMatrix& packed,
                        Index first, Index count, Index slot, Index slots) {
  const Index d_k = dims.d_k, length = job.length;
  for (Index s = 0; s < slots;) {
    const auto [t, head] = slot_target(job, slot + s);
    const Index heads = job.target_heads[t];
    const Index run = std::min(slots - s, heads - head);  // slots of target t from here
    for (Index r = first; r < first + count;) {         // rows of one batch element at a time
      const Index b = r / length, l = r % length, rows = std::min(first + count - r, length - l);
      float* out = job.targets[t]->data.data() + ((b * heads + head) * length + l) * d_k;  // (run, rows, d_k), heads L·d_k apart
      multiply_panel_columns(x + (r - first) * dims.d_model, dims.d_model, rows, packed, s * d_k, run * d_k, out, d_k,
                             d_k, length * d_k);
      if (job.bias)
        for (Index h = 0; h < run; ++h)
          MatrixMap(out + h * length * d_k, rows, d_k).rowwise() +=
              Eigen::Map<const Eigen::RowVectorXf>(job.bias->data.data() + job.column + (slot + s + h) * d_k, d_k);
      r += rows;
    }
    s += run;
  }
}

// True when input row `row` equals the previous input's: then its projection is the
// previous one's, and copy_previous_rows takes it.
bool row_unchanged(const ProjectionJob& job, Index d_model, Index row) {
  return std::memcmp(job.input->data.data() + row * d_model, job.previous_input->data.data() + row * d_model,
                     sizeof(float) * static_cast<size_t>(d_model)) == 0;
}

// Rows [first, first + count) of slots [slot, slot + slots), in head layout, from the previous outputs.
void copy_previous_rows(const Dims& dims, const ProjectionJob& job, Index first, Index count, Index slot,
                        Index slots) {
  const Index d_k = dims.d_k;
  for (Index s = slot; s < slot + slots; ++s) {
    const auto [t, head] = slot_target(job, s);
    for (Index r = first; r < first + count; ++r) {
      const Index b = r / job.length, l = r % job.length;
      const Index offset = ((b * job.target_heads[t] + head) * job.length + l) * d_k;
      std::memcpy(job.targets[t]->data.data() + offset, job.previous_targets[t]->data.data() + offset,
                  sizeof(float) * static_cast<size_t>(d_k));
    }
  }
}

// Folds one row of weights into the checks: |Σ w − 1|, the largest weight on a masked
// cell (attend 0) and the row's whole weight on masked cells. A NaN error wins, as in merge_checks.
void check_row(double row_total, const float* w, const float* attend, Index n, TraceChecks& checks) {
  const double error = std::fabs(row_total - 1.0);
  if (std::isnan(error) || error > checks.row_sum_error_max) checks.row_sum_error_max = error;
  if (!attend) return;
  float masked_max = static_cast<float>(checks.masked_weight_max);
  double share = 0;
  for (Index j = 0; j < n; ++j)
    if (attend[j] == 0.0f) {
      share += w[j];
      if (w[j] > masked_max) masked_max = w[j];
    }
  checks.masked_weight_max = masked_max;
  checks.masked_share_max = std::max(checks.masked_share_max, share);
}

}  // namespace

void project_heads(const Plan& plan, const std::array<Tensor*, 3>& targets, const Progress& progress,
                   const std::array<PreviousProjection, 3>& previous) {
  AL_KERNEL_DISPATCH(trace, project_heads, plan, targets, progress, previous);
  const Dims& dims = plan.dims;
  const Index d = dims.d_model;
  const std::vector<ProjectionJob> jobs = projection_jobs(plan, targets, previous);

  // Segments: (job, block of slots), all of the job's input rows; `block` is the weight's
  // columns of the slots. Work items: rows of a segment (row_blocks).
  struct Segment {
    size_t job;
    Index slot, slots;
    size_t block;
  };
  std::vector<WeightBlock> blocks;
  std::vector<Index> rows_per_job;
  for (const ProjectionJob& job : jobs) rows_per_job.push_back(dims.batch * job.length);
  const Index block_rows = projection_rows(rows_per_job);
  Index full_blocks = 0;
  for (Index rows : rows_per_job) full_blocks += (rows + block_rows - 1) / block_rows;
  std::vector<Segment> segments;
  std::vector<Index> rows_per_segment;
  double flops = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Index rows = rows_per_job[j], slots = jobs[j].width / dims.d_k;
    const Index split = column_blocks(full_blocks, jobs[j].width), per_block = (slots + split - 1) / split;
    for (Index slot = 0; slot < slots; slot += per_block) {
      const Index count = std::min(per_block, slots - slot);
      blocks.push_back({jobs[j].weight, jobs[j].column + slot * dims.d_k, count * dims.d_k, nullptr});
      segments.push_back({j, slot, count, blocks.size() - 1});
      rows_per_segment.push_back(rows);
    }
    flops += static_cast<double>(rows) * d * (jobs[j].weight ? jobs[j].width : 1);
  }
  const std::vector<RowBlock> tasks =
      row_blocks(rows_per_segment, block_rows, flops > kParallelFlops ? parallel_threads() : 1);
  const Index most_rows = rows_per_job.empty() ? 0 : *std::max_element(rows_per_job.begin(), rows_per_job.end());
  pack_weight_blocks(blocks, most_rows, flops > kParallelFlops);

  for_each_task(static_cast<Index>(tasks.size()), flops > kParallelFlops, progress, 0.0f, 0.2f, [&](Index t) {
    const RowBlock& item = tasks[static_cast<size_t>(t)];
    const Segment& segment = segments[item.segment];
    const ProjectionJob& job = jobs[segment.job];
    const Index first = item.first, count = item.count;
    const Index column = segment.slot * dims.d_k, width = segment.slots * dims.d_k;  // within the job's width
    if (!job.weight) {  // direct mode: the given Q/K/V (width columns), only split into heads
      scatter_to_heads(dims, job, job.input->data.data() + first * job.width + column, job.width, first, count,
                       segment.slot, segment.slots);
      return;
    }
    const PanelMatrix& packed = *blocks[segment.block].packed;
    auto project = [&](Index from, Index rows) {  // input rows [from, from + rows)
      const float* x = job.input->data.data() + from * d;  // (rows, d_model)
      if (dims.d_k % kPanelWidth == 0)
        return project_into_heads(dims, job, x, packed, from, rows, segment.slot, segment.slots);
      // One buffer per thread, kept across calls: no allocation per work item.
      thread_local Matrix projected;  // (rows, width)
      projected.resize(rows, width);
      multiply_panels(x, d, rows, packed, projected.data(), width);
      if (job.bias)
        projected.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(job.bias->data.data() + job.column + column, width);
      scatter_to_heads(dims, job, projected.data(), width, from, rows, segment.slot, segment.slots);
    };
    if (!job.previous_input) return project(first, count);
    // After an edit of x, runs of rows equal to the previous input's are copied and only the
    // others multiplied, not the whole work item: a row's projection is the same chain of
    // multiply-adds whatever tile computes it, so the bits are a fresh computation's.
    for (Index from = first, end = first + count; from < end;) {
      const bool unchanged = row_unchanged(job, d, from);
      Index to = from + 1;
      while (to < end && row_unchanged(job, d, to) == unchanged) ++to;
      if (unchanged)
        copy_previous_rows(dims, job, from, to - from, segment.slot, segment.slots);
      else
        project(from, to - from);
      from = to;
    }
  });
}

void project_for_scores(const Plan& plan, Tensor& q, Tensor& k, Tensor& v) {
  Plan positioned = plan;
  if (plan.sinusoidal()) {
    const Dims& d = plan.dims;
    auto x_pos = std::make_shared<Tensor>(std::vector<Index>{d.batch, d.len_q, d.d_model});
    add_sinusoidal_positions(*plan.qkv[kQ].input, *x_pos);
    positioned.qkv[kQ].input = x_pos;
    if (plan.qkv[kK].input == plan.qkv[kQ].input) {
      positioned.qkv[kK].input = positioned.qkv[kV].input = x_pos;
    } else {
      auto x_kv_pos = std::make_shared<Tensor>(std::vector<Index>{d.batch, d.len_kv, d.d_model});
      add_sinusoidal_positions(*plan.qkv[kK].input, *x_kv_pos);
      positioned.qkv[kK].input = positioned.qkv[kV].input = x_kv_pos;
    }
  }
  project_heads(positioned, {&q, &k, &v}, Progress{});
  if (plan.rope()) {  // in place: each pair is read before it is written
    rotate_by_position(q, plan.positional, q);
    rotate_by_position(k, plan.positional, k);
  }
}

Tensor combined_mask(const Plan& plan) {
  const Dims& d = plan.dims;
  Tensor mask({d.batch, d.len_q, d.len_kv}, 1.0f);
  for (Index b = 0; b < d.batch; ++b)
    for (Index i = 0; i < d.len_q; ++i) {
      float* row = mask.data.data() + (b * d.len_q + i) * d.len_kv;  // (Lk)
      for (Index j = 0; j < d.len_kv; ++j) row[j] = attends(plan, b, i, j) ? 1.0f : 0.0f;
    }
  return mask;
}

std::vector<unsigned char> fully_masked_rows(const Tensor& mask) {
  const Index rows = mask.size() / mask.cols(), keys = mask.cols();
  std::vector<unsigned char> flags(static_cast<size_t>(rows));
  for (Index r = 0; r < rows; ++r) {
    const float* row = mask.data.data() + r * keys;
    flags[static_cast<size_t>(r)] = std::all_of(row, row + keys, [](float m) { return m == 0.0f; });
  }
  return flags;
}

void run_heads(const Plan& plan, const HeadPass& pass, const Progress& progress, float from, float to) {
  AL_KERNEL_DISPATCH(trace, run_heads, plan, pass, progress, from, to);
  const Dims& dims = plan.dims;
  const Index lq = dims.len_q, lk = dims.len_kv, d_k = dims.d_k;
  const Index blocks_per_head = (lq + kHeadRows - 1) / kHeadRows;
  const Index tasks = dims.batch * dims.heads * blocks_per_head;
  const float scale = static_cast<float>(plan.scale);
  const float fill = static_cast<float>(plan.mask_fill);
  const float keep_scale = static_cast<float>(1.0 / (1.0 - plan.dropout_p));  // inverted dropout
  const double flops = static_cast<double>(dims.batch) * dims.heads * lq * lk * (2 * d_k + 8);

  // V of each K/V head as column panels for ·V (numerics/panel_gemm.hpp), the weights read in
  // place: Eigen's GEMM packs V, and copies the whole weights block, again for every block of
  // rows (at L = 4096 a block of weights is 2 MiB, past the L2 cache). Where d_k is whole panels
  // V is read in place too: a head-wide tile then reads its panels' rows side by side, one 256-byte
  // row of V a step at d_k 64, and packing cost a copy and a fresh buffer each trace (8 MiB at
  // 4096: about 9 ms of first touch in a fresh process on a PVM guest). The same bits.
  std::vector<PanelMatrix> v_panels(pass.context ? static_cast<size_t>(dims.batch * dims.kv_heads) : 0);
  const bool v_in_place = d_k % kPanelWidth == 0;
  parallel_for(static_cast<Index>(v_panels.size()), !v_in_place && flops > kParallelFlops, [&](Index i, bool) {
    const float* v = pass.v->data.data() + i * lk * d_k;
    if (v_in_place)
      v_panels[static_cast<size_t>(i)] = panels_in_place(v, d_k, lk, d_k);
    else
      pack_panels(v, d_k, lk, d_k, v_panels[static_cast<size_t>(i)]);
  });

  // Above kSweepAboveKeys keys, K of each K/V head is packed once too, and Q·Kᵀ swept one tile
  // of rows at a time (multiply_panels_scaled), with the scaling and the row max where nothing
  // stands between them and the softmax, and the scores, not read again here, streamed past
  // the caches. Eigen would zero each block of scores (over half a MiB, 1 MiB at 2048 keys: a
  // core's L2) and pack K again for it, and a second pass scaled it. Chosen by length alone,
  // so an edit's recompute gives the bits of a fresh computation.
  const bool sweep = lk > kSweepAboveKeys && (pass.scores.out || pass.scores.dropped);
  std::vector<PanelMatrix> k_panels(sweep ? static_cast<size_t>(dims.batch * dims.kv_heads) : 0);
  parallel_for(static_cast<Index>(k_panels.size()), flops > kParallelFlops, [&](Index i, bool) {
    pack_panels_transposed(pass.k->data.data() + i * lk * d_k, d_k, d_k, lk, k_panels[static_cast<size_t>(i)]);
  });

  std::mutex merge;
  for_each_task(tasks, flops > kParallelFlops, progress, from, to, [&](Index task) {
    TraceChecks checks;  // of this block's rows
    const Index bh = task / blocks_per_head;  // b * h + head
    const Index b = bh / dims.heads, head = bh % dims.heads;
    const Index b_kv = b * dims.kv_heads + dims.kv_head(head);  // the K/V head this query head reads
    const Index first = (task % blocks_per_head) * kHeadRows;
    const Index rows = std::min(kHeadRows, lq - first);
    const Index square = bh * lq * lk;  // offset of this head's (Lq, Lk) matrix

    // This block's rows of each stage: in the stage, or in this thread's scratch rows for a
    // stage the trace does not keep (ComputeOptions::keep), each (rows, Lk).
    thread_local std::array<std::vector<float>, 6> scratch;
    const std::array<const StageBuffers*, 6> stages = {&pass.scores,  &pass.scaled,  &pass.biased,
                                                       &pass.masked, &pass.weights, &pass.dropped};
    std::array<StageBuffers, 6> block;  // scores, scaled, biased, masked, weights, dropped
    for (size_t k = 0; k < 6; ++k) {
      const StageBuffers& stage = *stages[k];
      if (!stage.dropped) {
        block[k] = {stage.in ? stage.in + square + first * lk : nullptr, stage.out ? stage.out + square + first * lk : nullptr};
        if (stage.fresh_pages && rows * lk >= kFaultInFloats) fault_in_for_writing(block[k].out, rows * lk);
      } else if (stage.same_as >= 0) {
        block[k] = {block[static_cast<size_t>(stage.same_as)].in, nullptr};
      } else {
        scratch[k].resize(static_cast<size_t>(rows * lk));
        block[k] = {scratch[k].data(), scratch[k].data()};
      }
    }
    // Named references rather than a structured binding, which C++17 lambdas cannot capture.
    StageBuffers &scores_block = block[0], &scaled_block = block[1], &biased_block = block[2];
    StageBuffers &masked_block = block[3], &weights_block = block[4], &dropped_block = block[5];

    // Row i of the block after its scores: scaled, biased, masked, weights, dropped. `max` is the
    // largest value of the row the softmax reads when already known.
    auto finish_row = [&](Index i, std::optional<float> max) {
      const Index row = square + i * lk;   // in the (B, h, Lq, Lk) stage: dropout's cell index
      const Index at = (i - first) * lk;   // in the block
      const float* attend = pass.mask ? pass.mask + (b * lq + i) * lk : nullptr;
      if (!max) {  // else the sweep of the scores wrote scaled and found its largest value
        const bool mask_with_scale = masked_block.out && attend && !plan.alibi();
        const bool softmax_reads_scaled = masked_block.in == scaled_block.in;  // no mask, no ALiBi
        if (scaled_block.out && (mask_with_scale || softmax_reads_scaled)) {  // one pass for both stages
          max = scale_and_mask_row(scores_block.in + at, scale, scaled_block.out + at, attend, fill,
                                   mask_with_scale ? masked_block.out + at : nullptr, lk);
        } else {
          if (scaled_block.out) {
            const float* s = scores_block.in + at;
            float* scaled = scaled_block.out + at;
            for (Index j = 0; j < lk; ++j) scaled[j] = s[j] * scale;
          }
          if (biased_block.out) {  // ALiBi: − m_h·|i − j|, in float as the stages are
            const float* s = scaled_block.in + at;
            float* biased = biased_block.out + at;
            const double slope = plan.alibi_slopes[static_cast<size_t>(head)];
            for (Index j = 0; j < lk; ++j) biased[j] = s[j] - static_cast<float>(slope * static_cast<double>(std::abs(i - j)));
          }
          if (masked_block.out) {
            const float* s = biased_block.in + at;
            float* masked = masked_block.out + at;
            for (Index j = 0; j < lk; ++j) masked[j] = attend[j] != 0.0f ? s[j] : fill;
          }
        }
      }
      if (weights_block.out) {
        const float* masked = masked_block.in + at;
        const double total = softmax_row(masked, max ? *max : row_max(masked, lk), weights_block.out + at, lk,
                                         pass.row_max + bh * lq + i, pass.row_sum + bh * lq + i);
        if (!pass.fully_masked || !pass.fully_masked[b * lq + i]) check_row(total, weights_block.out + at, attend, lk, checks);
      }
      if (dropped_block.out) {
        const float* w = weights_block.in + at;
        float* dropped = dropped_block.out + at;
        // w * 0 rather than 0: a NaN weight (fully masked row, -inf fill) stays NaN, as in PyTorch.
        for (Index j = 0; j < lk; ++j)
          dropped[j] = w[j] * (dropout_keeps(plan.dropout_seed, plan.dropout_p, row + j) ? keep_scale : 0.0f);
      }
    };
    const float* q_rows = pass.q->data.data() + (bh * lq + first) * d_k;
    if (!k_panels.empty() && scores_block.out) {
      // Q·Kᵀ a few rows at a time; with nothing between the scaling and the softmax, scaled
      // in the same sweep and softmaxed while in cache.
      const bool scale_in_sweep = scaled_block.out && masked_block.in == scaled_block.in;
      float max[kSweepRows];
      for (Index i = first; i < first + rows; i += kSweepRows) {
        const Index count = std::min(kSweepRows, first + rows - i), at = (i - first) * lk;
        multiply_panels_scaled(q_rows + (i - first) * d_k, d_k, count, k_panels[static_cast<size_t>(b_kv)], scale,
                               scores_block.out + at, scale_in_sweep ? scaled_block.out + at : nullptr, lk, max);
        for (Index r = 0; r < count; ++r) finish_row(i + r, scale_in_sweep ? std::optional<float>(max[r]) : std::nullopt);
      }
    } else {
      if (scores_block.out) {  // (rows, Lk) = Q (rows, d_k) · Kᵀ (d_k, Lk)
        MatrixMap scores(scores_block.out, rows, lk);
        scores.noalias() = pass.q->matrix(bh).middleRows(first, rows) * pass.k->matrix(b_kv).transpose();
      }
      for (Index i = first; i < first + rows; ++i) finish_row(i, std::nullopt);
    }
    if (pass.context) {  // (rows, d_k) = dropped (rows, Lk) · V (Lk, d_k)
      float* context = pass.context + (bh * lq + first) * d_k;
      multiply_panels(dropped_block.in, lk, rows, v_panels[static_cast<size_t>(b_kv)], context, d_k);
      if (pass.concat)  // this head's d_k columns of rows [first, first + rows) of (B, Lq, d_model)
        for (Index r = 0; r < rows; ++r)
          std::memcpy(pass.concat + (b * lq + first + r) * dims.d_model + head * d_k, context + r * d_k,
                      sizeof(float) * static_cast<size_t>(d_k));
    }
    if (pass.checks && weights_block.out) {
      std::lock_guard<std::mutex> lock(merge);
      merge_checks(checks, *pass.checks);
    }
  });
}

void concat_heads(const Dims& dims, const Tensor& context, Tensor& concat) {
  const Index d_k = dims.d_k;
  for (Index b = 0; b < dims.batch; ++b)
    for (Index l = 0; l < dims.len_q; ++l)
      for (Index head = 0; head < dims.heads; ++head)
        std::memcpy(concat.data.data() + (b * dims.len_q + l) * dims.d_model + head * d_k,
                    context.data.data() + ((b * dims.heads + head) * dims.len_q + l) * d_k,
                    sizeof(float) * static_cast<size_t>(d_k));
}

void multiply_rows(const Tensor& a, const TensorPtr& b, const Tensor* bias, Tensor& c, const Progress& progress,
                   float from, float to) {
  AL_KERNEL_DISPATCH(trace, multiply_rows, a, b, bias, c, progress, from, to);
  const Index k = b->rows(), n = b->cols(), rows = a.size() / k;
  const Index block_rows = projection_rows({rows});
  const Index split = column_blocks((rows + block_rows - 1) / block_rows, n);
  const Index columns = (n + split - 1) / split;  // per column block
  const double flops = static_cast<double>(rows) * k * n;
  std::vector<WeightBlock> blocks;
  for (Index s = 0; s < split; ++s) blocks.push_back({b, s * columns, std::min(columns, n - s * columns), nullptr});
  pack_weight_blocks(blocks, rows, flops > kParallelFlops);
  const std::vector<RowBlock> tasks = row_blocks(std::vector<Index>(static_cast<size_t>(split), rows), block_rows,
                                                flops > kParallelFlops ? parallel_threads() : 1);
  for_each_task(static_cast<Index>(tasks.size()), flops > kParallelFlops, progress, from, to, [&](Index t) {
    const RowBlock& item = tasks[static_cast<size_t>(t)];  // item.segment: the column block
    const Index first = item.first, count = item.count;
    const Index column = static_cast<Index>(item.segment) * columns, width = std::min(columns, n - column);
    float* out = c.data.data() + first * n + column;
    multiply_panels(a.data.data() + first * k, k, count, *blocks[item.segment].packed, out, n);
    if (bias)
      Eigen::Map<Matrix, 0, Eigen::OuterStride<>>(out, count, width, Eigen::OuterStride<>(n)).rowwise() +=
          Eigen::Map<const Eigen::RowVectorXf>(bias->data.data() + column, width);
  });
}

void project_output(const Plan& plan, const Tensor& concat, Tensor& output, const Progress& progress) {
  multiply_rows(concat, plan.w_o, plan.b_o.get(), output, progress, 0.95f, 1.0f);
}

}  // namespace al::detail
