#include "numerics/flash_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <string>

#include "base/thread_team.hpp"
#include "numerics/attention.hpp"
#include "numerics/attention_kernels.hpp"
#include "numerics/row_kernels.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/kernel_dispatch.hpp"

namespace al {

namespace {

using detail::Plan;
using std::to_string;

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

std::optional<Error> check_tiles(const FlashTiles& tiles) {
  if (tiles.queries < 1 || tiles.keys < 1)
    return make_error(ErrorCode::InvalidConfig, "FlashAttention tiles need at least one row each, but they are " +
                                                    to_string(tiles.queries) + " queries x " +
                                                    to_string(tiles.keys) + " keys");
  return std::nullopt;
}

// One (batch item, head): its Q (Lq, d_k), K and V (Lk, d_k) inside the head-layout tensors.
struct Head {
  Index b = 0, bh = 0;
  ConstMatrixMap q, k, v;
};
Head head_of(const Dims& d, const Tensor& q, const Tensor& k, const Tensor& v, Index b, Index head) {
  const Index bh = b * d.heads + head, b_kv = b * d.kv_heads + d.kv_head(head);
  return {b, bh, q.matrix(bh), k.matrix(b_kv), v.matrix(b_kv)};
}

// What one query tile holds while it walks the key tiles.
struct TileScratch {
  Matrix scores;                      // (Tq, Tk) scores, then exp(score − m) in place
  Matrix acc;                         // (Tq, d_k) partial output Σ exp(score − m)·v
  std::vector<float> m, l, rescale;   // (Tq)
};

// scores = (Q[i0..] · K[j0..]ᵀ) · scale with masked cells set to the fill, as the
// full trace computes its Scaled and Masked stages.
void score_tile(const Plan& plan, const Head& h, Index i0, Index rows, Index j0, Index cols, Matrix& scores) {
  scores.resize(rows, cols);
  scores.noalias() = h.q.middleRows(i0, rows) * h.k.middleRows(j0, cols).transpose();
  scores *= static_cast<float>(plan.scale);
  if (plan.alibi()) {  // the trace's Biased stage: − m_h·|i − j|
    const double slope = plan.alibi_slopes[static_cast<size_t>(h.bh % plan.dims.heads)];
    for (Index r = 0; r < rows; ++r)
      for (Index c = 0; c < cols; ++c)
        scores(r, c) -= static_cast<float>(slope * static_cast<double>(std::abs(i0 + r - (j0 + c))));
  }
  if (!plan.has_mask()) return;
  const float fill = static_cast<float>(plan.mask_fill);
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c)
      if (!detail::attends(plan, h.b, i0 + r, j0 + c)) scores(r, c) = fill;
}

// Folds one scores tile into the running max m, the running sum ℓ and the
// partial output: m_new = max(m, tile max), both ℓ and the partial output are
// rescaled by exp(m − m_new), then the tile's exp(score − m_new) is added.
// Dropout (training) zeroes or scales a term of the output but not of ℓ,
// exactly as the full trace drops weights after the softmax.
void online_softmax_step(const Plan& plan, const Head& h, Index i0, Index j0, TileScratch& s) {
  const Dims& d = plan.dims;
  const Index rows = s.scores.rows(), cols = s.scores.cols();
  const float keep_scale = static_cast<float>(1.0 / (1.0 - plan.dropout_p));  // inverted dropout
  for (Index r = 0; r < rows; ++r) {
    auto row = s.scores.row(r);
    const float m_new = std::max(s.m[r], row.maxCoeff());
    float factor = 1.0f, tile_sum = 0.0f;
    if (m_new == kMinusInf) {
      row.setZero();  // every score so far is -inf: nothing to add yet (exp(-inf − -inf) would be NaN)
    } else {
      factor = std::exp(s.m[r] - m_new);  // 0 when m was -inf: the zero partial output stays zero
      tile_sum = detail::exp_shifted(row.data(), row.data(), cols, m_new);  // the trace's own exp
    }
    s.l[r] = s.l[r] * factor + tile_sum;
    if (plan.dropout_active) {
      const Index flat = (h.bh * d.len_q + i0 + r) * d.len_kv + j0;  // index into (B, h, Lq, Lk)
      for (Index c = 0; c < cols; ++c)
        row(c) = dropout_keeps(plan.dropout_seed, plan.dropout_p, flat + c) ? row(c) * keep_scale : 0.0f;
    }
    s.acc.row(r) *= factor;
    s.m[r] = m_new;
    s.rescale[r] = factor;
  }
  s.acc.topRows(rows).noalias() += s.scores * h.v.middleRows(j0, cols);
}

// The context rows [i0, i0 + rows) of one head, key tile by key tile; the
// result (acc / ℓ) stays in s.acc. With `record`, every step is appended to it.
void attend_query_tile(const Plan& plan, const Head& h, Index i0, Index rows, const FlashTiles& tiles,
                       TileScratch& s, std::vector<FlashStep>* record) {
  const Dims& d = plan.dims;
  s.acc.setZero(rows, d.d_k);
  s.m.assign(static_cast<size_t>(rows), kMinusInf);
  s.l.assign(static_cast<size_t>(rows), 0.0f);
  s.rescale.assign(static_cast<size_t>(rows), 1.0f);
  // With a -inf fill, key tiles right of the diagonal add exactly 0 under a causal mask.
  const bool skip_future = plan.causal && std::isinf(plan.mask_fill) && plan.mask_fill < 0;
  for (Index j0 = 0, tile = 0; j0 < d.len_kv; j0 += tiles.keys, ++tile) {
    if (skip_future && j0 > i0 + rows - 1) break;
    const Index cols = std::min(tiles.keys, d.len_kv - j0);
    score_tile(plan, h, i0, rows, j0, cols, s.scores);
    FlashStep* step = nullptr;
    if (record) {
      step = &record->emplace_back();
      step->query_tile = i0 / tiles.queries;
      step->key_tile = tile;
      step->query_begin = i0;
      step->query_end = i0 + rows;
      step->key_begin = j0;
      step->key_end = j0 + cols;
      step->scores.assign(s.scores.data(), s.scores.data() + rows * cols);
      step->m_before = s.m;
      step->l_before = s.l;
    }
    online_softmax_step(plan, h, i0, j0, s);
    if (step) {
      step->m_after = s.m;
      step->l_after = s.l;
      step->rescale = s.rescale;
      step->partial_output.assign(s.acc.data(), s.acc.data() + rows * d.d_k);
    }
  }
  // A row where no key contributed has ℓ = 0 and gives 0/0 = NaN, as the full trace does.
  for (Index r = 0; r < rows; ++r) s.acc.row(r) /= s.l[r];
}

// Q, K, V of every head by the full trace's own projection code (positions included).
struct Projected {
  Tensor q, k, v;  // (B, h, Lq, d_k), (B, h_kv, Lk, d_k) x 2
};
Projected project(const Plan& plan) {
  const Dims& d = plan.dims;
  Projected p{Tensor({d.batch, d.heads, d.len_q, d.d_k}), Tensor({d.batch, d.kv_heads, d.len_kv, d.d_k}),
              Tensor({d.batch, d.kv_heads, d.len_kv, d.d_k})};
  detail::project_for_scores(plan, p.q, p.k, p.v);
  return p;
}

Error out_of_memory(const std::string& what) {
  return make_error(ErrorCode::TooLarge, "the machine could not provide the memory " + what +
                                             " needs; make the sequences shorter or the batch smaller");
}

}  // namespace

Index flash_extra_bytes(const Dims& d, const FlashTiles& tiles, Index threads) {
  const Index kv_heads = d.kv_heads > 0 ? d.kv_heads : d.heads;  // 0: not grouped
  const Index projected = d.batch * (d.len_q * d.d_model + 2 * d.len_kv * kv_heads * d.d_k);
  const Index concat = d.batch * d.len_q * d.d_model;
  const Index per_thread = tiles.queries * tiles.keys + tiles.queries * d.d_k + 3 * tiles.queries;
  return static_cast<Index>(sizeof(float)) * (projected + concat + threads * per_thread);
}

Result<FlashResult> flash_attention(const Session& session, const FlashTiles& tiles) {
  AL_KERNEL_DISPATCH(flash, flash_attention, session, tiles);
  const auto start = std::chrono::steady_clock::now();
  if (auto e = check_tiles(tiles)) return *e;
  auto plan_result = detail::make_plan(session);
  if (!plan_result) return plan_result.error();
  const Plan& plan = *plan_result;
  const Dims& d = plan.dims;

  FlashResult result;
  result.dims = d;
  try {
    const Projected p = project(plan);
    Tensor concat({d.batch, d.len_q, d.d_model});  // heads side by side, written tile by tile
    const Index query_tiles = (d.len_q + tiles.queries - 1) / tiles.queries;
    const Index tasks = d.batch * d.heads * query_tiles;
    const double flops = 2.0 * d.batch * d.heads * d.len_q * d.len_kv * d.d_k;
    Index threads = 1;
#pragma omp parallel if (flops > kParallelFlops && tasks > 1)
    {
#pragma omp single
      threads = omp_get_num_threads();
      TileScratch scratch;
#pragma omp for schedule(dynamic, 1)
      for (Index task = 0; task < tasks; ++task) {
        const Index bh = task / query_tiles;
        const Index i0 = (task % query_tiles) * tiles.queries, rows = std::min(tiles.queries, d.len_q - i0);
        const Head h = head_of(d, p.q, p.k, p.v, bh / d.heads, bh % d.heads);
        attend_query_tile(plan, h, i0, rows, tiles, scratch, nullptr);
        // (rows, d_k) -> columns [head·d_k, (head+1)·d_k) of concat rows (b, i0..)
        MatrixMap(concat.data.data() + h.b * d.len_q * d.d_model, d.len_q, d.d_model)
            .block(i0, (bh % d.heads) * d.d_k, rows, d.d_k) = scratch.acc.topRows(rows);
      }
    }
    if (plan.output_is_concat()) {
      result.output = std::move(concat);
    } else {
      result.output = Tensor({d.batch, d.len_q, d.d_model});
      detail::project_output(plan, concat, result.output, detail::Progress{});
    }
    result.threads = threads;
    result.extra_bytes = flash_extra_bytes(d, tiles, threads);
  } catch (const std::bad_alloc&) {
    return out_of_memory("the FlashAttention output");
  }
  result.compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Index flash_step_held_bytes(Index len_q, Index d_k, const FlashTiles& tiles) {
  return static_cast<Index>(sizeof(float)) * (len_q * d_k + 2 * len_q + tiles.queries * tiles.keys);
}

Result<FlashSteps> flash_attention_steps(const Session& session, Index batch, Index head, const FlashTiles& tiles) {
  AL_KERNEL_DISPATCH(flash, flash_attention_steps, session, batch, head, tiles);
  if (auto e = check_tiles(tiles)) return *e;
  auto plan_result = detail::make_plan(session);
  if (!plan_result) return plan_result.error();
  const Plan& plan = *plan_result;
  const Dims& d = plan.dims;
  if (batch < 0 || batch >= d.batch || head < 0 || head >= d.heads)
    return make_error(ErrorCode::InvalidConfig, "there is no batch item " + to_string(batch) + ", head " +
                                                    to_string(head) + ": the session has B = " +
                                                    to_string(d.batch) + " and " + to_string(d.heads) + " heads");
  if (d.len_q * d.len_kv > kFlashStepMaxCells)
    return make_error(ErrorCode::TooLarge,
                      "stepping through FlashAttention records every tile, so it is limited to " +
                          to_string(kFlashStepMaxCells) + " query-key pairs, but this session has " +
                          to_string(d.len_q) + " x " + to_string(d.len_kv));

  FlashSteps out;
  out.batch = batch;
  out.head = head;
  out.len_q = d.len_q;
  out.len_kv = d.len_kv;
  out.d_k = d.d_k;
  out.tiles = tiles;
  out.context = Tensor({d.len_q, d.d_k});
  out.row_max = Tensor({d.len_q});
  out.row_sum = Tensor({d.len_q});
  const Projected p = project(plan);
  const Head h = head_of(d, p.q, p.k, p.v, batch, head);
  TileScratch scratch;
  for (Index i0 = 0; i0 < d.len_q; i0 += tiles.queries) {
    const Index rows = std::min(tiles.queries, d.len_q - i0);
    attend_query_tile(plan, h, i0, rows, tiles, scratch, &out.steps);
    out.context.matrix().middleRows(i0, rows) = scratch.acc.topRows(rows);
    std::copy(scratch.m.begin(), scratch.m.end(), out.row_max.data.begin() + i0);
    std::copy(scratch.l.begin(), scratch.l.end(), out.row_sum.data.begin() + i0);
  }
  out.held_bytes = flash_step_held_bytes(d.len_q, d.d_k, tiles);
  const Index square_stages =
      2 + !plan.scaled_is_scores() + plan.alibi() + !plan.masked_is_scaled() +
      !plan.dropped_is_weights();  // as trace_bytes counts
  out.plain_bytes = static_cast<Index>(sizeof(float)) * square_stages * d.len_q * d.len_kv;
  return out;
}

}  // namespace al
