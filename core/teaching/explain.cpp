#include "teaching/explain.hpp"

#include <algorithm>
#include <cmath>

#include "model/stage_heads.hpp"
#include "numerics/attention.hpp"
#include "numerics/positions.hpp"
#include "editing/edits.hpp"
#include "teaching/lab_numbers.hpp"

namespace al {

namespace {

// Keeps the `max_terms` largest |value| (largest first) and folds the others
// into `rest`; the total is always the full sum.
TermSum make_sum(std::vector<SumTerm> terms, Index max_terms, std::optional<double> bias) {
  TermSum sum;
  sum.total_terms = static_cast<Index>(terms.size());
  for (const SumTerm& t : terms) sum.total += t.value;
  if (bias) {
    sum.has_bias = true;
    sum.bias = *bias;
    sum.total += *bias;
  }
  if (max_terms > 0 && sum.total_terms > max_terms) {
    std::stable_sort(terms.begin(), terms.end(), [](const SumTerm& a, const SumTerm& b) {
      return std::fabs(a.value) > std::fabs(b.value);
    });
    for (size_t k = static_cast<size_t>(max_terms); k < terms.size(); ++k) sum.rest += terms[k].value;
    terms.resize(static_cast<size_t>(max_terms));
  }
  sum.terms = std::move(terms);
  return sum;
}

// Σ_p a[p]·b[p] over two strided float sequences.
std::vector<SumTerm> products(const float* a, Index a_stride, const float* b, Index b_stride, Index n) {
  std::vector<SumTerm> terms(static_cast<size_t>(n));
  for (Index p = 0; p < n; ++p) {
    SumTerm& t = terms[static_cast<size_t>(p)];
    t.index = p;
    t.factor_a = a[p * a_stride];
    t.factor_b = b[p * b_stride];
    t.value = t.factor_a * t.factor_b;
  }
  return terms;
}

// Row `row` of batch item `batch` of an input that is (B, L, d) or (L, d).
const float* input_row(const Tensor& t, Index batch, Index row) {
  const Index k = t.rank() >= 3 ? batch : 0;
  return t.data.data() + (k * t.rows() + row) * t.cols();
}

Error cell_error(const std::string& what) { return Error{ErrorCode::InvalidConfig, what, {}}; }

}  // namespace

namespace {
std::string factor(double v) {
  const std::string text = lab_number(v);
  return v < 0 ? "(" + text + ")" : text;
}
}  // namespace

Stage context_weights(const Session& session) {
  return session.config.dropout.active() ? Stage::Dropped : Stage::Weights;
}

std::string format_shifted_exp(double x, double row_max) {
  return "e^(" + lab_number(x) + " − " + factor(row_max) + ")";
}

std::string format_term_sum(const TermSum& sum, const std::string& bias_symbol, const std::string& smaller_terms) {
  std::string text;
  for (const SumTerm& t : sum.terms) {
    if (!text.empty()) text += " + ";
    text += factor(t.factor_a) + "×" + factor(t.factor_b);
  }
  if (sum.capped()) {
    text += " + " + std::to_string(sum.total_terms - static_cast<Index>(sum.terms.size())) + " " + smaller_terms +
            " (" + lab_number(sum.rest) + ")";
  }
  if (sum.has_bias) text += (text.empty() ? "" : " + ") + bias_symbol + " (" + lab_number(sum.bias) + ")";
  return text + " = " + lab_number(sum.total);
}

Result<Explanation> explain_cell(const Trace& trace, const Session& session, const CellAddress& cell,
                                 Index max_terms) {
  const Dims& d = trace.dims;
  if (!trace.has(cell.stage))
    return cell_error(std::string("stage ") + stage_name(cell.stage) + " is not in this trace (its option is off)");
  const Tensor& stage = trace.stage(cell.stage);
  const bool per_head = stage_is_per_head(cell.stage);
  const Index heads = stage_heads(d, cell.stage);  // K/V heads for k, v, k_rot
  const Index rows = stage.rows(), cols = stage.cols();
  if (cell.batch < 0 || cell.batch >= d.batch || cell.row < 0 || cell.row >= rows || cell.col < 0 ||
      cell.col >= cols || (per_head && (cell.head < -1 || cell.head >= heads)))
    return cell_error(std::string("no cell [") + std::to_string(cell.row) + ", " + std::to_string(cell.col) +
                      "] of batch item " + std::to_string(cell.batch) + ", head " + std::to_string(cell.head) +
                      " in stage " + stage_name(cell.stage) + " (" + shape_string(stage.shape) + ")");

  // The (B, h, Lq, Lk) stage this cell is computed from, absent when the trace did not keep
  // it (ComputeOptions::keep); an average over heads reads only its own stage.
  if (!per_head || cell.head >= 0) {
    std::optional<Stage> from;
    if (cell.stage == Stage::Scaled) from = Stage::Scores;
    if (cell.stage == Stage::Biased) from = Stage::Scaled;
    if (cell.stage == Stage::Masked) from = trace.before_mask();
    if (cell.stage == Stage::Weights) from = Stage::Masked;
    if (cell.stage == Stage::Dropped) from = Stage::Weights;
    if (cell.stage == Stage::Context) from = context_weights(session);
    if (from && !trace.has(*from))
      return Error{ErrorCode::InvalidConfig,
                   std::string("this cell is computed from stage ") + stage_name(*from) +
                       ", which was not kept to save memory; keep it to see the sum",
                   {{"not_kept", stage_name(*from)}}};
  }

  Explanation e;
  e.cell = cell;
  e.d_k = d.d_k;
  const Index b = cell.batch, h = per_head ? cell.head : 0, i = cell.row, c = cell.col;
  const Index bh = stage_matrix(d, cell.stage, b, h);  // matrix index of (b, h) in this stage
  // The K/V head: the cell's own for K/V stages, the one query head h reads otherwise.
  const Index kvh = stage_is_kv(cell.stage) ? h : d.kv_head(h);
  const Index kv_heads = d.kv_heads > 0 ? d.kv_heads : d.heads;
  const Index bkv = b * kv_heads + kvh;  // matrix index in a (B, h_kv, Lk, d_k) stage
  e.kv_head = kvh;

  if (per_head && cell.head < 0) {
    // The heatmaps' "average" view: mean over heads.
    std::vector<SumTerm> terms;
    double mean = 0;
    for (Index k = 0; k < heads; ++k) {
      const float v = stage.matrix(b * heads + k)(i, c);
      terms.push_back({k, v, 1.0 / static_cast<double>(heads), v / static_cast<double>(heads)});
      mean += v;
    }
    e.kind = ExplainKind::Average;
    e.value = static_cast<float>(mean / static_cast<double>(heads));
    e.sum = make_sum(std::move(terms), max_terms, std::nullopt);
    for (Index k = 0; k < heads; ++k) e.sources.push_back({stage_name(cell.stage), b, k, true, i});
    return e;
  }
  e.value = stage.matrix(bh)(i, c);

  auto key_row = [&](Stage s, Index row) {
    return SourceLine{stage_name(s), b, stage_is_kv(s) ? kvh : h, true, row};
  };
  auto key_col = [&](Stage s, Index col) {
    return SourceLine{stage_name(s), b, stage_is_kv(s) ? kvh : h, false, col};
  };

  switch (cell.stage) {
    case Stage::Q:
    case Stage::K:
    case Stage::V: {
      const bool is_q = cell.stage == Stage::Q;
      const Index column = h * d.d_k + c;  // the head's columns are a block of d_model
      if (session.config.mode == InputMode::Direct) {
        e.kind = ExplainKind::Given;
        e.sources.push_back({stage_name(cell.stage), b, -1, true, i});
        e.sources.push_back({stage_name(cell.stage), b, -1, false, column});
        break;
      }
      const bool cross_kv = !is_q && session.config.attention == AttentionKind::Cross;
      // With sinusoidal positions the projections read X + PE (stage x_pos / x_kv_pos).
      const Stage x_pos = cross_kv ? Stage::XKvPos : Stage::XPos;
      const TensorPtr& x = trace.has(x_pos) ? trace.stage_ptr(x_pos) : cross_kv ? session.x_kv : session.x;
      const InputId weight_id = is_q ? InputId::WQ : cell.stage == Stage::K ? InputId::WK : InputId::WV;
      const InputId bias_id = is_q ? InputId::BQ : cell.stage == Stage::K ? InputId::BK : InputId::BV;
      const TensorPtr w = input(session, weight_id);  // (d_model, d_model or h_kv·d_k), split out of W_qkv if fused
      if (!x || !w) return cell_error("the session has no input or weight for this projection");
      std::optional<double> bias;
      if (session.config.bias)
        if (TensorPtr bvec = input(session, bias_id)) bias = bvec->data[static_cast<size_t>(column)];
      e.kind = ExplainKind::Projection;
      e.sum = make_sum(products(input_row(*x, b, i), 1, w->data.data() + column, w->cols(), d.d_model),
                       max_terms, bias);
      e.sources.push_back({trace.has(x_pos) ? stage_name(x_pos) : cross_kv ? "x_kv" : "x", b, -1, true, i});
      e.sources.push_back({input_name(weight_id), 0, -1, false, column});
      if (session.weights.fused()) {
        // W_qkv = [W_Q | W_K | W_V]: d_model, then h_kv·d_k and h_kv·d_k columns
        const Index kv_width = kv_heads * d.d_k;
        const Index begin = is_q ? 0 : cell.stage == Stage::K ? d.d_model : d.d_model + kv_width;
        e.fused_slice = FusedWeightSlice{weight_id, begin, begin + (is_q ? d.d_model : kv_width), begin + column};
        e.sources.push_back({input_name(InputId::WQkv), 0, -1, false, begin + column});
      }
      break;
    }
    case Stage::Scores: {
      const Tensor& q = trace.stage(trace.scored_q());  // (B, h, Lq, d_k): q or q_rot
      const Tensor& k = trace.stage(trace.scored_k());  // (B, h_kv, Lk, d_k): k or k_rot
      e.kind = ExplainKind::Score;
      e.sum = make_sum(products(q.matrix(bh).row(i).data(), 1, k.matrix(bkv).row(c).data(), 1, d.d_k),
                       max_terms, std::nullopt);
      e.sources = {key_row(trace.scored_q(), i), key_row(trace.scored_k(), c)};
      break;
    }
    case Stage::Scaled:
      e.kind = ExplainKind::Scaled;
      e.scale_mode = session.config.scale.mode;
      e.scale = trace.scale;
      e.input = trace.stage(Stage::Scores).matrix(bh)(i, c);
      e.sources = {key_row(Stage::Scores, i), key_col(Stage::Scores, c)};
      break;
    case Stage::Masked:
      e.kind = ExplainKind::Masked;
      e.input = trace.stage(trace.before_mask()).matrix(bh)(i, c);
      e.biased = trace.before_mask() == Stage::Biased;
      e.has_mask = trace.mask != nullptr;
      e.masked = e.has_mask && trace.mask->matrix(b)(i, c) == 0.0f;
      e.fill = trace.mask_fill;
      e.sources = {key_row(trace.before_mask(), i), key_col(trace.before_mask(), c)};
      if (e.has_mask) {
        e.sources.push_back({"mask", b, -1, true, i});
        e.sources.push_back({"mask", b, -1, false, c});
      }
      break;
    case Stage::Weights: {
      e.kind = ExplainKind::Weight;
      const auto masked_row = trace.stage(Stage::Masked).matrix(bh).row(i);  // (Lk)
      e.input = masked_row(c);
      e.row_max = trace.row_max->data[static_cast<size_t>(bh * d.len_q + i)];
      e.row_sum = trace.row_sum->data[static_cast<size_t>(bh * d.len_q + i)];
      e.exp_shifted = std::exp(static_cast<double>(e.input) - e.row_max);
      e.row_length = d.len_kv;
      e.row_fully_masked = !trace.fully_masked_rows.empty() &&
                           trace.fully_masked_rows[static_cast<size_t>(b * d.len_q + i)] != 0;
      std::vector<SumTerm> exps;
      for (Index j = 0; j < d.len_kv; ++j)
        exps.push_back({j, masked_row(j), 1.0, std::exp(static_cast<double>(masked_row(j)) - e.row_max)});
      e.row_exps = make_sum(std::move(exps), max_terms, std::nullopt).terms;
      e.sources = {key_row(Stage::Masked, i)};
      break;
    }
    case Stage::Dropped: {
      e.kind = ExplainKind::Dropped;
      e.input = trace.stage(Stage::Weights).matrix(bh)(i, c);
      e.dropout_p = session.config.dropout.p;
      e.dropout_active = session.config.dropout.active();
      if (e.dropout_active) {
        e.keep_scale = 1.0 / (1.0 - e.dropout_p);
        e.kept = dropout_keeps(session.config.dropout.seed, e.dropout_p, (bh * d.len_q + i) * d.len_kv + c);
      }
      e.sources = {key_row(Stage::Weights, i), key_col(Stage::Weights, c)};
      break;
    }
    case Stage::Context: {
      const Stage weights = context_weights(session);
      const Tensor& alpha = trace.stage(weights);  // (B, h, Lq, Lk)
      const Tensor& v = trace.stage(Stage::V);     // (B, h_kv, Lk, d_k)
      e.kind = ExplainKind::Context;
      e.sum = make_sum(products(alpha.matrix(bh).row(i).data(), 1, v.matrix(bkv).data() + c, d.d_k, d.len_kv),
                       max_terms, std::nullopt);
      e.sources = {key_row(weights, i), key_col(Stage::V, c)};
      break;
    }
    case Stage::Concat:
      // Heads are contiguous column blocks of d_model.
      e.kind = ExplainKind::Concat;
      e.source_head = c / d.d_k;
      e.source_col = c % d.d_k;
      e.sources = {{stage_name(Stage::Context), b, e.source_head, true, i},
                   {stage_name(Stage::Context), b, e.source_head, false, e.source_col}};
      break;
    case Stage::Output: {
      e.kind = ExplainKind::Output;
      const TensorPtr& w_o = session.weights.w_o;  // (d_model, d_model)
      if (!w_o) {  // direct mode without W_O: the output is the concatenation
        e.sum = make_sum({}, max_terms, std::nullopt);
        e.sum.total = trace.stage(Stage::Concat).matrix(b)(i, c);
        e.sources = {{stage_name(Stage::Concat), b, -1, true, i}, {stage_name(Stage::Concat), b, -1, false, c}};
        break;
      }
      std::optional<double> bias;
      if (session.config.bias && session.weights.b_o) bias = session.weights.b_o->data[static_cast<size_t>(c)];
      e.sum = make_sum(products(trace.stage(Stage::Concat).matrix(b).row(i).data(), 1, w_o->data.data() + c,
                                w_o->cols(), d.d_model),
                       max_terms, bias);
      e.sources = {{stage_name(Stage::Concat), b, -1, true, i}, {input_name(InputId::WO), 0, -1, false, c}};
      break;
    }
    case Stage::XPos:
    case Stage::XKvPos: {
      e.kind = ExplainKind::Positional;
      const bool kv_side = cell.stage == Stage::XKvPos;
      const TensorPtr& x = kv_side ? session.x_kv : session.x;  // (B, L, d_model)
      if (!x) return cell_error("the session has no input for this stage");
      e.input = input_row(*x, b, i)[c];
      e.position = i;  // positions count from 0 on each side
      e.angle = static_cast<double>(i) /
                std::pow(10000.0, static_cast<double>(2 * (c / 2)) / static_cast<double>(d.d_model));
      e.encoding = sinusoidal_position(i, c, d.d_model);
      e.sources = {{kv_side ? "x_kv" : "x", b, -1, true, i}};
      break;
    }
    case Stage::QRot:
    case Stage::KRot: {
      e.kind = ExplainKind::Rotated;
      const PositionalSpec& spec = session.config.positional;
      const Stage before = cell.stage == Stage::QRot ? Stage::Q : Stage::K;
      const auto row = trace.stage(before).matrix(bh).row(i);  // (d_k): the unrotated row, same head
      const Index pairs = d.d_k / 2;
      for (Index k = 0; k < pairs; ++k) {
        const auto [a, bd] = rope_dimensions(k, d.d_k, spec.rope_style);
        if (a == c || bd == c) e.pair = k, e.dim_a = a, e.dim_b = bd;
      }
      e.position = i;
      e.rope_base = spec.rope_base;
      e.angle = rope_angle(i, e.pair, d.d_k, spec.rope_base);
      e.x_a = row(e.dim_a);
      e.x_b = row(e.dim_b);
      e.sources = {{stage_name(before), b, h, true, i}};
      break;
    }
    case Stage::Biased:
      e.kind = ExplainKind::Biased;
      e.input = trace.stage(Stage::Scaled).matrix(bh)(i, c);
      e.slope = trace.alibi_slopes.empty() ? 0.0 : trace.alibi_slopes[static_cast<size_t>(h)];
      e.distance = i > c ? i - c : c - i;
      e.sources = {key_row(Stage::Scaled, i), key_col(Stage::Scaled, c)};
      break;
  }
  return e;
}

}  // namespace al
