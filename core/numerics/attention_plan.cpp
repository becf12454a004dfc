#include "numerics/attention_plan.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "base/number_text.hpp"

namespace al::detail {

namespace {

using std::to_string;

// a * b and a + b, false on overflow (sizes of absurd sessions must not wrap).
bool checked_mul(Index a, Index b, Index* out) { return !__builtin_mul_overflow(a, b, out); }
bool checked_add(Index a, Index b, Index* out) { return !__builtin_add_overflow(a, b, out); }

std::string str(const TensorPtr& t) { return shape_string(t->shape); }

Error shape_error(std::string message) { return make_error(ErrorCode::ShapeMismatch, std::move(message)); }

// A tensor whose shape and data disagree (a forged or corrupt input) must be
// refused before anything indexes it.
std::optional<Error> check_consistent(const TensorPtr& t, const std::string& name) {
  Index n = 1;
  for (Index d : t->shape)
    if (d < 0 || !checked_mul(n, d, &n))
      return shape_error(name + " has an impossible shape " + str(t));
  if (n != t->size())
    return shape_error(name + " has shape " + str(t) + " but holds " + to_string(t->size()) +
                       " numbers instead of " + to_string(n));
  return std::nullopt;
}

struct SequenceShape {
  Index batch = 0, length = 0;
};

// A sequence input: (L, d_model) meaning B = 1, or (B, L, d_model).
// `width_name` says where the width comes from when it is not d_model (K and V
// of grouped-query attention in direct mode: H_kv·d_k).
Result<SequenceShape> check_sequence(const TensorPtr& t, const std::string& name, Index d_model,
                                     const std::string& width_name = "d_model") {
  if (auto e = check_consistent(t, name)) return *e;
  if (t->rank() != 2 && t->rank() != 3)
    return shape_error(name + " must be L x " + width_name + " or B x L x " + width_name + ", but has shape " +
                       str(t));
  if (t->dim(-1) != d_model)
    return shape_error(name + " has shape " + str(t) + " but " + width_name + " is " + to_string(d_model) +
                       ": its last dimension must be " + to_string(d_model));
  SequenceShape s{t->rank() == 3 ? t->dim(0) : 1, t->dim(-2)};
  if (s.batch < 1 || s.length < 1)
    return shape_error(name + " has shape " + str(t) + ": it needs at least one row");
  return s;
}

Error missing(const std::string& what) { return make_error(ErrorCode::MissingInput, what, {}); }

// A (rows, cols) weight matrix in math layout.
std::optional<Error> check_weight(const TensorPtr& w, const std::string& name, Index rows, Index cols,
                                  const std::string& meaning) {
  if (auto e = check_consistent(w, name)) return e;
  if (w->rank() != 2 || w->dim(0) != rows || w->dim(1) != cols)
    return shape_error(name + " has shape " + str(w) + " but must be " + to_string(rows) + "x" +
                       to_string(cols) + " (" + meaning + ")");
  return std::nullopt;
}

// A bias of length n: (n), or (1, n) as a one-row matrix.
std::optional<Error> check_bias(const TensorPtr& b, const std::string& name, Index n,
                                const std::string& meaning) {
  if (!b)
    return missing("bias is on but " + name + " is missing: give " + name + " of length " +
                   to_string(n) + " (" + meaning + ") or turn bias off");
  if (auto e = check_consistent(b, name)) return e;
  const bool vector_shape = b->rank() == 1 || (b->rank() == 2 && b->dim(0) == 1);
  if (!vector_shape || b->size() != n)
    return shape_error(name + " has shape " + str(b) + " but must be a vector of length " +
                       to_string(n) + " (" + meaning + ")");
  return std::nullopt;
}

std::optional<Error> check_masks(const Session& s, const Dims& d) {
  const MaskSpec& m = s.config.mask;
  const std::string lq = to_string(d.len_q), lk = to_string(d.len_kv), b = to_string(d.batch);
  if (!m.global_tokens.empty() && s.config.attention == AttentionKind::Cross)
    return make_error(ErrorCode::InvalidConfig,
                      "global tokens are positions of one sequence that every other position sees and that see "
                      "every position: they need self attention, not cross attention");
  for (Index p : m.global_tokens)
    if (p < 0 || p >= d.len_q)
      return make_error(ErrorCode::InvalidConfig,
                        "global token " + to_string(p) + " is not a position of the sequence (0 to " +
                            to_string(d.len_q - 1) + ")",
                        {{"position", to_string(p)}, {"length", lq}});
  if (m.key_padding) {
    if (auto e = check_consistent(m.key_padding, "the key padding mask")) return e;
    const TensorPtr& t = m.key_padding;
    // (Lk) alone is accepted for a single batch item, like a 2-D input meaning B = 1.
    const bool fits = (t->rank() == 2 && t->dim(0) == d.batch && t->dim(1) == d.len_kv) ||
                      (t->rank() == 1 && d.batch == 1 && t->dim(0) == d.len_kv);
    if (!fits)
      return make_error(ErrorCode::MaskShapeMismatch,
                        "key padding mask has shape " + str(t) + " but the keys need " + b + "x" + lk +
                            " (B x Lk)",
                        {{"shape", str(t)}, {"expected", b + "x" + lk}});
  }
  if (m.custom) {
    if (auto e = check_consistent(m.custom, "the custom mask")) return e;
    const TensorPtr& t = m.custom;
    const bool fits = (t->rank() == 2 && t->dim(0) == d.len_q && t->dim(1) == d.len_kv) ||
                      (t->rank() == 3 && t->dim(0) == d.batch && t->dim(1) == d.len_q &&
                       t->dim(2) == d.len_kv);
    if (!fits)
      return make_error(ErrorCode::MaskShapeMismatch,
                        "custom mask has shape " + str(t) + " but the scores need " + lq + "x" + lk +
                            " (Lq x Lk) or " + b + "x" + lq + "x" + lk + " (B x Lq x Lk)",
                        {{"shape", str(t)}, {"expected", lq + "x" + lk}});
  }
  return std::nullopt;
}

std::optional<Error> check_config(const Config& c) {
  if (c.d_model < 1)
    return make_error(ErrorCode::InvalidConfig, "d_model must be at least 1, but it is " + to_string(c.d_model));
  if (c.num_heads < 1)
    return make_error(ErrorCode::InvalidConfig,
                      "the number of heads must be at least 1, but it is " + to_string(c.num_heads));
  if (c.d_model % c.num_heads != 0)
    return make_error(ErrorCode::HeadsDoNotDivide,
                      "d_model = " + to_string(c.d_model) + " cannot be split into " +
                          to_string(c.num_heads) + " heads: each head takes d_k = d_model / heads columns, and " +
                          to_string(c.d_model) + " is not divisible by " + to_string(c.num_heads),
                      {{"d_model", to_string(c.d_model)}, {"num_heads", to_string(c.num_heads)}});
  if (c.num_kv_heads < 0 || (c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads != 0))
    return make_error(ErrorCode::InvalidConfig,
                      "num_kv_heads = " + to_string(c.num_kv_heads) + " must be a whole number of at least 1 "
                      "that divides num_heads = " + to_string(c.num_heads) +
                          ": each K/V head is shared by a group of num_heads / num_kv_heads query heads",
                      {{"num_kv_heads", to_string(c.num_kv_heads)}, {"num_heads", to_string(c.num_heads)}});
  if (c.positional.type == PositionalType::Sinusoidal && c.mode == InputMode::Direct)
    return make_error(ErrorCode::InvalidConfig,
                      "sinusoidal positions are added to x before the projections, and direct mode has no x: "
                      "use projection mode, or RoPE/ALiBi, which act on q, k and the scores");
  if (c.positional.type == PositionalType::Rope) {
    if ((c.d_model / c.num_heads) % 2 != 0)
      return make_error(ErrorCode::InvalidConfig,
                        "RoPE rotates pairs of dimensions, so d_k = d_model / num_heads must be even, but it is " +
                            to_string(c.d_model / c.num_heads));
    if (!(std::isfinite(c.positional.rope_base) && c.positional.rope_base > 1.0))
      return make_error(ErrorCode::InvalidConfig,
                        "rope_base must be a finite number above 1 (10000 in Llama), but it is " +
                            shortest_text(c.positional.rope_base));
  }
  if (c.mask.window < 0)
    return make_error(ErrorCode::InvalidConfig, "the sliding window must be at least 1 key (or null for no window), "
                                                "but it is " + to_string(c.mask.window));
  if (!(c.dropout.p >= 0.0 && c.dropout.p < 1.0))
    return make_error(ErrorCode::InvalidConfig,
                      "the dropout probability p must be at least 0 and below 1, but it is " +
                          shortest_text(c.dropout.p),
                      {{"p", shortest_text(c.dropout.p)}});
  if (c.scale.mode == ScaleMode::Custom && !std::isfinite(c.scale.factor))
    return make_error(ErrorCode::InvalidConfig, "the custom scale must be a finite number");
  if (std::isnan(c.mask_fill))
    return make_error(ErrorCode::InvalidConfig, "the mask fill value must be a number, not NaN");
  if (std::isinf(c.mask_fill) && c.mask_fill > 0)
    return make_error(ErrorCode::InvalidConfig, "the mask fill value must not be +∞: a masked cell would outscore every key and its row's softmax would be NaN; use −∞ or a very negative number such as −1e9");
  return std::nullopt;
}

// Fills plan.qkv and the batch/lengths for projection mode.
std::optional<Error> plan_projection(const Session& s, Plan& plan) {
  const Config& c = s.config;
  const Index d = c.d_model;
  const bool cross = c.attention == AttentionKind::Cross;
  if (!s.x)
    return missing(cross ? "cross attention in projection mode needs x_q (B x Lq x d_model) for the queries"
                         : "projection mode needs x (B x L x d_model)");
  auto xs = check_sequence(s.x, cross ? "x_q" : "x", d);
  if (!xs) return xs.error();
  SequenceShape kv_shape = *xs;
  TensorPtr kv_input = s.x;
  if (cross) {
    if (!s.x_kv)
      return missing("cross attention in projection mode needs x_kv (B x Lk x d_model) for the keys and values");
    auto ks = check_sequence(s.x_kv, "x_kv", d);
    if (!ks) return ks.error();
    if (ks->batch != xs->batch)
      return shape_error("x_kv has shape " + str(s.x_kv) + " but x_q has shape " + str(s.x) +
                         ": both need the same batch size B");
    kv_shape = *ks;
    kv_input = s.x_kv;
  }
  plan.dims.batch = xs->batch;
  plan.dims.len_q = xs->length;
  plan.dims.len_kv = kv_shape.length;

  const Weights& w = s.weights;
  const std::array<TensorPtr, 3> inputs = {s.x, kv_input, kv_input};
  const Index kv = c.kv_width();
  const bool grouped = kv != d;
  // What K and V's width means, for messages: "d_model" unless grouped.
  const std::string kv_name = grouped ? "num_kv_heads·d_k = " + to_string(kv) : "d_model";
  if (w.fused()) {
    const std::string meaning = grouped ? "d_model x (d_model + 2·num_kv_heads·d_k), Q then K then V"
                                        : "d_model x 3·d_model, Q then K then V";
    if (auto e = check_weight(w.w_qkv, "w_qkv", d, d + 2 * kv, meaning)) return e;
    if (c.bias)
      if (auto e = check_bias(w.b_qkv, "b_qkv", d + 2 * kv,
                              grouped ? "d_model + 2·num_kv_heads·d_k, Q then K then V" : "3·d_model, Q then K then V"))
        return e;
    const std::array<Index, 3> columns = {0, d, d + kv};
    for (int i = 0; i < 3; ++i) plan.qkv[i] = {inputs[i], w.w_qkv, columns[i], c.bias ? w.b_qkv : nullptr};
  } else {
    const std::array<const TensorPtr*, 3> ws = {&w.w_q, &w.w_k, &w.w_v};
    const std::array<const TensorPtr*, 3> bs = {&w.b_q, &w.b_k, &w.b_v};
    const char* names[3][2] = {{"w_q", "b_q"}, {"w_k", "b_k"}, {"w_v", "b_v"}};
    for (int i = 0; i < 3; ++i) {
      const Index width = i == kQ ? d : kv;
      const std::string width_name = i == kQ ? "d_model" : kv_name;
      if (!*ws[i])
        return missing(std::string("projection mode needs ") + names[i][0] + " (d_model x " + width_name +
                       "), or a fused w_qkv");
      if (auto e = check_weight(*ws[i], names[i][0], d, width, "d_model x " + width_name)) return e;
      if (c.bias)
        if (auto e = check_bias(*bs[i], names[i][1], width, width_name)) return e;
      plan.qkv[i] = {inputs[i], *ws[i], 0, c.bias ? *bs[i] : nullptr};
    }
  }
  if (!w.w_o) return missing("projection mode needs w_o (d_model x d_model) for the output projection");
  return std::nullopt;
}

// Fills plan.qkv and the batch/lengths for direct mode.
std::optional<Error> plan_direct(const Session& s, Plan& plan) {
  const Index d = s.config.d_model;
  const char* names[3] = {"q", "k", "v"};
  const std::array<const TensorPtr*, 3> given = {&s.q, &s.k, &s.v};
  std::array<SequenceShape, 3> shapes;
  for (int i = 0; i < 3; ++i) {
    if (!*given[i])
      return missing(std::string("direct mode needs ") + names[i] + " (B x L x d_model)");
    const Index kv = s.config.kv_width();
    auto sh = i == kQ || kv == d ? check_sequence(*given[i], names[i], d)
                                 : check_sequence(*given[i], names[i], kv, "num_kv_heads·d_k");
    if (!sh) return sh.error();
    shapes[i] = *sh;
    plan.qkv[i] = {*given[i], nullptr, 0, nullptr};
  }
  if (shapes[kK].batch != shapes[kQ].batch)
    return shape_error("k has shape " + str(s.k) + " but q has shape " + str(s.q) +
                       ": both need the same batch size B");
  if (shapes[kV].batch != shapes[kK].batch || shapes[kV].length != shapes[kK].length)
    return shape_error("v has shape " + str(s.v) + " but k has shape " + str(s.k) +
                       ": every key needs its value, so both need the same B and L");
  if (s.config.attention == AttentionKind::Self && shapes[kK].length != shapes[kQ].length)
    return shape_error("k has shape " + str(s.k) + " but q has shape " + str(s.q) +
                       ": self attention needs as many keys as queries (use cross attention for Lk != Lq)");
  plan.dims.batch = shapes[kQ].batch;
  plan.dims.len_q = shapes[kQ].length;
  plan.dims.len_kv = shapes[kK].length;
  return std::nullopt;
}

}  // namespace

double multiply_adds(const Dims& d) {
  return static_cast<double>(d.batch) *
         (2.0 * d.heads * d.len_q * d.len_kv * d.d_k + 2.0 * static_cast<double>(d.len_q + d.len_kv) * d.d_model * d.d_model);
}

bool same_dims(const Dims& a, const Dims& b) {
  return a.batch == b.batch && a.heads == b.heads && a.len_q == b.len_q && a.len_kv == b.len_kv &&
         a.d_model == b.d_model && a.d_k == b.d_k;
}

Result<Plan> make_plan(const Session& s) {
  const Config& c = s.config;
  if (auto e = check_config(c)) return *e;
  Plan plan;
  plan.dims.d_model = c.d_model;
  plan.dims.heads = c.num_heads;
  plan.dims.d_k = c.d_model / c.num_heads;
  plan.dims.kv_heads = c.kv_heads();

  if (auto e = c.mode == InputMode::Projection ? plan_projection(s, plan) : plan_direct(s, plan)) return *e;

  // The output projection: required in projection mode (checked above), optional in direct mode.
  if (s.weights.w_o) {
    if (auto e = check_weight(s.weights.w_o, "w_o", c.d_model, c.d_model, "d_model x d_model")) return *e;
    plan.w_o = s.weights.w_o;
    if (c.bias) {
      if (auto e = check_bias(s.weights.b_o, "b_o", c.d_model, "d_model")) return *e;
      plan.b_o = s.weights.b_o;
    }
  }

  if (auto e = check_masks(s, plan.dims)) return *e;
  plan.causal = c.mask.causal;
  plan.key_padding = c.mask.key_padding;
  plan.custom = c.mask.custom;
  plan.window = c.mask.window;
  if (!c.mask.global_tokens.empty()) {
    plan.global_query.assign(static_cast<size_t>(plan.dims.len_q), 0);
    plan.global_key.assign(static_cast<size_t>(plan.dims.len_kv), 0);
    for (Index p : c.mask.global_tokens) plan.global_query[static_cast<size_t>(p)] = plan.global_key[static_cast<size_t>(p)] = 1;
  }
  plan.mask_fill = c.mask_fill;
  plan.positional = c.positional;
  if (plan.alibi()) plan.alibi_slopes = alibi_slopes(plan.dims.heads);

  plan.scale = c.scale.multiplier(plan.dims.d_k);

  plan.dropout_active = c.dropout.active();
  plan.dropout_p = c.dropout.p;
  plan.dropout_seed = c.dropout.seed;
  return plan;
}

bool attends(const Plan& plan, Index b, Index i, Index j) {
  const Dims& d = plan.dims;
  // Values other than 0 count as "attend": the seeds mask with masked_fill(mask == 0, fill).
  if (plan.causal && j > i) return false;  // torch.ones(Lq, Lk).tril(): query i sees keys 0..i
  if (plan.key_padding && plan.key_padding->data[static_cast<size_t>(b * d.len_kv + j)] == 0.0f) return false;
  if (plan.custom) {
    const Index batch_offset = plan.custom->rank() == 3 ? b * d.len_q * d.len_kv : 0;
    if (plan.custom->data[static_cast<size_t>(batch_offset + i * d.len_kv + j)] == 0.0f) return false;
  }
  if (plan.window > 0 && std::abs(i - j) >= plan.window) {
    const bool global = !plan.global_query.empty() &&
                        (plan.global_query[static_cast<size_t>(i)] || plan.global_key[static_cast<size_t>(j)]);
    if (!global) return false;
  }
  return true;
}

std::vector<double> alibi_slopes(Index heads) {
  // For n a power of two: m_k = (2^(−8/n))^(k+1). Otherwise, with c the largest
  // power of two below n: the c slopes of that rule, then every other slope of
  // the rule for 2c (the paper's get_slopes).
  auto power_of_two_slopes = [](Index n) {
    std::vector<double> m(static_cast<size_t>(n));
    const double start = std::pow(2.0, -8.0 / static_cast<double>(n));
    for (Index k = 0; k < n; ++k) m[static_cast<size_t>(k)] = std::pow(start, static_cast<double>(k + 1));
    return m;
  };
  Index c = 1;
  while (c * 2 <= heads) c *= 2;
  std::vector<double> slopes = power_of_two_slopes(c);
  if (c == heads) return slopes;
  const std::vector<double> finer = power_of_two_slopes(2 * c);
  for (Index k = 0; k < heads - c; ++k) slopes.push_back(finer[static_cast<size_t>(2 * k)]);
  return slopes;
}

std::array<bool, kStageCount> present_stages(const Plan& plan) {
  std::array<bool, kStageCount> present{};
  for (Stage s : kAllStages) present[static_cast<int>(s)] = always_present(s);
  auto set = [&](Stage s, bool v) { present[static_cast<int>(s)] = v; };
  set(Stage::XPos, plan.sinusoidal());
  set(Stage::XKvPos, plan.sinusoidal() && plan.qkv[kK].input != plan.qkv[kQ].input);
  set(Stage::QRot, plan.rope());
  set(Stage::KRot, plan.rope());
  set(Stage::Biased, plan.alibi());
  return present;
}

std::array<std::optional<Stage>, kStageCount> shared_stages(const Plan& plan) {
  std::array<std::optional<Stage>, kStageCount> equal_to;
  auto share = [&](Stage s, bool shared, Stage earlier) {
    if (shared) equal_to[static_cast<int>(s)] = earlier;
  };
  share(Stage::Scaled, plan.scaled_is_scores(), Stage::Scores);
  share(Stage::Masked, plan.masked_is_scaled(), plan.alibi() ? Stage::Biased : Stage::Scaled);
  share(Stage::Dropped, plan.dropped_is_weights(), Stage::Weights);
  share(Stage::Output, plan.output_is_concat(), Stage::Concat);
  return equal_to;
}

std::array<bool, kStageCount> kept_stages(const Plan& plan, const std::optional<StageSet>& keep) {
  std::array<bool, kStageCount> kept = present_stages(plan);
  if (!keep) return kept;
  const auto equal_to = shared_stages(plan);
  // The tensor a stage's values live in: its own, or (transitively) the earlier one it equals.
  auto owner = [&](Stage s) {
    while (equal_to[static_cast<int>(s)]) s = *equal_to[static_cast<int>(s)];
    return s;
  };
  std::array<bool, kStageCount> wanted{};
  for (Stage s : kSquareStages)
    if (kept[static_cast<int>(s)] && keep->test(static_cast<size_t>(s))) wanted[static_cast<int>(owner(s))] = true;
  for (Stage s : kSquareStages) kept[static_cast<int>(s)] = kept[static_cast<int>(s)] && wanted[static_cast<int>(owner(s))];
  return kept;
}

Result<Index> trace_bytes(const Plan& plan, const std::optional<StageSet>& keep) {
  const Dims& d = plan.dims;
  // Every product below is checked: L = 10^9 must give TooLarge, not a wrapped size.
  auto product = [](std::initializer_list<Index> factors, Index* out) {
    *out = 1;
    for (Index f : factors)
      if (!checked_mul(*out, f, out)) return false;
    return true;
  };
  const Index kv_width = d.kv_heads * d.d_k;
  Index q_floats = 0, kv_floats = 0, square = 0, per_key_vector = 0, row_stats = 0, mask = 0, flags = 0;
  bool ok = product({d.batch, d.len_q, d.d_model}, &q_floats) &&               // q; q_rot, x_pos, context, ...
            product({d.batch, d.len_kv, kv_width}, &kv_floats) &&              // k or v; k_rot
            product({d.batch, d.len_kv, d.d_model}, &per_key_vector) &&        // x_kv_pos
            product({d.batch, d.heads, d.len_q, d.len_kv}, &square) &&         // one (B,h,Lq,Lk) stage
            product({2, d.batch, d.heads, d.len_q}, &row_stats) &&             // row_max, row_sum
            product({d.batch, d.len_q, d.len_kv}, &mask) &&                    // combined mask
            product({d.batch, d.len_q}, &flags);                               // fully_masked_rows (bytes)
  const bool cross_positions = plan.sinusoidal() && plan.qkv[kK].input != plan.qkv[kQ].input;
  const auto kept = kept_stages(plan, keep);
  const auto equal_to = shared_stages(plan);
  Index square_stages = 0;  // distinct (B, h, Lq, Lk) tensors kept
  for (Stage s : kSquareStages) square_stages += kept[static_cast<int>(s)] && !equal_to[static_cast<int>(s)];
  // q, context, concat, output (shared with concat without W_O), q_rot, x_pos
  const Index query_vectors = 3 + !plan.output_is_concat() + plan.rope() + plan.sinusoidal();
  const Index key_vectors = 2 + plan.rope();  // k, v, k_rot
  Index floats = 0, part = 0;
  ok = ok && checked_mul(square, square_stages, &part) && checked_add(floats, part, &floats) &&
       checked_mul(q_floats, query_vectors, &part) && checked_add(floats, part, &floats) &&
       checked_mul(kv_floats, key_vectors, &part) && checked_add(floats, part, &floats) &&
       checked_add(floats, cross_positions ? per_key_vector : 0, &floats) && checked_add(floats, row_stats, &floats) &&
       checked_add(floats, plan.has_mask() ? mask : 0, &floats);
  Index bytes = 0;
  ok = ok && checked_mul(floats, static_cast<Index>(sizeof(float)), &bytes) && checked_add(bytes, flags, &bytes);
  if (!ok)
    return make_error(ErrorCode::TooLarge,
                      "this session's trace would need more than 8 EiB (more bytes than a 64-bit count holds); "
                      "make the sequences shorter or the batch smaller",
                      {{"bytes", "overflow"}});
  return bytes;
}

Index trace_memory(const Trace& t) {
  std::set<const Tensor*> seen;
  Index bytes = 0;
  auto add = [&](const TensorPtr& p) {
    if (p && seen.insert(p.get()).second) bytes += p->size() * static_cast<Index>(sizeof(float));
  };
  for (const TensorPtr& p : t.stages) add(p);
  add(t.mask);
  add(t.row_max);
  add(t.row_sum);
  return bytes + static_cast<Index>(t.fully_masked_rows.size());
}

std::string human_bytes(Index bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else  // the exact count too, so a script can read it
    std::snprintf(buf, sizeof buf, "%.1f %s (%lld bytes)", v, units[u], static_cast<long long>(bytes));
  return buf;
}

}  // namespace al::detail
