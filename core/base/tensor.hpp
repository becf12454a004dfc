#pragma once
// A dense float32 tensor in C order (row-major), with a 2-D matrix view of its
// trailing two dimensions. Everything the core stores is one of these.
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace al {

using Index = std::int64_t;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

// std::allocator, except that resize() leaves new floats uninitialised instead of writing zeros:
// a stage is written whole by the kernels, and their threads, not one zero-filling thread, then
// fault its fresh pages in.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  // Cache-line aligned: malloc puts a large block 16 bytes past a page boundary, so every
  // other 32-byte packet of a row would straddle two cache lines. Freed with the unsized
  // aligned delete: clang builds without sized deallocation.
  static constexpr std::align_val_t kAlignment{64};
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
};
using FloatBuffer = std::vector<float, UninitialisedAllocator<float>>;

struct Tensor {
  std::vector<Index> shape;  // e.g. {B, h, L, d_k}
  FloatBuffer data;          // C order, size == product(shape)

  Tensor() = default;
  explicit Tensor(std::vector<Index> shape_, float fill = 0.0f);
  Tensor(std::vector<Index> shape_, FloatBuffer data_);
  Tensor(std::vector<Index> shape_, const std::vector<float>& values);
  Tensor(std::vector<Index> shape_, std::initializer_list<float> values);
  // For a tensor the caller overwrites whole before reading it (the stages of
  // a trace): its values are unspecified, and its pages are not touched until
  // the caller writes them.
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

// Faults in the pages of [begin, begin + count) that are not resident yet, in one system call
// (MADV_POPULATE_WRITE) instead of one page fault per 4 KiB as they are first written: a quarter
// less time in this VM (docs/performance.md). For fresh memory about to be written whole (a
// block of a stage from for_overwrite); on resident pages it still walks them (0.03 ms/MiB).
// False where the kernel lacks it (before Linux 5.14): the writes fault the pages in as before.
bool fault_in_for_writing(float* begin, Index count);

// The same floats in the same order, whichever allocator holds them.
inline bool operator==(const FloatBuffer& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}
inline bool operator==(const std::vector<float>& a, const FloatBuffer& b) { return b == a; }

// "2x3x4" — used in every error message that names a shape.
std::string shape_string(const std::vector<Index>& shape);
Index shape_product(const std::vector<Index>& shape);

inline TensorPtr make_tensor(Tensor t) { return std::make_shared<const Tensor>(std::move(t)); }

}  // namespace al
