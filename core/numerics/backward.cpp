#include "numerics/backward.hpp"

#include <cmath>
#include <cstring>

#include "base/thread_team.hpp"
#include "numerics/attention.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/kernel_dispatch.hpp"
#include "numerics/panel_gemm.hpp"
#include "numerics/positions.hpp"

namespace al {

namespace {

using detail::kPanelWidth;
using detail::multiply_panel_columns;
using detail::pack_panels;
using detail::packed_weight;
using detail::PanelMatrix;
using detail::Plan;
using StridedMap = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using StridedConstMap = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

// Rows (or columns) per work item of the projection GEMMs.
constexpr Index kBlock = 64;

// body(task) for each task, on the thread team (base/thread_team) above kParallelFlops.
template <class Body>
void for_each_block(Index count, double flops, Body&& body) {
  parallel_for(count, flops > kParallelFlops, [&](Index task, bool) { body(task); });
}

// A matrix in "model layout" (rows = batch · length, each row d_model or more
// columns wide) where one of Q, K, V (or the context) keeps its heads side by side.
struct ModelLayout {
  float* data = nullptr;
  Index stride = 0;  // floats per row
  Index column = 0;  // first column of this tensor's d_model columns
  Index length = 0;  // L: rows per batch item
  // Head `head` of batch item b: (L, d_k) with the row stride of the whole matrix.
  StridedMap head(Index b, Index head, Index d_k) const {
    return StridedMap(data + b * length * stride + column + head * d_k, length, d_k, Eigen::OuterStride<>(stride));
  }
};

// (B, L, width) model layout -> (B, heads, L, d_k) for columns [column, column + heads·d_k).
Tensor to_head_layout(const Dims& dims, const ModelLayout& from, Index heads) {
  Tensor out({dims.batch, heads, from.length, dims.d_k});
  for (Index b = 0; b < dims.batch; ++b)
    for (Index head = 0; head < heads; ++head) out.matrix(b * heads + head) = from.head(b, head, dims.d_k);
  return out;
}

// The reverse: (B, heads, L, d_k) back into the model layout's columns.
void from_head_layout(const Dims& dims, const Tensor& from, Index heads, const ModelLayout& to) {
  for (Index b = 0; b < dims.batch; ++b)
    for (Index head = 0; head < heads; ++head) to.head(b, head, dims.d_k) = from.matrix(b * heads + head);
}

// A query whose every key is masked with −∞ fill has NaN weights: the backward
// reads them as 0 (see backward.hpp). (B, Lq) flags, empty when there is none.
std::vector<unsigned char> absent_queries(const Trace& trace) {
  const bool nan_rows = std::isinf(trace.mask_fill) && trace.mask_fill < 0 && trace.any_fully_masked();
  return nan_rows ? trace.fully_masked_rows : std::vector<unsigned char>{};
}

// The gradient buffers of the five (Lq, Lk) stages of one head, from dropped
// back to scores. Equal stages (or, without keep_stages, all of them) share a
// buffer and each step then works in place.
struct SquareGradients {
  float* dropped;
  float* weights;
  float* masked;
  float* scaled;
  float* scores;
};

// Everything the per-head steps read, for one (b, head).
struct HeadStep {
  const Plan& plan;
  const Trace& trace;
  Index b, head, bh;
  Index b_kv;  // b·h_kv + the K/V head this query head reads
  const std::vector<unsigned char>& absent;  // (B, Lq) or empty
};

// dDropped = dContext·Vᵀ (Lq, Lk) and dV += droppedᵀ·dContext (Lk, d_k): the query
// heads of a group all add to their shared V head.
void context_backward(const HeadStep& s, const StridedMap& d_context, float* d_dropped, StridedMap& d_v) {
  const Dims& d = s.trace.dims;
  const ConstMatrixMap v = s.trace.stage(Stage::V).matrix(s.b_kv);            // (Lk, d_k)
  const ConstMatrixMap dropped = s.trace.stage(Stage::Dropped).matrix(s.bh);  // (Lq, Lk)
  MatrixMap(d_dropped, d.len_q, d.len_kv).noalias() = d_context * v.transpose();
  if (s.absent.empty()) {
    d_v.noalias() += dropped.transpose() * d_context;
    return;
  }
  thread_local Matrix present;  // (Lq, Lk): dropped with the absent queries' NaN rows as 0
  present = dropped;
  for (Index i = 0; i < d.len_q; ++i)
    if (s.absent[static_cast<size_t>(s.b * d.len_q + i)]) present.row(i).setZero();
  d_v.noalias() += present.transpose() * d_context;
}

// dWeights = dDropped ⊙ keep / (1 − p), with the forward's keep decisions.
void dropout_backward(const HeadStep& s, const float* d_dropped, float* d_weights) {
  const Dims& d = s.trace.dims;
  const Index cells = d.len_q * d.len_kv, first = s.bh * cells;
  const float keep_scale = static_cast<float>(1.0 / (1.0 - s.plan.dropout_p));
  for (Index c = 0; c < cells; ++c)
    d_weights[c] =
        dropout_keeps(s.plan.dropout_seed, s.plan.dropout_p, first + c) ? d_dropped[c] * keep_scale : 0.0f;
}

// dMasked_ij = w_ij (dWeights_ij − Σ_k w_ik dWeights_ik): the softmax's Jacobian
// applied row by row. Masked cells (w = 0) get exactly 0; absent queries 0.
void softmax_backward(const HeadStep& s, const float* d_weights, float* d_masked) {
  const Dims& d = s.trace.dims;
  const float* w = s.trace.stage(Stage::Weights).data.data() + s.bh * d.len_q * d.len_kv;
  for (Index i = 0; i < d.len_q; ++i) {
    const Index row = i * d.len_kv;
    if (!s.absent.empty() && s.absent[static_cast<size_t>(s.b * d.len_q + i)]) {
      std::fill(d_masked + row, d_masked + row + d.len_kv, 0.0f);
      continue;
    }
    // Σ_k w_ik g_ik in double, in eight running sums: one vector of them, where a single
    // sum's additions could only run one after another.
    constexpr Index kSums = 8;
    double sums[kSums] = {};
    Index k = 0;
    for (; k + kSums <= d.len_kv; k += kSums)
      for (Index l = 0; l < kSums; ++l) sums[l] += static_cast<double>(w[row + k + l]) * d_weights[row + k + l];
    for (; k < d.len_kv; ++k) sums[0] += static_cast<double>(w[row + k]) * d_weights[row + k];
    double dot = 0;
    for (double sum : sums) dot += sum;
    const float shift = static_cast<float>(dot);
    for (Index k = 0; k < d.len_kv; ++k) d_masked[row + k] = w[row + k] * (d_weights[row + k] - shift);
  }
}

// dScaled = dMasked where the mask attends, 0 where the cell was replaced by the fill.
// (With ALiBi the cell before the mask is biased = scaled − m·|i − j|, whose gradient
// is the same: dBiased = dScaled.)
void mask_backward(const HeadStep& s, const float* d_masked, float* d_scaled) {
  const Dims& d = s.trace.dims;
  const float* attend = s.trace.mask->data.data() + s.b * d.len_q * d.len_kv;  // (Lq, Lk) of this batch item
  for (Index c = 0; c < d.len_q * d.len_kv; ++c) d_scaled[c] = attend[c] != 0.0f ? d_masked[c] : 0.0f;
}

// dScores = scale · dScaled.
void scale_backward(const HeadStep& s, const float* d_scaled, float* d_scores) {
  const Dims& d = s.trace.dims;
  const float scale = static_cast<float>(s.plan.scale);
  for (Index c = 0; c < d.len_q * d.len_kv; ++c) d_scores[c] = d_scaled[c] * scale;
}

// dQ = dScores·K (Lq, d_k), dK += dScoresᵀ·Q (Lk, d_k); with RoPE these are the
// gradients of the rotated q and k (turned back later).
void scores_backward(const HeadStep& s, const float* d_scores, StridedMap& d_q, StridedMap& d_k) {
  const Dims& d = s.trace.dims;
  const ConstMatrixMap g(d_scores, d.len_q, d.len_kv);
  d_q.noalias() = g * s.trace.stage(s.trace.scored_k()).matrix(s.b_kv);
  d_k.noalias() += g.transpose() * s.trace.stage(s.trace.scored_q()).matrix(s.bh);
}

// Every step from dContext back to dQ, dK, dV. One task per (b, K/V head): its
// group's query heads run in turn, each adding to the shared dK and dV.
// `keep` holds the (B, h, Lq, Lk) stage gradients, or nulls (scratch per head).
void heads_backward(const Plan& plan, const Trace& trace, const ModelLayout& d_context,
                    const std::array<ModelLayout, 3>& d_qkv, const SquareGradients* keep) {
  const Dims& d = trace.dims;
  const std::vector<unsigned char> absent = absent_queries(trace);
  const double flops = 8.0 * d.batch * d.heads * d.len_q * d.len_kv * d.d_k;
  for_each_block(d.batch * d.kv_heads, flops, [&](Index task) {
    const Index b = task / d.kv_heads, kv_head = task % d.kv_heads;
    StridedMap dk = d_qkv[detail::kK].head(b, kv_head, d.d_k), dv = d_qkv[detail::kV].head(b, kv_head, d.d_k);
    dk.setZero();
    dv.setZero();
    thread_local Matrix scratch;  // (Lq, Lk) when the stage gradients are not kept
    for (Index head = kv_head * d.group(); head < (kv_head + 1) * d.group(); ++head) {
      const Index bh = b * d.heads + head;
      const HeadStep s{plan, trace, b, head, bh, task, absent};
      const Index offset = bh * d.len_q * d.len_kv;
      SquareGradients g;
      if (keep) {
        g = {keep->dropped + offset, keep->weights + offset, keep->masked + offset, keep->scaled + offset,
             keep->scores + offset};
      } else {
        scratch.resize(d.len_q, d.len_kv);
        g = {scratch.data(), scratch.data(), scratch.data(), scratch.data(), scratch.data()};
      }
      StridedMap dc = d_context.head(b, head, d.d_k);
      StridedMap dq = d_qkv[detail::kQ].head(b, head, d.d_k);
      context_backward(s, dc, g.dropped, dv);
      if (plan.dropout_active) dropout_backward(s, g.dropped, g.weights);
      else if (g.weights != g.dropped) std::memcpy(g.weights, g.dropped, sizeof(float) * d.len_q * d.len_kv);
      softmax_backward(s, g.weights, g.masked);
      if (trace.mask) mask_backward(s, g.masked, g.scaled);
      else if (g.scaled != g.masked) std::memcpy(g.scaled, g.masked, sizeof(float) * d.len_q * d.len_kv);
      if (plan.scale != 1.0 || g.scores != g.scaled) scale_backward(s, g.scaled, g.scores);
      scores_backward(s, g.scores, dq, dk);
    }
  });
}

// One product A (m, b.k) · B of a sum C = Σ A · B, A row-major with rows lda apart.
struct PackedTerm {
  const float* a;
  Index lda;
  const PanelMatrix* b;
};

// C (m, n) = Σ terms, rows ldc apart.
struct PackedProduct {
  std::vector<PackedTerm> terms;
  Index m, n;
  float* c;
  Index ldc;
};

// Every product on the panel kernel (numerics/panel_gemm), in one pass over the thread team:
// each B is packed once for the whole product, where Eigen's GEMM packed it again for every
// block of rows (8 % of a forward + backward at L = 512, docs/performance.md). Tasks are
// blocks of kBlock rows, and where a product has fewer than four, also blocks of columns
// cut at panel edges.
void multiply_packed(const std::vector<PackedProduct>& products) {
  constexpr Index kTasksWanted = 4, kMinPanels = 8;
  struct Task {
    const PackedProduct* product;
    Index first, rows, column, width;
  };
  std::vector<Task> tasks;
  double flops = 0;
  for (const PackedProduct& p : products) {
    const Index row_blocks = (p.m + kBlock - 1) / kBlock, panels = (p.n + kPanelWidth - 1) / kPanelWidth;
    const Index splits =
        std::max<Index>(1, std::min((kTasksWanted + row_blocks - 1) / row_blocks, panels / kMinPanels));
    const Index columns = (panels + splits - 1) / splits * kPanelWidth;  // whole panels
    for (Index first = 0; first < p.m; first += kBlock)
      for (Index column = 0; column < p.n; column += columns)
        tasks.push_back({&p, first, std::min(kBlock, p.m - first), column, std::min(columns, p.n - column)});
    for (const PackedTerm& t : p.terms) flops += 2.0 * p.m * p.n * t.b->k;
  }
  for_each_block(static_cast<Index>(tasks.size()), flops, [&](Index i) {
    const Task& t = tasks[static_cast<size_t>(i)];
    const PackedProduct& p = *t.product;
    for (size_t j = 0; j < p.terms.size(); ++j)
      multiply_panel_columns(p.terms[j].a + t.first * p.terms[j].lda, p.terms[j].lda, t.rows, *p.terms[j].b,
                             t.column, t.width, p.c + t.first * p.ldc + t.column, p.ldc, t.width, 0, j > 0);
  });
}

// Aᵀ (cols, rows) of A (rows, cols), row stride lda, with the rows flagged in `zero_rows`
// (if not empty) read as 0: the left operand of a weight's gradient, Aᵀ · dP.
Matrix transposed(const float* a, Index rows, Index cols, Index lda, const std::vector<unsigned char>& zero_rows) {
  Matrix t = StridedConstMap(a, rows, cols, Eigen::OuterStride<>(lda)).transpose();
  for (Index r = 0; r < static_cast<Index>(zero_rows.size()); ++r)
    if (zero_rows[static_cast<size_t>(r)]) t.col(r).setZero();
  return t;
}

// Column sums of A (rows, cols), rows lda apart, into `out` (cols), in double: a bias's
// gradient. Row by row, so the additions of a row are one vector loop.
void column_sums(const float* a, Index rows, Index cols, Index lda, float* out) {
  std::vector<double> sums(static_cast<size_t>(cols), 0.0);
  for (Index r = 0; r < rows; ++r)
    for (Index j = 0; j < cols; ++j) sums[static_cast<size_t>(j)] += a[r * lda + j];
  for (Index j = 0; j < cols; ++j) out[j] = static_cast<float>(sums[static_cast<size_t>(j)]);
}

Tensor zeros_like(const TensorPtr& t) { return Tensor(t->shape); }
// For a gradient the products write whole.
Tensor overwritten_like(const TensorPtr& t) { return Tensor::for_overwrite(t->shape); }

// output = concat·W_O + b_O: dConcat = dOutput·W_Oᵀ, dW_O = concatᵀ·dOutput, db_O = Σ_rows dOutput.
void output_backward(const Plan& plan, const Trace& trace, const Tensor& d_output, Tensor& d_concat,
                     Tensor& d_w_o, Tensor* d_b_o) {
  const Index d = plan.dims.d_model, rows = d_output.size() / d;
  const float* g = d_output.data.data();  // (B·Lq, d_model)
  // W_Oᵀ packed (kept while W_O lives), dOutput packed, and concatᵀ with the absent
  // queries' NaN rows as 0, side by side on the team.
  std::shared_ptr<const PanelMatrix> w_o_t;
  PanelMatrix g_panels;
  Matrix concat_t;
  for_each_block(3, 2.0 * rows * d * d, [&](Index task) {
    if (task == 0) w_o_t = packed_weight(plan.w_o, 0, d, true);
    if (task == 1) pack_panels(g, d, rows, d, g_panels);
    if (task == 2) concat_t = transposed(trace.stage(Stage::Concat).data.data(), rows, d, d, absent_queries(trace));
  });
  multiply_packed({{{{g, d, w_o_t.get()}}, rows, d, d_concat.data.data(), d},
                   {{{concat_t.data(), rows, &g_panels}}, d, d, d_w_o.data.data(), d}});
  if (d_b_o) column_sums(g, rows, d, d, d_b_o->data.data());
}

// One projection GEMM seen backwards: `input` times column blocks of weights
// made Q, K and/or V (`targets`, consecutive in dP's columns).
struct ProjectionGroup {
  TensorPtr input;          // (B, L, d_model): x, or x + PE with sinusoidal positions
  std::string input_name;   // x, x_q or x_kv
  Stage positioned;         // x_pos or x_kv_pos: the stage whose gradient is dInput
  std::vector<int> targets; // among kQ, kK, kV
  Matrix d_projected;       // (B·L, Σ widths): dQ (d_model) | dK | dV (h_kv·d_k each) of these targets
};

// The projections' inputs as the forward read them (with sinusoidal positions added).
std::vector<ProjectionGroup> projection_groups(const Plan& plan, const Trace& trace, bool cross) {
  auto read = [&](int i, Stage positioned) {
    return trace.has(positioned) ? trace.stage_ptr(positioned) : plan.qkv[i].input;
  };
  if (!cross)
    return {ProjectionGroup{read(detail::kQ, Stage::XPos), "x", Stage::XPos, {detail::kQ, detail::kK, detail::kV}, {}}};
  return {ProjectionGroup{read(detail::kQ, Stage::XPos), "x_q", Stage::XPos, {detail::kQ}, {}},
          ProjectionGroup{read(detail::kK, Stage::XKvPos), "x_kv", Stage::XKvPos, {detail::kK, detail::kV}, {}}};
}

// Columns of Q (d_model) or of K, V (h_kv·d_k).
Index projected_width(const Dims& d, int target) { return target == detail::kQ ? d.d_model : d.kv_heads * d.d_k; }

struct WeightGradients {
  Tensor w[3], b[3];  // separate W_Q, W_K, W_V (d, d) and biases
  Tensor w_qkv, b_qkv;  // fused (d, 3d), (3d)
};

// dW = xᵀ·dP, db = Σ_rows dP, dx = dP·Wᵀ for one group, W being the group's
// weight blocks side by side (d_model, Σ widths).
void projection_backward(const Plan& plan, bool fused, const ProjectionGroup& group, Tensor& d_input,
                         WeightGradients& out) {
  const Index d = plan.dims.d_model, rows = group.d_projected.rows(), width = group.d_projected.cols();
  const float* dp = group.d_projected.data();  // (B·L, width)
  const size_t targets = group.targets.size();
  std::vector<Index> widths, offsets;  // each target's columns in dP: w_i, from offsets[t]
  for (int i : group.targets) {
    offsets.push_back(widths.empty() ? 0 : offsets.back() + widths.back());
    widths.push_back(projected_width(plan.dims, i));
  }
  // The packed W_iᵀ (w_i, d_model), kept while the weight lives; dP's blocks packed; and xᵀ:
  // side by side on the team.
  std::vector<std::shared_ptr<const PanelMatrix>> w_t(targets);
  std::vector<PanelMatrix> dp_panels(targets);
  Matrix x_t;  // (d_model, B·L)
  for_each_block(static_cast<Index>(2 * targets + 1), 4.0 * rows * d * width, [&](Index task) {
    const auto t = static_cast<size_t>(task);
    if (t < targets) {
      const int i = group.targets[t];
      w_t[t] = packed_weight(plan.qkv[i].weight, plan.qkv[i].column, widths[t], true);
    } else if (t < 2 * targets) {
      pack_panels(dp + offsets[t - targets], width, rows, widths[t - targets], dp_panels[t - targets]);
    } else {
      x_t = transposed(group.input->data.data(), rows, d, d, {});
    }
  });
  std::vector<PackedProduct> products(1, {{}, rows, d, d_input.data.data(), d});  // dX = Σ dP_i · W_iᵀ
  for (size_t t = 0; t < targets; ++t) products[0].terms.push_back({dp + offsets[t], width, w_t[t].get()});
  for (size_t t = 0; t < targets; ++t) {  // dW_i = xᵀ · dP_i
    const int i = group.targets[t];
    Tensor& d_w = fused ? out.w_qkv : out.w[i];
    const Index first = fused ? plan.qkv[i].column : 0;
    products.push_back({{{x_t.data(), rows, &dp_panels[t]}}, d, widths[t], d_w.data.data() + first, d_w.cols()});
  }
  multiply_packed(products);
  for (size_t t = 0; t < targets; ++t) {
    const int i = group.targets[t];
    if (plan.qkv[i].bias)
      column_sums(dp + offsets[t], rows, widths[t], width,
                  (fused ? out.b_qkv : out.b[i]).data.data() + (fused ? plan.qkv[i].column : 0));
  }
}

double loss_of(const Tensor& output, const Tensor& upstream) {
  double loss = 0;
  for (Index i = 0; i < output.size(); ++i) loss += static_cast<double>(output.data[i]) * upstream.data[i];
  return loss;
}

}  // namespace

const Tensor* Gradients::input(const std::string& name) const {
  for (const NamedGradient& g : inputs)
    if (g.name == name) return g.gradient.get();
  return nullptr;
}

std::optional<Error> check_upstream(const Trace& trace, const Tensor& upstream) {
  const Dims& d = trace.dims;
  const std::vector<Index> output = {d.batch, d.len_q, d.d_model};
  const bool fits = upstream.shape == output ||
                    (d.batch == 1 && upstream.shape == std::vector<Index>{d.len_q, d.d_model});
  if (fits && upstream.size() == shape_product(output)) return std::nullopt;
  return make_error(ErrorCode::ShapeMismatch,
                    "the upstream gradient G has shape " + shape_string(upstream.shape) +
                        " but the output has shape " + shape_string(output) + ": G needs the output's shape",
                    {{"shape", shape_string(upstream.shape)}, {"expected", shape_string(output)}});
}

Result<Gradients> backward(const Session& session, const Trace& trace, const Tensor& upstream,
                           const BackwardOptions& options) {
  AL_KERNEL_DISPATCH(backward, backward, session, trace, upstream, options);
  auto planned = detail::make_plan(session);
  if (!planned) return planned.error();
  const Plan& plan = *planned;
  if (!detail::same_dims(plan.dims, trace.dims))
    return make_error(ErrorCode::ShapeMismatch, "the trace was not computed from this session (its sizes differ)");
  const TeamScope team(detail::multiply_adds(plan.dims) > kParallelFlops);  // one wake-up for all passes
  if (auto e = check_upstream(trace, upstream)) return *e;
  const Dims& d = trace.dims;
  const bool cross = session.config.attention == AttentionKind::Cross;
  const bool direct = session.config.mode == InputMode::Direct;

  Gradients result;
  result.loss = loss_of(trace.stage(Stage::Output), upstream);
  const Tensor d_output({d.batch, d.len_q, d.d_model}, upstream.data);

  // Output and concat: dConcat (B, Lq, d_model).
  auto d_concat = std::make_shared<Tensor>(std::vector<Index>{d.batch, d.len_q, d.d_model});
  std::optional<Tensor> d_w_o, d_b_o;
  if (plan.w_o) {
    d_w_o = overwritten_like(plan.w_o);
    if (plan.b_o) d_b_o = zeros_like(plan.b_o);
    output_backward(plan, trace, d_output, *d_concat, *d_w_o, d_b_o ? &*d_b_o : nullptr);
  } else {
    d_concat->data = upstream.data;
  }

  // dQ, dK, dV in model layout: (B·L, targets·d_model) per projection group, or
  // the direct inputs' own (B, L, d_model) gradients.
  std::vector<ProjectionGroup> groups = direct ? std::vector<ProjectionGroup>{} : projection_groups(plan, trace, cross);
  std::array<Tensor, 3> d_direct;
  std::array<ModelLayout, 3> d_qkv;
  const std::array<Index, 3> lengths = {d.len_q, d.len_kv, d.len_kv};
  if (direct) {
    for (int i = 0; i < 3; ++i) {
      d_direct[i] = zeros_like(plan.qkv[i].input);
      d_qkv[i] = {d_direct[i].data.data(), projected_width(d, i), 0, lengths[i]};
    }
  } else {
    for (ProjectionGroup& g : groups) {
      const Index length = lengths[g.targets.front()];
      Index width = 0;
      for (int i : g.targets) width += projected_width(d, i);
      g.d_projected.resize(d.batch * length, width);
      Index column = 0;
      for (int i : g.targets) {
        d_qkv[i] = {g.d_projected.data(), width, column, length};
        column += projected_width(d, i);
      }
    }
  }

  // The (Lq, Lk) stages' gradients, stored only when kept; equal stages share.
  std::array<std::shared_ptr<Tensor>, kStageCount> kept;
  auto at = [&](Stage s) -> std::shared_ptr<Tensor>& { return kept[static_cast<int>(s)]; };
  SquareGradients square{};
  if (options.keep_stages) {
    const std::vector<Index> shape = {d.batch, d.heads, d.len_q, d.len_kv};
    at(Stage::Dropped) = std::make_shared<Tensor>(shape);
    at(Stage::Weights) = plan.dropped_is_weights() ? at(Stage::Dropped) : std::make_shared<Tensor>(shape);
    at(Stage::Masked) = std::make_shared<Tensor>(shape);
    at(Stage::Scaled) = plan.masked_is_scaled() ? at(Stage::Masked) : std::make_shared<Tensor>(shape);
    if (plan.alibi()) at(Stage::Biased) = at(Stage::Scaled);  // biased = scaled + a constant
    at(Stage::Scores) = plan.scaled_is_scores() ? at(Stage::Scaled) : std::make_shared<Tensor>(shape);
    square = {at(Stage::Dropped)->data.data(), at(Stage::Weights)->data.data(), at(Stage::Masked)->data.data(),
              at(Stage::Scaled)->data.data(), at(Stage::Scores)->data.data()};
  }
  const ModelLayout d_context{d_concat->data.data(), d.d_model, 0, d.len_q};
  heads_backward(plan, trace, d_context, d_qkv, options.keep_stages ? &square : nullptr);

  // RoPE: the gradients so far are of q_rot and k_rot; turning them back by −θ gives q's and k's.
  if (plan.rope())
    for (int i : {detail::kQ, detail::kK}) {
      const Index heads = i == detail::kQ ? d.heads : d.kv_heads;
      Tensor rotated = to_head_layout(d, d_qkv[i], heads);  // (B, heads, L, d_k)
      Tensor turned_back(rotated.shape);
      rotate_by_position(rotated, plan.positional, turned_back, 0, true);
      from_head_layout(d, turned_back, heads, d_qkv[i]);
      if (options.keep_stages) at(i == detail::kQ ? Stage::QRot : Stage::KRot) = std::make_shared<Tensor>(std::move(rotated));
    }

  if (options.keep_stages) {
    for (int i = 0; i < 3; ++i)
      kept[i] = std::make_shared<Tensor>(to_head_layout(d, d_qkv[i], i == detail::kQ ? d.heads : d.kv_heads));
    at(Stage::Context) = std::make_shared<Tensor>(to_head_layout(d, d_context, d.heads));
    at(Stage::Concat) = d_concat;
    at(Stage::Output) = plan.w_o ? std::make_shared<Tensor>(d_output) : d_concat;
  }

  // Inputs, then weights, under the session's own names.
  auto add = [&](std::string name, Tensor t) { result.inputs.push_back({std::move(name), make_tensor(std::move(t))}); };
  if (direct) {
    const char* names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) add(names[i], std::move(d_direct[i]));
  } else {
    WeightGradients w;
    const Weights& sw = session.weights;
    if (sw.fused()) {
      w.w_qkv = overwritten_like(sw.w_qkv);
      if (plan.qkv[0].bias) w.b_qkv = zeros_like(sw.b_qkv);
    } else {
      const TensorPtr* ws[3] = {&sw.w_q, &sw.w_k, &sw.w_v};
      const TensorPtr* bs[3] = {&sw.b_q, &sw.b_k, &sw.b_v};
      for (int i = 0; i < 3; ++i) {
        w.w[i] = overwritten_like(*ws[i]);
        if (plan.qkv[i].bias) w.b[i] = zeros_like(*bs[i]);
      }
    }
    for (ProjectionGroup& g : groups) {
      Tensor d_input = overwritten_like(g.input);
      projection_backward(plan, sw.fused(), g, d_input, w);
      // x + PE: the positions are constants, so dX = d(x_pos), in x's own shape.
      if (options.keep_stages && trace.has(g.positioned)) at(g.positioned) = std::make_shared<Tensor>(d_input);
      const TensorPtr& own = g.input_name == "x_kv" ? plan.qkv[detail::kK].input : plan.qkv[detail::kQ].input;
      d_input.shape = own->shape;
      add(g.input_name, std::move(d_input));
    }
    if (sw.fused()) {
      add("w_qkv", std::move(w.w_qkv));
      if (plan.qkv[0].bias) add("b_qkv", std::move(w.b_qkv));
    } else {
      const char* names[3][2] = {{"w_q", "b_q"}, {"w_k", "b_k"}, {"w_v", "b_v"}};
      for (int i = 0; i < 3; ++i) {
        add(names[i][0], std::move(w.w[i]));
        if (plan.qkv[i].bias) add(names[i][1], std::move(w.b[i]));
      }
    }
  }
  if (d_w_o) add("w_o", std::move(*d_w_o));
  if (d_b_o) add("b_o", std::move(*d_b_o));
  if (options.keep_stages)
    for (int i = 0; i < kStageCount; ++i) result.stages[i] = kept[i];
  return result;
}

}  // namespace al
