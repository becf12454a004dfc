#include "base/tensor.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <stdexcept>

namespace al {

Index shape_product(const std::vector<Index>& shape) {
  Index n = 1;
  for (Index d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<Index>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(shape[i]);
  }
  return s;
}

Tensor::Tensor(std::vector<Index> shape_, float fill)
    : shape(std::move(shape_)), data(static_cast<size_t>(shape_product(shape)), fill) {}

Tensor::Tensor(std::vector<Index> shape_, std::vector<float> data_)
    : shape(std::move(shape_)), data(std::move(data_)) {
  if (static_cast<Index>(data.size()) != shape_product(shape))
    throw std::invalid_argument("Tensor: " + std::to_string(data.size()) +
                                " values do not fill shape " + shape_string(shape));
}

Tensor Tensor::for_overwrite(std::vector<Index> shape_) {
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  Tensor t;
  t.shape = std::move(shape_);
  const auto count = static_cast<size_t>(shape_product(t.shape));
  t.data.reserve(count);  // malloc maps a large block without touching its pages
  const auto begin = reinterpret_cast<std::uintptr_t>(t.data.data());
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + count * sizeof(float)) & ~(kHugePage - 1);
  // Only whole 2 MiB pages inside the block; a refusal (THP off) just keeps 4 KiB pages.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  t.data.resize(count);
  return t;
}

MatrixMap Tensor::matrix(Index k) {
  return MatrixMap(data.data() + k * rows() * cols(), rows(), cols());
}

ConstMatrixMap Tensor::matrix(Index k) const {
  return ConstMatrixMap(data.data() + k * rows() * cols(), rows(), cols());
}

Index Tensor::offset(std::initializer_list<Index> idx) const {
  if (static_cast<Index>(idx.size()) != rank())
    throw std::out_of_range("Tensor index of rank " + std::to_string(idx.size()) +
                            " into shape " + shape_string(shape));
  Index flat = 0;
  size_t axis = 0;
  for (Index i : idx) {
    if (i < 0 || i >= shape[axis])
      throw std::out_of_range("Tensor index out of range for shape " + shape_string(shape));
    flat = flat * shape[axis] + i;
    ++axis;
  }
  return flat;
}

float& Tensor::at(std::initializer_list<Index> idx) { return data[static_cast<size_t>(offset(idx))]; }
float Tensor::at(std::initializer_list<Index> idx) const { return data[static_cast<size_t>(offset(idx))]; }

}  // namespace al
