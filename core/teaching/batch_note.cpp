#include "teaching/batch_note.hpp"

#include <functional>
#include <vector>

namespace al {

namespace {

// For each batch item, whether any of its `count` values from `offset(b)` meets `shows`.
std::vector<bool> items_showing(Index batch, Index count, const std::function<bool(Index b, Index i)>& shows) {
  std::vector<bool> showing(static_cast<size_t>(batch), false);
  for (Index b = 0; b < batch; ++b)
    for (Index i = 0; i < count && !showing[static_cast<size_t>(b)]; ++i) showing[static_cast<size_t>(b)] = shows(b, i);
  return showing;
}

}  // namespace

std::string batch_item_note(Step step, const Trace& trace, Index batch, const TextLookup& lookup) {
  const Index items = trace.dims.batch;
  if (items < 2 || batch < 0 || batch >= items) return "";
  std::vector<bool> showing;
  std::string key;
  if (step == Step::Masked && trace.mask) {
    const Tensor& mask = *trace.mask;  // (B, Lq, Lk), 0 = masked
    const Index per_item = mask.size() / items;
    showing = items_showing(items, per_item, [&](Index b, Index i) { return mask.data[b * per_item + i] == 0.0f; });
    key = "batch_note.no_masked_cell";
  } else if (step == Step::Dropped && trace.has(Stage::Dropped) && trace.has(Stage::Weights)) {
    // A dropped weight: nonzero before dropout, 0 after (B, h, Lq, Lk).
    const Tensor& before = trace.stage(Stage::Weights);
    const Tensor& after = trace.stage(Stage::Dropped);
    const Index per_item = before.size() / items;
    showing = items_showing(items, per_item, [&](Index b, Index i) {
      const Index at = b * per_item + i;
      return after.data[at] == 0.0f && before.data[at] != 0.0f;
    });
    key = "batch_note.no_dropped_weight";
  } else {
    return "";
  }
  if (showing[static_cast<size_t>(batch)]) return "";
  std::string others;
  Index count = 0;
  for (Index b = 0; b < items; ++b)
    if (showing[static_cast<size_t>(b)]) others += (count++ ? ", " : "") + std::to_string(b);
  if (count == 0) return "";
  std::string text = lookup(key);
  substitute(&text, {{"b", std::to_string(batch)}, {"items", others}, {"count", std::to_string(count)}});
  return text;
}

}  // namespace al
