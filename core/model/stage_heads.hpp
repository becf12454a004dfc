#pragma once
// Which matrices of a trace stage belong to which head. K, V and k_rot have the
// K/V heads (fewer than the query heads with grouped-query attention); the other
// per-head stages have one matrix per query head; x_pos, x_kv_pos, concat and
// output are one matrix per batch item. Views and explanations index a stage
// through these, never as b·heads + head for every stage (out of bounds with GQA).
#include "model/trace.hpp"

namespace al {

inline bool stage_is_per_head(Stage s) {
  return s != Stage::Concat && s != Stage::Output && s != Stage::XPos && s != Stage::XKvPos;
}
inline bool stage_is_kv(Stage s) { return s == Stage::K || s == Stage::V || s == Stage::KRot; }
// The rows of a stage are keys (not queries).
inline bool stage_rows_are_keys(Stage s) { return stage_is_kv(s) || s == Stage::XKvPos; }

// How many heads `s` has: dims.kv_heads for K/V stages, dims.heads for the
// other per-head stages, 1 for the whole-sequence stages.
inline Index stage_heads(const Dims& d, Stage s) {
  if (!stage_is_per_head(s)) return 1;
  return stage_is_kv(s) && d.kv_heads > 0 ? d.kv_heads : d.heads;
}

// The matrix index of (batch, head) in `s` ((B, H_s, R, C) or (B, R, C)).
inline Index stage_matrix(const Dims& d, Stage s, Index batch, Index head) {
  return stage_is_per_head(s) ? batch * stage_heads(d, s) + head : batch;
}

}  // namespace al
