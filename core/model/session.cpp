#include "model/session.hpp"

#include <cmath>

namespace al {

double ScaleSpec::multiplier(Index d_k) const {
  switch (mode) {
    case ScaleMode::SqrtDk: return 1.0 / std::sqrt(static_cast<double>(d_k));
    case ScaleMode::None: return 1.0;
    case ScaleMode::Custom: return factor;
  }
  return 1.0;
}

namespace {

// The input whose leading dimensions give B and Lq: x (projection) or q (direct).
const TensorPtr& query_side(const Session& s) {
  return s.config.mode == InputMode::Projection ? s.x : s.q;
}

// (L, d) means B = 1; (B, L, d) is batched. Anything else has no batch to read.
Index batch_of(const TensorPtr& t) {
  if (!t) return 0;
  if (t->rank() == 2) return 1;
  if (t->rank() == 3) return t->dim(0);
  return 0;
}

Index length_of(const TensorPtr& t) { return t && t->rank() >= 2 ? t->dim(-2) : 0; }

}  // namespace

Index Session::batch() const { return batch_of(query_side(*this)); }

Index Session::len_q() const { return length_of(query_side(*this)); }

Index Session::len_kv() const {
  if (config.mode == InputMode::Direct) return k ? length_of(k) : len_q();
  return config.attention == AttentionKind::Cross ? length_of(x_kv) : len_q();
}

}  // namespace al
