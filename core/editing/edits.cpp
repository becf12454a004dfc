#include "editing/edits.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "numerics/attention.hpp"
#include "base/random.hpp"

// Conventions shared by every edit here:
// - Only the inputs an edit changes get a new TensorPtr; every other pointer is
//   kept, because the incremental recompute compares pointers.
// - On a fused session, WQ/WK/WV (and BQ/BK/BV) name the Q/K/V column block of
//   W_qkv (b_qkv): reading copies the block out, writing replaces the block in a
//   new W_qkv. So the GUI can show "W_Q" whatever the storage.
// - Inputs the configuration does not use are dropped (switching mode, attention
//   kind or bias off), so the session always saves as it looks; undo brings them back.
// - New random values are seeded and deterministic: weights have std
//   1/sqrt(d_model) (x·W keeps the scale of x), data (X, Q, K, V) std 1, biases 0.

namespace al {
namespace {

// K and V's width H_kv·d_k for a given d_model: d_model for multi-head attention,
// and also when the heads do not split d_model (validate() says why; the inputs
// keep the multi-head shape meanwhile).
Index kv_width_for(const Config& c, Index d_model) {
  const Index h = c.num_heads, kv = c.kv_heads();
  if (h < 1 || kv < 1 || kv == h || d_model % h != 0 || h % kv != 0) return d_model;
  return kv * (d_model / h);
}

struct Sizes {
  Index batch, len_q, len_kv, d_model;
  Index kv;  // H_kv·d_k: the width of K, V, W_K, W_V
};

Sizes sizes_for(const Config& c, Index batch, Index len_q, Index len_kv, Index d_model) {
  return {batch, len_q, len_kv, d_model, kv_width_for(c, d_model)};
}

// The session's sizes, with 1 where there is no input yet to tell (creating the
// first input of an empty session still needs a shape).
Sizes sizes_of(const Session& s) {
  const auto at_least_one = [](Index n) { return n > 0 ? n : Index{1}; };
  return sizes_for(s.config, at_least_one(s.batch()), at_least_one(s.len_q()), at_least_one(s.len_kv()),
                   at_least_one(s.config.d_model));
}

// The inputs with a batch axis: (B, L, d).
bool is_data(InputId id) {
  return id == InputId::X || id == InputId::XKv || id == InputId::Q || id == InputId::K ||
         id == InputId::V;
}

bool is_mask(InputId id) { return id == InputId::MaskCustom || id == InputId::KeyPadding; }

bool is_bias(InputId id) {
  return id == InputId::BQ || id == InputId::BK || id == InputId::BV || id == InputId::BQkv ||
         id == InputId::BO;
}

bool is_weight(InputId id) {
  return id == InputId::WQ || id == InputId::WK || id == InputId::WV || id == InputId::WQkv ||
         id == InputId::WO;
}

// Which third (Q, K, V) of the fused tensors a separate projection input lives in.
int fused_block(InputId id) {
  switch (id) {
    case InputId::WQ: case InputId::BQ: return 0;
    case InputId::WK: case InputId::BK: return 1;
    case InputId::WV: case InputId::BV: return 2;
    default: return -1;
  }
}

// The storage slot of an input, ignoring fusion.
TensorPtr& slot(Session& s, InputId id) {
  Weights& w = s.weights;
  switch (id) {
    case InputId::X: return s.x;
    case InputId::XKv: return s.x_kv;
    case InputId::Q: return s.q;
    case InputId::K: return s.k;
    case InputId::V: return s.v;
    case InputId::WQ: return w.w_q;
    case InputId::BQ: return w.b_q;
    case InputId::WK: return w.w_k;
    case InputId::BK: return w.b_k;
    case InputId::WV: return w.w_v;
    case InputId::BV: return w.b_v;
    case InputId::WQkv: return w.w_qkv;
    case InputId::BQkv: return w.b_qkv;
    case InputId::WO: return w.w_o;
    case InputId::BO: return w.b_o;
    case InputId::MaskCustom: return s.config.mask.custom;
    case InputId::KeyPadding: return s.config.mask.key_padding;
  }
  return s.x;  // unreachable: every enumerator is handled above
}

const TensorPtr& slot(const Session& s, InputId id) { return slot(const_cast<Session&>(s), id); }

// The shape an input must have for the given sizes.
std::vector<Index> expected_shape(InputId id, const Sizes& z) {
  const Index d = z.d_model, kv = z.kv;
  switch (id) {
    case InputId::X: case InputId::Q: return {z.batch, z.len_q, d};
    case InputId::XKv: return {z.batch, z.len_kv, d};
    case InputId::K: case InputId::V: return {z.batch, z.len_kv, kv};
    case InputId::WQ: case InputId::WO: return {d, d};
    case InputId::WK: case InputId::WV: return {d, kv};
    case InputId::BQ: case InputId::BO: return {d};
    case InputId::BK: case InputId::BV: return {kv};
    case InputId::WQkv: return {d, d + 2 * kv};
    case InputId::BQkv: return {d + 2 * kv};
    case InputId::MaskCustom: return {z.batch, z.len_q, z.len_kv};
    case InputId::KeyPadding: return {z.batch, z.len_kv};
  }
  return {};
}

// A fixed seed per input, so inputs created by switching modes are reproducible
// and differ from each other.
std::uint64_t creation_seed(InputId id) { return 0xA77E'0000u + static_cast<std::uint64_t>(id); }

double random_stddev(InputId id, Index d_model) {
  return is_weight(id) || is_bias(id) ? 1.0 / std::sqrt(static_cast<double>(d_model)) : 1.0;
}

// Seeded content for a new input: zero biases, all-ones masks, random otherwise.
Tensor new_input(InputId id, const Sizes& z) {
  std::vector<Index> shape = expected_shape(id, z);
  if (is_bias(id)) return Tensor(std::move(shape), 0.0f);
  if (is_mask(id)) return Tensor(std::move(shape), 1.0f);
  return random_normal(std::move(shape), creation_seed(id), random_stddev(id, z.d_model));
}

void ensure_input(Session& s, InputId id, const Sizes& z) {
  TensorPtr& p = slot(s, id);
  if (!p) p = make_tensor(new_input(id, z));
}

// --- Column blocks of the fused W_qkv (d, d + 2·kv) and b_qkv (d + 2·kv) ---------
// Q is columns [0, d), K [d, d + kv), V [d + kv, d + 2·kv), kv = H_kv·d_k.

// Rows of a tensor seen as (size / cols, cols): a bias is one row.
Index row_count(const Tensor& t) { return t.cols() == 0 ? 0 : t.size() / t.cols(); }

struct Blocks {
  Index d, kv;
  Index offset(int block) const { return block == 0 ? 0 : d + (block - 1) * kv; }
  Index width(int block) const { return block == 0 ? d : kv; }
  bool fits(const Tensor& fused) const { return fused.rank() >= 1 && fused.cols() == d + 2 * kv; }
};

Blocks blocks_of(const Session& s) {
  const Sizes z = sizes_of(s);
  return {z.d_model, z.kv};
}

// Columns [offset, offset + width) of every row.
Tensor columns(const Tensor& t, Index offset, Index width) {
  std::vector<Index> shape = t.shape;
  shape.back() = width;
  Tensor part(std::move(shape));
  for (Index r = 0; r < row_count(t); ++r)
    for (Index c = 0; c < width; ++c)
      part.data[static_cast<size_t>(r * width + c)] = t.data[static_cast<size_t>(r * t.cols() + offset + c)];
  return part;
}

Tensor column_block(const Tensor& fused, const Blocks& b, int block) {
  return columns(fused, b.offset(block), b.width(block));
}

Tensor with_column_block(const Tensor& fused, const Blocks& b, int block, const Tensor& part) {
  Tensor out = fused;
  const Index offset = b.offset(block), width = b.width(block);
  for (Index r = 0; r < row_count(fused); ++r)
    for (Index c = 0; c < width; ++c)
      out.data[static_cast<size_t>(r * fused.cols() + offset + c)] = part.data[static_cast<size_t>(r * width + c)];
  return out;
}

// [q | k | v] along the last axis.
Tensor concat_columns(const Tensor& q, const Tensor& k, const Tensor& v) {
  const Blocks b{q.cols(), k.cols()};
  std::vector<Index> shape = q.shape;
  shape.back() = b.d + 2 * b.kv;
  Tensor fused(std::move(shape));
  int block = 0;
  for (const Tensor* part : {&q, &k, &v}) fused = with_column_block(fused, b, block++, *part);
  return fused;
}

// Q, K, V parts that concatenate: same rows, K and V of the same width.
bool concatenates(const TensorPtr& q, const TensorPtr& k, const TensorPtr& v) {
  if (q->rank() < 1 || k->shape != v->shape || q->rank() != k->rank()) return false;
  return std::equal(q->shape.begin(), q->shape.end() - 1, k->shape.begin());
}

// --- Resizing -------------------------------------------------------------------

// A tensor of `shape` that keeps the old values where the index exists in both;
// other cells come from new_cell(index in the new tensor, flat index).
Tensor resize_keeping_overlap(const Tensor& old, const std::vector<Index>& shape,
                              const std::function<float(const std::vector<Index>&, Index)>& new_cell) {
  Tensor out(shape);
  std::vector<Index> idx(shape.size(), 0);
  for (Index flat = 0; flat < out.size(); ++flat) {
    bool inside_old = true;
    Index old_flat = 0;
    for (size_t a = 0; a < shape.size(); ++a) {
      inside_old = inside_old && idx[a] < old.shape[a];
      old_flat = old_flat * old.shape[a] + idx[a];
    }
    out.data[static_cast<size_t>(flat)] =
        inside_old ? old.data[static_cast<size_t>(old_flat)] : new_cell(idx, flat);
    // Advance the multi-index in C order.
    for (size_t a = shape.size(); a-- > 0;) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

// Resizes the input in its slot to the shape the new sizes ask for. Keeps the
// pointer when nothing changes, and leaves a tensor of unexpected rank alone
// (validate() names it; guessing which axis is which could scramble it).
void resize_input(Session& s, InputId id, const Sizes& z) {
  TensorPtr& p = slot(s, id);
  if (!p) return;
  std::vector<Index> shape = expected_shape(id, z);
  std::vector<Index> old_shape = p->shape;
  if (old_shape.size() == 2 && (id == InputId::MaskCustom || is_data(id))) {
    // (L, d) data means B = 1 and stays 2-D while B stays 1; a 2-D custom mask
    // is (Lq, Lk) for every batch item.
    if (id == InputId::MaskCustom || z.batch == 1)
      shape.erase(shape.begin());
    else
      old_shape.insert(old_shape.begin(), 1);
  }
  if (p->shape == shape || old_shape.size() != shape.size()) return;

  Tensor old(old_shape, p->data);
  std::function<float(const std::vector<Index>&, Index)> new_cell;
  if (id == InputId::KeyPadding) {
    // A padded item stays padded to the same length: new keys repeat the row's
    // last value. New batch items attend to everything.
    new_cell = [&old](const std::vector<Index>& idx, Index) {
      const Index old_keys = old.dim(1);
      return idx[0] < old.dim(0) && old_keys > 0 ? old.at({idx[0], old_keys - 1}) : 1.0f;
    };
  } else if (is_mask(id)) {
    new_cell = [](const std::vector<Index>&, Index) { return 1.0f; };
  } else if (is_bias(id)) {
    new_cell = [](const std::vector<Index>&, Index) { return 0.0f; };
  } else {
    const double stddev = random_stddev(id, z.d_model);
    const std::uint64_t seed = creation_seed(id);
    new_cell = [stddev, seed](const std::vector<Index>&, Index flat) {
      return static_cast<float>(stddev * normal01(seed, static_cast<std::uint64_t>(flat)));
    };
  }
  p = make_tensor(resize_keeping_overlap(old, shape, new_cell));
}

std::vector<std::string> resized_tokens(std::vector<std::string> tokens, Index length) {
  if (tokens.empty()) return tokens;  // no labels: the app numbers the tokens itself
  for (Index i = static_cast<Index>(tokens.size()); i < length; ++i)
    tokens.push_back("t" + std::to_string(i));
  tokens.resize(static_cast<size_t>(length));
  return tokens;
}

constexpr InputId kAllInputs[] = {
    InputId::X,  InputId::XKv, InputId::Q,  InputId::K,    InputId::V,    InputId::WQ,
    InputId::BQ, InputId::WK,  InputId::BK, InputId::WV,   InputId::BV,   InputId::WQkv,
    InputId::BQkv, InputId::WO, InputId::BO, InputId::MaskCustom, InputId::KeyPadding};

// Ones where batch item b may attend, as a (B, Lq, Lk) copy of the custom mask;
// null when the existing mask does not fit the sizes (the painter cannot map it).
std::optional<Tensor> custom_mask_3d(const Session& s, const Sizes& z) {
  const TensorPtr& m = s.config.mask.custom;
  const std::vector<Index> full = {z.batch, z.len_q, z.len_kv};
  if (!m) return Tensor(full, 1.0f);
  if (m->shape == full) return *m;
  if (m->shape == std::vector<Index>{z.len_q, z.len_kv}) {
    Tensor broadcast(full);
    for (Index b = 0; b < z.batch; ++b) broadcast.matrix(b) = m->matrix(0);
    return broadcast;
  }
  return std::nullopt;
}

}  // namespace

Index kv_input_width(const Config& c) { return kv_width_for(c, c.d_model); }

const char* input_name(InputId id) {
  switch (id) {
    case InputId::X: return "x";
    case InputId::XKv: return "x_kv";
    case InputId::Q: return "q";
    case InputId::K: return "k";
    case InputId::V: return "v";
    case InputId::WQ: return "w_q";
    case InputId::BQ: return "b_q";
    case InputId::WK: return "w_k";
    case InputId::BK: return "b_k";
    case InputId::WV: return "w_v";
    case InputId::BV: return "b_v";
    case InputId::WQkv: return "w_qkv";
    case InputId::BQkv: return "b_qkv";
    case InputId::WO: return "w_o";
    case InputId::BO: return "b_o";
    case InputId::MaskCustom: return "mask.custom";
    case InputId::KeyPadding: return "mask.key_padding";
  }
  return "?";
}

TensorPtr input(const Session& s, InputId id) {
  const int block = fused_block(id);
  if (block >= 0 && s.weights.fused()) {
    const TensorPtr& fused = is_bias(id) ? s.weights.b_qkv : s.weights.w_qkv;
    const Blocks blocks = blocks_of(s);
    if (!fused || !blocks.fits(*fused)) return nullptr;
    return make_tensor(column_block(*fused, blocks, block));
  }
  return slot(s, id);
}

Session with_input(const Session& s, InputId id, TensorPtr value) {
  const int block = fused_block(id);
  if (block >= 0 && s.weights.fused()) {
    const TensorPtr& fused = is_bias(id) ? s.weights.b_qkv : s.weights.w_qkv;
    const Blocks blocks = blocks_of(s);
    if (value && fused && blocks.fits(*fused) && column_block(*fused, blocks, block).shape == value->shape) {
      Session out = s;
      (is_bias(id) ? out.weights.b_qkv : out.weights.w_qkv) =
          make_tensor(with_column_block(*fused, blocks, block, *value));
      return out;
    }
    // The value does not fit a block (an import of another shape): store the
    // weights separately so validate() can name the bad shape.
    Session out = with_fused(s, false);
    slot(out, id) = std::move(value);
    return out;
  }
  if ((id == InputId::WQkv || id == InputId::BQkv) && !s.weights.fused()) {
    Session out = with_fused(s, true);
    slot(out, id) = std::move(value);
    return out;
  }
  Session out = s;
  slot(out, id) = std::move(value);
  return out;
}

Session with_cell(const Session& s, InputId id, Index flat_index, float value) {
  const TensorPtr current = input(s, id);
  if (!current || flat_index < 0 || flat_index >= current->size()) return s;
  if (current->data[static_cast<size_t>(flat_index)] == value) return s;
  Tensor edited = *current;
  edited.data[static_cast<size_t>(flat_index)] = value;
  return with_input(s, id, make_tensor(std::move(edited)));
}

Session with_filled(const Session& s, InputId id, Fill fill, std::uint64_t seed) {
  const TensorPtr current = input(s, id);
  const Sizes z = sizes_of(s);
  std::vector<Index> shape = current ? current->shape : expected_shape(id, z);
  Tensor filled(shape, 0.0f);
  switch (fill) {
    case Fill::Zero:
      break;
    case Fill::Identity:
      for (Index k = 0; k < filled.matrices(); ++k) filled.matrix(k).setIdentity();
      break;
    case Fill::Random:
      if (is_mask(id)) {
        // A mask stays 1/0: each cell attends with probability 1/2.
        for (Index i = 0; i < filled.size(); ++i)
          filled.data[static_cast<size_t>(i)] =
              uniform01(seed, static_cast<std::uint64_t>(i)) < 0.5 ? 0.0f : 1.0f;
      } else {
        filled = random_normal(shape, seed, random_stddev(id, z.d_model));
      }
      break;
  }
  return with_input(s, id, make_tensor(std::move(filled)));
}

std::optional<Error> check_sizes(const Session& s, Index batch, Index len_q, Index len_kv,
                                 Index d_model) {
  if (batch < 1 || len_q < 1 || len_kv < 1 || d_model < 1)
    return make_error(ErrorCode::InvalidConfig,
                      "sizes must be at least 1 (batch " + std::to_string(batch) + ", Lq " +
                          std::to_string(len_q) + ", Lk " + std::to_string(len_kv) +
                          ", d_model " + std::to_string(d_model) + ")");
  // The inputs alone must fit before they are allocated (a custom mask is
  // Lq x Lk per batch item); the trace is checked by compute() itself.
  const Sizes z = sizes_for(s.config, batch, len_q, len_kv, d_model);
  double bytes = 0;  // in double: absurd sizes must not overflow the count
  for (InputId id : kAllInputs) {
    if (!slot(s, id)) continue;
    double cells = 1;
    for (Index n : expected_shape(id, z)) cells *= static_cast<double>(n);
    bytes += 4.0 * cells;  // float32
  }
  const double limit = static_cast<double>(default_memory_limit());
  if (bytes > limit) {
    const std::string mb = std::to_string(static_cast<long long>(bytes / 1e6));
    const std::string limit_mb = std::to_string(static_cast<long long>(limit / 1e6));
    return make_error(ErrorCode::TooLarge,
                      "the inputs at these sizes would need " + mb + " MB, more than the " +
                          limit_mb + " MB allowed",
                      {{"mb", mb}, {"limit_mb", limit_mb}});
  }
  return std::nullopt;
}

Session with_sizes(const Session& s, Index batch, Index len_q, Index len_kv, Index d_model) {
  const bool cross = s.config.attention == AttentionKind::Cross;
  const Sizes z = sizes_for(s.config, batch, len_q, cross ? len_kv : len_q, d_model);
  if (check_sizes(s, z.batch, z.len_q, z.len_kv, z.d_model)) return s;
  // W_qkv's overlap is per Q/K/V block, not per raw column: resize the parts.
  const bool fused = s.weights.fused();
  Session out = fused ? with_fused(s, false) : s;
  out.config.d_model = d_model;  // num_heads is kept; validate() reports if it no longer divides
  for (InputId id : kAllInputs) resize_input(out, id, z);
  out.tokens = resized_tokens(out.tokens, z.len_q);
  // A global token past the new end is no longer a position of the sequence.
  auto& global = out.config.mask.global_tokens;
  global.erase(std::remove_if(global.begin(), global.end(), [&](Index p) { return p >= z.len_q; }), global.end());
  if (cross) out.tokens_kv = resized_tokens(out.tokens_kv, z.len_kv);
  if (fused) {
    Session refused = with_fused(out, true);
    // A fused tensor whose shape did not change keeps its pointer.
    if (refused.weights.w_qkv && s.weights.w_qkv && *refused.weights.w_qkv == *s.weights.w_qkv)
      refused.weights.w_qkv = s.weights.w_qkv;
    if (refused.weights.b_qkv && s.weights.b_qkv && *refused.weights.b_qkv == *s.weights.b_qkv)
      refused.weights.b_qkv = s.weights.b_qkv;
    return refused;
  }
  return out;
}

namespace {

// Creates what the configuration needs and drops what it does not use.
void conform_inputs(Session& s, const Sizes& z) {
  const bool projection = s.config.mode == InputMode::Projection;
  const bool cross = s.config.attention == AttentionKind::Cross;
  const bool bias = s.config.bias;
  Weights& w = s.weights;
  if (projection) {
    ensure_input(s, InputId::X, z);
    if (cross) ensure_input(s, InputId::XKv, z); else s.x_kv = nullptr;
    s.q = s.k = s.v = nullptr;
    if (w.fused()) {
      if (bias) ensure_input(s, InputId::BQkv, z);
    } else {
      for (InputId id : {InputId::WQ, InputId::WK, InputId::WV}) ensure_input(s, id, z);
      if (bias) for (InputId id : {InputId::BQ, InputId::BK, InputId::BV}) ensure_input(s, id, z);
    }
    ensure_input(s, InputId::WO, z);
  } else {
    for (InputId id : {InputId::Q, InputId::K, InputId::V}) ensure_input(s, id, z);
    s.x = s.x_kv = nullptr;
    w.w_q = w.w_k = w.w_v = w.b_q = w.b_k = w.b_v = w.w_qkv = w.b_qkv = nullptr;
    // W_O is optional in direct mode: kept if there is one.
  }
  if (bias && w.w_o) ensure_input(s, InputId::BO, z);
  if (!bias) w.b_q = w.b_k = w.b_v = w.b_qkv = w.b_o = nullptr;
}

}  // namespace

Session with_mode(const Session& s, InputMode mode) {
  Session out = s;
  out.config.mode = mode;
  conform_inputs(out, sizes_of(s));
  return out;
}

Session with_attention(const Session& s, AttentionKind kind) {
  const Sizes before = sizes_of(s);
  Session out = s;
  out.config.attention = kind;
  const bool cross = kind == AttentionKind::Cross;
  // Switching to cross starts with keys as long as the queries; back to self,
  // keys are the queries again, so every key-side input takes Lq.
  const Sizes z = sizes_for(s.config, before.batch, before.len_q, cross ? before.len_kv : before.len_q,
                            before.d_model);
  conform_inputs(out, z);
  if (cross) {
    if (out.tokens_kv.empty()) out.tokens_kv = out.tokens;
  } else {
    out.tokens_kv.clear();
  }
  return with_sizes(out, z.batch, z.len_q, z.len_kv, z.d_model);
}

Session with_fused(const Session& s, bool fused) {
  if (s.weights.fused() == fused) return s;
  const Sizes z = sizes_of(s);
  Session out = s;
  Weights& w = out.weights;
  if (fused) {
    for (InputId id : {InputId::WQ, InputId::WK, InputId::WV}) ensure_input(out, id, z);
    // Parts of different shapes cannot be concatenated; validate() names them.
    if (!concatenates(w.w_q, w.w_k, w.w_v)) return s;
    w.w_qkv = make_tensor(concat_columns(*w.w_q, *w.w_k, *w.w_v));
    if (w.b_q || w.b_k || w.b_v) {
      for (InputId id : {InputId::BQ, InputId::BK, InputId::BV}) ensure_input(out, id, z);
      if (!concatenates(w.b_q, w.b_k, w.b_v)) return s;
      w.b_qkv = make_tensor(concat_columns(*w.b_q, *w.b_k, *w.b_v));
    }
    w.w_q = w.w_k = w.w_v = w.b_q = w.b_k = w.b_v = nullptr;
  } else {
    const Blocks blocks = blocks_of(s);
    if (!blocks.fits(*w.w_qkv) || (w.b_qkv && !blocks.fits(*w.b_qkv))) return s;
    w.w_q = make_tensor(column_block(*w.w_qkv, blocks, 0));
    w.w_k = make_tensor(column_block(*w.w_qkv, blocks, 1));
    w.w_v = make_tensor(column_block(*w.w_qkv, blocks, 2));
    if (w.b_qkv) {
      w.b_q = make_tensor(column_block(*w.b_qkv, blocks, 0));
      w.b_k = make_tensor(column_block(*w.b_qkv, blocks, 1));
      w.b_v = make_tensor(column_block(*w.b_qkv, blocks, 2));
    }
    w.w_qkv = w.b_qkv = nullptr;
  }
  return out;
}

Session with_bias(const Session& s, bool bias) {
  Session out = s;
  out.config.bias = bias;
  conform_inputs(out, sizes_of(s));
  return out;
}

Session with_mask_cell(const Session& s, Index batch, Index i, Index j, bool attend) {
  const Sizes z = sizes_of(s);
  if (batch < 0 || batch >= z.batch || i < 0 || i >= z.len_q || j < 0 || j >= z.len_kv) return s;
  std::optional<Tensor> mask = custom_mask_3d(s, z);  // (B, Lq, Lk)
  if (!mask) return s;
  float& cell = mask->at({batch, i, j});
  const float value = attend ? 1.0f : 0.0f;
  if (cell == value) return s;
  cell = value;
  Session out = s;
  out.config.mask.custom = make_tensor(std::move(*mask));
  return out;
}

Session with_causal(const Session& s, bool causal) {
  Session out = s;
  out.config.mask.causal = causal;
  return out;
}

Session with_padding_length(const Session& s, Index batch, Index length) {
  const Sizes z = sizes_of(s);
  if (batch < 0 || batch >= z.batch) return s;
  const TensorPtr& current = s.config.mask.key_padding;
  const std::vector<Index> shape = {z.batch, z.len_kv};  // (B, Lk)
  if (current && current->shape != shape) return s;      // validate() names the bad shape
  Tensor padding = current ? *current : Tensor(shape, 1.0f);
  const Index kept = std::max<Index>(0, std::min(length, z.len_kv));
  for (Index j = 0; j < z.len_kv; ++j) padding.at({batch, j}) = j < kept ? 1.0f : 0.0f;
  if (current && padding == *current) return s;
  Session out = s;
  out.config.mask.key_padding = make_tensor(std::move(padding));
  return out;
}

Session with_mask_cleared(const Session& s) {
  Session out = s;
  out.config.mask = MaskSpec{};
  return out;
}

}  // namespace al
