#pragma once
// A matrix with more cells along a side than its picture has texels is shown a block of cells
// per texel, and the texel holds the block's peak, so no peak and no NaN falls between pixels:
// the cell of largest magnitude, NaN if any cell is NaN, the first cell if none is finite (a
// block of -inf fill stays -inf). The app's heatmaps reduce what they show with these
// (app/gui/gl/gl_heatmap.cpp); the trace's summaries reduce every per-head stage ahead, on the
// worker (ComputeOptions::peak_texels).
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/tensor.hpp"

namespace al {

// Cells per texel along a side of `cells` cells drawn in at most `max_texels` texels.
inline Index peak_block(Index cells, Index max_texels) { return (cells + max_texels - 1) / max_texels; }
// Texels along that side.
inline Index peak_texels(Index cells, Index max_texels) {
  const Index block = peak_block(cells, max_texels);
  return (cells + block - 1) / block;
}

// Folds the next cell `b` into the peak `a` chosen so far, keeping `a` on a tie. Branch-free,
// so the fold of a row compiles to vector selects (per-cell branches made the reduction of 9
// heatmaps at n = 1024 the largest single cost of a new trace's frame).
inline float pick_peak(float a, float b) {
  const float fa = std::fabs(a), fb = std::fabs(b);
  const bool a_nan = a != a, b_nan = b != b;
  const bool a_finite = fa <= std::numeric_limits<float>::max(), b_finite = fb <= std::numeric_limits<float>::max();
  const bool take_b = !a_nan && (b_nan || (b_finite && (!a_finite || fb > fa)));
  return take_b ? b : a;
}

// A block's rows are folded cell by cell (its first row copied into `folded`, each next one
// folded in), then each `block_cols` columns of that one row into a texel: among equal
// magnitudes the first down the block's columns wins.
inline void fold_peak_row(float* folded, const float* row, Index n) {
  for (Index c = 0; c < n; ++c) folded[c] = pick_peak(folded[c], row[c]);
}
inline void peak_texel_row(const float* folded, Index n, Index block_cols, float* texels) {
  for (Index t = 0; t * block_cols < n; ++t) {
    const float* block = folded + t * block_cols;
    float v = block[0];
    for (Index k = 1; k < std::min(block_cols, n - t * block_cols); ++k) v = pick_peak(v, block[k]);
    texels[t] = v;
  }
}

}  // namespace al
