#include "editing/config_edits.hpp"

#include <algorithm>

#include "editing/edits.hpp"

namespace al {
namespace {

// How K/V columns are laid out: `heads` query heads of d_k columns sharing
// `kv_heads` K/V heads; width = kv_heads·d_k (d_model for multi-head).
struct KvLayout {
  Index heads = 1, kv_heads = 1, d_k = 1, width = 0;
  Index group() const { return heads / kv_heads; }
};

KvLayout layout_of(const Config& c) {
  KvLayout l;
  l.width = kv_input_width(c);
  if (l.width == c.d_model) {  // multi-head (or heads that do not split d_model)
    l.heads = l.kv_heads = 1;
    l.d_k = c.d_model;
    return l;
  }
  l.heads = c.num_heads;
  l.kv_heads = c.kv_heads();
  l.d_k = c.d_model / c.num_heads;
  return l;
}

// (rows, from.width) -> (rows, to.width) through one K/V head per query head
// (d_model columns). Column c of the expanded form is query head q = c / d_k,
// which reads K/V head q / group.
Tensor regroup(const Tensor& t, const KvLayout& from, const KvLayout& to, Index d_model) {
  const Index rows = t.cols() == 0 ? 0 : t.size() / t.cols();
  std::vector<float> expanded(static_cast<size_t>(rows * d_model));
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < d_model; ++c) {
      const Index q = c / from.d_k, within = c % from.d_k;
      const Index source = (q / from.group()) * from.d_k + within;
      expanded[static_cast<size_t>(r * d_model + c)] = t.data[static_cast<size_t>(r * t.cols() + source)];
    }
  std::vector<Index> shape = t.shape;
  shape.back() = to.width;
  Tensor out(std::move(shape));
  const Index group = to.group();
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < to.width; ++c) {
      const Index kv_head = c / to.d_k, within = c % to.d_k;
      double sum = 0;
      for (Index q = kv_head * group; q < (kv_head + 1) * group; ++q)
        sum += expanded[static_cast<size_t>(r * d_model + q * to.d_k + within)];
      out.data[static_cast<size_t>(r * to.width + c)] = static_cast<float>(sum / static_cast<double>(group));
    }
  return out;
}

}  // namespace

Session with_heads(const Session& s, Index num_heads, Index num_kv_heads) {
  Config next = s.config;
  next.num_heads = num_heads;
  Index kv = num_kv_heads > 0 ? num_kv_heads : num_heads;
  if (num_heads < 1 || num_heads % kv != 0 || s.config.d_model % num_heads != 0) kv = num_heads;
  next.num_kv_heads = kv == num_heads ? 0 : kv;

  const KvLayout from = layout_of(s.config), to = layout_of(next);
  const bool same_layout = from.width == to.width && from.d_k == to.d_k && from.group() == to.group();
  const bool fused = s.weights.fused();
  // The fused W_qkv splits by the old layout and joins by the new one (one of a
  // bad shape does not split: it stays as it is and validate() names it).
  Session out = fused ? with_fused(s, false) : s;
  out.config = next;
  if (!same_layout) {
    const Index d = s.config.d_model;
    for (TensorPtr* p : {&out.weights.w_k, &out.weights.w_v, &out.weights.b_k, &out.weights.b_v, &out.k, &out.v})
      if (*p && (*p)->rank() >= 1 && (*p)->cols() == from.width) *p = make_tensor(regroup(**p, from, to, d));
  }
  if (!fused || out.weights.fused()) return out;
  Session refused = with_fused(out, true);
  // Nothing regrouped: the fused tensors keep their pointers.
  if (same_layout) {
    refused.weights.w_qkv = s.weights.w_qkv;
    refused.weights.b_qkv = s.weights.b_qkv;
  }
  return refused;
}

Session with_positional(const Session& s, const PositionalSpec& positional) {
  Session out = s;
  out.config.positional = positional;
  return out;
}

Session with_window(const Session& s, Index window) {
  Session out = s;
  out.config.mask.window = std::max<Index>(0, window);
  return out;
}

Session with_global_token(const Session& s, Index position, bool global) {
  if (position < 0 || position >= s.len_q()) return s;
  std::vector<Index> tokens = s.config.mask.global_tokens;
  const auto at = std::find(tokens.begin(), tokens.end(), position);
  if ((at != tokens.end()) == global) return s;
  if (global) tokens.push_back(position);
  else tokens.erase(at);
  std::sort(tokens.begin(), tokens.end());
  Session out = s;
  out.config.mask.global_tokens = std::move(tokens);
  return out;
}

}  // namespace al
