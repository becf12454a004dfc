#pragma once
// A 2-D window onto data the app shows (a trace stage of one batch item and
// head, a session input, a head slice of a weight matrix, an average over
// heads), plus a cache for what the views derive from their data (averages,
// colour ranges) so an idle redraw does not rescan n x n matrices.
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace al::gui {

struct MatrixView {
  std::shared_ptr<const void> owner;  // keeps `data` alive
  const float* data = nullptr;
  Index rows = 0, cols = 0, row_stride = 0;
  std::string key;  // identifies the data: same key, same values
  // The same matrix already reduced to peaks for TextureCache::screen at `peak_texels` texels a
  // side (numerics/block_peaks.hpp; from the trace's summary, valid while the trace is), or null.
  const float* peaks = nullptr;
  Index peak_texels = 0;

  bool valid() const { return data != nullptr && rows > 0 && cols > 0; }
  float at(Index r, Index c) const { return data[r * row_stride + c]; }
};

// The k-th trailing matrix of a tensor (a 1-D tensor is one row).
MatrixView matrix_of(const TensorPtr& tensor, Index k = 0);
// Points `view` (the k-th matrix of a stage, or of its head mean) at its peaks in `peaks`
// (StageSummary::peaks or mean_peaks, reduced for `texels`); nothing when there are none.
void with_peaks(MatrixView& view, const TensorPtr& peaks, Index k, Index texels);
// Columns [first, first + count) of a view (a head's slice of a weight matrix).
MatrixView column_slice(const MatrixView& view, Index first, Index count);
// Rows [row, row + rows) x columns [col, col + cols) of a view (the part of a
// zoomed heatmap on screen); the view itself when that is all of it.
MatrixView block(const MatrixView& view, Index row, Index col, Index rows, Index cols);

struct ValueRange {
  float low = 0.0f, high = 1.0f;
  bool any_finite = true;  // false: no finite value to scale, [low, high] is only a placeholder
};

// The weights' colour range from the largest finite weight shown: [0, max(1, largest)], as weights are
// probabilities and dropout scales them up; or, `stretched`, [0, largest], so that heads whose weights
// are all small (about 1/n over n keys) still show their pattern. [0, 1] when no weight is above 0.
// `largest` is -inf when there is no finite value.
inline ValueRange probability_range_from(float largest, bool stretched) {
  const bool any_finite = largest > -std::numeric_limits<float>::infinity();
  if (stretched) return ValueRange{0.0f, largest > 0.0f ? largest : 1.0f, any_finite};
  return ValueRange{0.0f, largest > 1.0f ? largest : 1.0f, any_finite};
}

// Values derived from views, kept while they are on screen.
class DerivedCache {
 public:
  // Mean over the heads of batch item `batch` of a (B, h, R, C) tensor.
  MatrixView head_average(const TensorPtr& tensor, Index batch, Index heads);
  // Symmetric range [-m, m] of the finite values of `count` consecutive matrices
  // starting at matrix `first`, skipping cells where `mask` (R x C, 0 = masked)
  // is 0, so a fill of -1e9 does not wash out the colours.
  ValueRange symmetric_range(const TensorPtr& tensor, Index first, Index count,
                             const MatrixView* mask);
  // probability_range_from the largest finite value of `count` consecutive matrices from `first`.
  ValueRange probability_range(const TensorPtr& tensor, Index first, Index count, bool stretched);
  void collect_unused();

 private:
  struct Average {
    TensorPtr source;
    std::shared_ptr<std::vector<float>> values;
    bool used = true;
  };
  struct Range {
    TensorPtr source;
    ValueRange range;
    bool used = true;
  };
  std::map<std::string, Average> averages_;
  std::map<std::string, Range> ranges_;
};

}  // namespace al::gui
