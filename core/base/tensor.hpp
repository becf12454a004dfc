#pragma once
// A dense float32 tensor in C order (row-major), with a 2-D matrix view of its
// trailing two dimensions. Everything the core stores is one of these.
#include <Eigen/Core>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace al {

using Index = std::int64_t;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

struct Tensor {
  std::vector<Index> shape;  // e.g. {B, h, L, d_k}
  std::vector<float> data;   // C order, size == product(shape)

  Tensor() = default;
  explicit Tensor(std::vector<Index> shape_, float fill = 0.0f);
  Tensor(std::vector<Index> shape_, std::vector<float> data_);
  // For a tensor the caller overwrites whole before reading it (the stages of
  // a trace). Its values start at 0 (std::vector value-initialises); a large
  // one is put on transparent huge pages first, so filling it takes 512 times
  // fewer page faults and reading it fewer TLB misses.
  static Tensor for_overwrite(std::vector<Index> shape_);

  Index rank() const { return static_cast<Index>(shape.size()); }
  Index size() const { return static_cast<Index>(data.size()); }
  Index dim(Index i) const { return shape[static_cast<size_t>(i < 0 ? rank() + i : i)]; }
  bool empty() const { return data.empty(); }
  Index rows() const { return rank() >= 2 ? dim(-2) : 1; }
  Index cols() const { return rank() >= 1 ? dim(-1) : 1; }
  // How many (rows x cols) matrices the leading dimensions hold.
  Index matrices() const { return cols() * rows() == 0 ? 0 : size() / (rows() * cols()); }

  // The k-th trailing matrix, k in [0, matrices()): for (B,h,L,d) k = b*h + head.
  MatrixMap matrix(Index k = 0);
  ConstMatrixMap matrix(Index k = 0) const;

  float& at(std::initializer_list<Index> idx);
  float at(std::initializer_list<Index> idx) const;
  Index offset(std::initializer_list<Index> idx) const;

  bool operator==(const Tensor& o) const { return shape == o.shape && data == o.data; }
};

using TensorPtr = std::shared_ptr<const Tensor>;

// "2x3x4" — used in every error message that names a shape.
std::string shape_string(const std::vector<Index>& shape);
Index shape_product(const std::vector<Index>& shape);

inline TensorPtr make_tensor(Tensor t) { return std::make_shared<const Tensor>(std::move(t)); }

}  // namespace al
