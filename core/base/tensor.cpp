#include "base/tensor.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
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

namespace {

void check_filled(const Tensor& t) {
  if (static_cast<Index>(t.data.size()) != shape_product(t.shape))
    throw std::invalid_argument("Tensor: " + std::to_string(t.data.size()) + " values do not fill shape " +
                                shape_string(t.shape));
}

// Whether a virtio balloon reports this machine's free memory to its host (feature bit 5), which then
// takes those pages back. A huge page comes from a free 2 MiB block, so there it costs a host fault
// per 4 KiB on first touch: 1.1-2.2 ms per MiB against 0.2-0.4 for 4 KiB pages faulted by two threads
// (docs/performance.md, issue 16).
bool host_takes_back_free_memory() {
  std::error_code error;
  for (const auto& device : std::filesystem::directory_iterator("/sys/bus/virtio/devices", error)) {
    std::string id, features;
    std::ifstream(device.path() / "device") >> id;
    std::ifstream(device.path() / "features") >> features;
    if (id == "0x0005" && features.size() > 5 && features[5] == '1') return true;
  }
  return false;
}

// Puts the whole 2 MiB pages inside [data, data + bytes) on transparent huge pages: 512 times fewer
// page faults to fill them and fewer TLB misses to read them. A refusal (THP off) keeps 4 KiB pages.
void advise_huge_pages(void* data, size_t bytes) {
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace

Tensor::Tensor(std::vector<Index> shape_, FloatBuffer data_) : shape(std::move(shape_)), data(std::move(data_)) {
  check_filled(*this);
}

Tensor::Tensor(std::vector<Index> shape_, const std::vector<float>& values)
    : shape(std::move(shape_)), data(values.begin(), values.end()) {
  check_filled(*this);
}

Tensor::Tensor(std::vector<Index> shape_, std::initializer_list<float> values)
    : shape(std::move(shape_)), data(values) {
  check_filled(*this);
}

Tensor Tensor::for_overwrite(std::vector<Index> shape_) {
  Tensor t;
  t.shape = std::move(shape_);
  const auto count = static_cast<size_t>(shape_product(t.shape));
  t.data.reserve(count);  // malloc maps a large block without touching its pages
  static const bool huge_pages = !host_takes_back_free_memory();
  if (huge_pages) advise_huge_pages(t.data.data(), count * sizeof(float));
  t.data.resize(count);  // writes nothing (FloatBuffer)
  return t;
}

bool fault_in_for_writing(float* begin, Index count) {
#ifdef MADV_POPULATE_WRITE
  if (count <= 0) return true;
  // The whole pages holding [begin, begin + count): each is mapped, as the range is.
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(begin + count) + page - 1) & ~(page - 1);
  return madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) == 0;
#else
  (void)begin;
  (void)count;
  return false;
#endif
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
