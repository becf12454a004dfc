#include "gl/matrix_view.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace al::gui {

namespace {
std::string pointer_key(const void* p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%p", p);
  return buffer;
}
}  // namespace

MatrixView matrix_of(const TensorPtr& tensor, Index k) {
  MatrixView view;
  if (!tensor || tensor->empty() || k < 0 || k >= tensor->matrices()) return view;
  view.owner = tensor;
  view.rows = tensor->rows();
  view.cols = tensor->cols();
  view.row_stride = view.cols;
  view.data = tensor->data.data() + k * view.rows * view.cols;
  view.key = pointer_key(tensor.get()) + "/" + std::to_string(k);
  return view;
}

void with_peaks(MatrixView& view, const TensorPtr& peaks, Index k, Index texels) {
  if (!peaks || !view.valid() || k < 0 || k >= peaks->matrices()) return;
  view.peaks = peaks->data.data() + k * peaks->rows() * peaks->cols();
  view.peak_texels = texels;
}

MatrixView column_slice(const MatrixView& view, Index first, Index count) {
  MatrixView slice = view;
  if (!view.valid() || first < 0 || count <= 0 || first + count > view.cols) return MatrixView{};
  slice.data = view.data + first;
  slice.cols = count;
  slice.peaks = nullptr;  // the peaks are of the whole matrix
  slice.key = view.key + "[:," + std::to_string(first) + "+" + std::to_string(count) + "]";
  return slice;
}

MatrixView block(const MatrixView& view, Index row, Index col, Index rows, Index cols) {
  if (!view.valid() || row < 0 || col < 0 || rows <= 0 || cols <= 0 || row + rows > view.rows ||
      col + cols > view.cols)
    return MatrixView{};
  if (rows == view.rows && cols == view.cols) return view;
  MatrixView part = view;
  part.data = view.data + row * view.row_stride + col;
  part.rows = rows;
  part.cols = cols;
  part.peaks = nullptr;
  part.key = view.key + "[" + std::to_string(row) + "+" + std::to_string(rows) + "," + std::to_string(col) + "+" +
             std::to_string(cols) + "]";
  return part;
}

MatrixView DerivedCache::head_average(const TensorPtr& tensor, Index batch, Index heads) {
  if (!tensor || tensor->rank() != 4 || heads <= 0) return MatrixView{};
  const std::string key = pointer_key(tensor.get()) + "/avg" + std::to_string(batch);
  auto [it, inserted] = averages_.try_emplace(key);
  Average& entry = it->second;
  const Index rows = tensor->rows(), cols = tensor->cols();
  if (inserted) {
    entry.source = tensor;
    entry.values = std::make_shared<std::vector<float>>(static_cast<size_t>(rows * cols), 0.0f);
    for (Index h = 0; h < heads; ++h) {
      const float* head = tensor->data.data() + (batch * heads + h) * rows * cols;
      for (Index i = 0; i < rows * cols; ++i) (*entry.values)[static_cast<size_t>(i)] += head[i];
    }
    for (float& v : *entry.values) v /= static_cast<float>(heads);
  }
  entry.used = true;
  MatrixView view;
  view.owner = entry.values;
  view.data = entry.values->data();
  view.rows = rows;
  view.cols = cols;
  view.row_stride = cols;
  view.key = key;
  return view;
}

ValueRange DerivedCache::symmetric_range(const TensorPtr& tensor, Index first, Index count,
                                         const MatrixView* mask) {
  const std::string key = pointer_key(tensor.get()) + "/sym" + std::to_string(first) + "+" +
                          std::to_string(count) + (mask ? "/" + mask->key : "");
  auto [it, inserted] = ranges_.try_emplace(key);
  if (inserted) {
    it->second.source = tensor;
    float largest = 0.0f;
    bool any_finite = false;
    for (Index k = first; k < first + count; ++k) {
      MatrixView m = matrix_of(tensor, k);
      for (Index r = 0; r < m.rows; ++r)
        for (Index c = 0; c < m.cols; ++c) {
          if (mask && mask->valid() && mask->at(r, c) < 0.5f) continue;
          const float v = m.at(r, c);
          if (!std::isfinite(v)) continue;
          largest = std::max(largest, std::fabs(v));
          any_finite = true;
        }
    }
    if (largest == 0.0f) largest = 1.0f;  // an all-zero matrix still gets a readable bar
    it->second.range = ValueRange{-largest, largest, any_finite};
  }
  it->second.used = true;
  return it->second.range;
}

ValueRange DerivedCache::probability_range(const TensorPtr& tensor, Index first, Index count, bool stretched) {
  const std::string key = pointer_key(tensor.get()) + "/prob" + std::to_string(first) + "+" +
                          std::to_string(count);
  auto [it, inserted] = ranges_.try_emplace(key);
  if (inserted) {  // kept as [0, the largest finite value] (-inf: none), whichever scale is asked for
    it->second.source = tensor;
    float largest = -std::numeric_limits<float>::infinity();
    for (Index k = first; k < first + count; ++k) {
      MatrixView m = matrix_of(tensor, k);
      for (Index r = 0; r < m.rows; ++r)
        for (Index c = 0; c < m.cols; ++c)
          if (std::isfinite(m.at(r, c))) largest = std::max(largest, m.at(r, c));
    }
    it->second.range = ValueRange{0.0f, largest};
  }
  it->second.used = true;
  return probability_range_from(it->second.range.high, stretched);
}

void DerivedCache::collect_unused() {
  auto sweep = [](auto& entries) {
    for (auto it = entries.begin(); it != entries.end();) {
      if (!it->second.used) {
        it = entries.erase(it);
      } else {
        it->second.used = false;
        ++it;
      }
    }
  };
  sweep(averages_);
  sweep(ranges_);
}

}  // namespace al::gui
