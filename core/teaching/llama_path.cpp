#include "teaching/llama_path.hpp"

#include <cmath>

#include "io/session_io.hpp"

namespace al {

namespace {

// (d_model, h_kv·d_k) → (d_model, h·d_k): query head h gets the columns of K/V head h ÷ group.
TensorPtr repeat_kv_columns(const Tensor& w, Index kv_heads, Index heads, Index d_k) {
  const Index rows = w.rows(), group = heads / kv_heads;
  Tensor out({rows, heads * d_k});
  for (Index r = 0; r < rows; ++r)
    for (Index h = 0; h < heads; ++h)
      for (Index c = 0; c < d_k; ++c)
        out.data[static_cast<size_t>(r * heads * d_k + h * d_k + c)] =
            w.data[static_cast<size_t>(r * kv_heads * d_k + (h / group) * d_k + c)];
  return make_tensor(std::move(out));
}

double max_difference(const Tensor& a, const Tensor& b) {
  double largest = 0;
  for (size_t k = 0; k < a.data.size() && k < b.data.size(); ++k)
    if (std::isfinite(a.data[k]) && std::isfinite(b.data[k]))
      largest = std::max(largest, std::fabs(static_cast<double>(a.data[k]) - b.data[k]));
  return largest;
}

}  // namespace

Result<std::vector<PathStep>> llama_path() {
  auto llama = load_preset("llama-block");
  if (!llama) return llama.error();
  const Config& c = llama->config;
  const Index heads = c.num_heads, kv_heads = c.kv_heads(), d_k = c.d_model / c.num_heads;
  if (!llama->weights.w_k || !llama->weights.w_v || llama->weights.fused())
    return Error{ErrorCode::InvalidConfig, "llama-block needs separate W_K and W_V", {}};

  Session gqa = *llama;
  gqa.config.positional = {};
  Session causal = gqa;
  causal.config.num_kv_heads = 0;  // one K/V head per query head
  causal.weights.w_k = repeat_kv_columns(*gqa.weights.w_k, kv_heads, heads, d_k);
  causal.weights.w_v = repeat_kv_columns(*gqa.weights.w_v, kv_heads, heads, d_k);
  Session mha = causal;
  mha.config.mask.causal = false;
  return std::vector<PathStep>{{"mha", mha}, {"causal", causal}, {"gqa", gqa}, {"rope", *llama}};
}

PathChange path_change(const Trace& before, const Trace& after) {
  PathChange change;
  change.max_weight_change = max_difference(before.stage(Stage::Weights), after.stage(Stage::Weights));
  change.max_output_change = max_difference(before.stage(Stage::Output), after.stage(Stage::Output));
  const Dims& d = after.dims;
  for (Index b = 0; b < d.batch; ++b)
    for (Index i = 0; i < d.len_q; ++i)
      for (Index j = 0; j < d.len_kv; ++j) {
        auto masked = [&](const Trace& t) { return t.mask && t.mask->at({b, i, j}) == 0.0f; };
        if (masked(after) && !masked(before)) change.newly_masked += d.heads;
      }
  auto kv_floats = [](const Trace& t) { return 2 * (t.dims.kv_heads > 0 ? t.dims.kv_heads : t.dims.heads) * t.dims.d_k; };
  change.kv_floats_before = kv_floats(before);
  change.kv_floats_after = kv_floats(after);
  return change;
}

}  // namespace al
