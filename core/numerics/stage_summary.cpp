#include "numerics/stage_summary.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "base/thread_team.hpp"
#include "numerics/block_peaks.hpp"
#include "numerics/kernel_dispatch.hpp"

namespace al::detail {

namespace {

// Packets on unaligned loads, as in the row kernels (numerics/row_kernels.hpp).
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr Index kLanes = Eigen::internal::packet_traits<float>::size;

// One matrix's running maxima, lane by lane: of |value| and of value.
struct Maxima {
  Packet abs = Eigen::internal::pset1<Packet>(0.0f);
  Packet value = Eigen::internal::pset1<Packet>(-std::numeric_limits<float>::infinity());

  // Folds in x where `counted` is set. Callers leave non-finite and masked lanes out of
  // `counted`, so no NaN reaches pmax.
  void fold(const Packet& x, const Packet& counted) {
    using namespace Eigen::internal;
    abs = pmax(abs, pand(counted, pabs(x)));
    value = pmax(value, pselect(counted, x, pset1<Packet>(-std::numeric_limits<float>::infinity())));
  }
};

// Columns [j, j + Packets · kLanes) of one row of every head (head h's row at row + h ·
// head_stride): their sum over heads, in head order from 0, divided by the number of heads into
// `mean`, and each head's finite values not masked by `attend` folded into its maxima.
template <int Packets>
EIGEN_STRONG_INLINE void summarize_columns(const float* row, Index head_stride, Index heads, const float* attend,
                                           Index j, float* mean, Maxima* maxima) {
  using namespace Eigen::internal;
  const Packet infinity = pset1<Packet>(std::numeric_limits<float>::infinity()), zero = pset1<Packet>(0.0f);
  Packet masked[Packets], sum[Packets];  // masked: all bits set where attend is 0
  for (int q = 0; q < Packets; ++q) {
    masked[q] = attend ? pcmp_eq(ploadu<Packet>(attend + j + q * kLanes), zero) : zero;
    sum[q] = zero;
  }
  for (Index h = 0; h < heads; ++h) {
    Maxima head = maxima[h];
    for (int q = 0; q < Packets; ++q) {
      const Packet x = ploadu<Packet>(row + h * head_stride + j + q * kLanes);
      sum[q] = padd(sum[q], x);
      head.fold(x, pandnot(pcmp_lt(pabs(x), infinity), masked[q]));  // finite (not NaN) and attended
    }
    maxima[h] = head;
  }
  const Packet divisor = pset1<Packet>(static_cast<float>(heads));
  for (int q = 0; q < Packets; ++q) pstoreu(mean + j + q * kLanes, pdiv(sum[q], divisor));
}

// One row of the head mean, `n` columns, and the heads' maxima over that row (see summarize_columns).
void summarize_heads_row(const float* row, Index head_stride, Index heads, const float* attend, Index n, float* mean,
                         Maxima* maxima) {
  using namespace Eigen::internal;
  constexpr int kChunk = 4;  // packets per step: each head's maxima loaded once for four
  Index j = 0;
  for (; j + kChunk * kLanes <= n; j += kChunk * kLanes)
    summarize_columns<kChunk>(row, head_stride, heads, attend, j, mean, maxima);
  for (; j + kLanes <= n; j += kLanes) summarize_columns<1>(row, head_stride, heads, attend, j, mean, maxima);
  for (; j < n; ++j) {
    float sum = 0.0f;
    for (Index h = 0; h < heads; ++h) {
      const float v = row[h * head_stride + j];
      sum += v;
      if (!std::isfinite(v) || (attend && attend[j] == 0.0f)) continue;
      maxima[h].abs = pmax(maxima[h].abs, pset1<Packet>(std::fabs(v)));
      maxima[h].value = pmax(maxima[h].value, pset1<Packet>(v));
    }
    mean[j] = sum / static_cast<float>(heads);
  }
}

// pick_peak (numerics/block_peaks.hpp) lane by lane: the same choice, in selects.
EIGEN_STRONG_INLINE Packet pick_peaks(const Packet& a, const Packet& b) {
  using namespace Eigen::internal;
  const Packet largest = pset1<Packet>(std::numeric_limits<float>::max()), all = ptrue(a);
  const Packet fa = pabs(a), fb = pabs(b);
  const Packet a_number = pcmp_eq(a, a), b_nan = pandnot(all, pcmp_eq(b, b));
  const Packet b_finite = pcmp_le(fb, largest), a_not_finite = pandnot(all, pcmp_le(fa, largest));
  const Packet take_b = pand(a_number, por(b_nan, pand(b_finite, por(a_not_finite, pcmp_lt(fa, fb)))));
  return pselect(take_b, b, a);
}

// fold_peak_row in packets.
void fold_peak_packets(float* folded, const float* row, Index n) {
  using namespace Eigen::internal;
  Index c = 0;
  for (; c + kLanes <= n; c += kLanes) pstoreu(folded + c, pick_peaks(ploadu<Packet>(folded + c), ploadu<Packet>(row + c)));
  fold_peak_row(folded + c, row + c, n - c);
}

// peak_texel_row in packets: kLanes texels at a time, each packet of the k-th cells of their
// blocks gathered `block_cols` apart, folded in the same order; the texels left, one by one.
void peak_texel_packets(const float* folded, Index n, Index block_cols, float* texels) {
  using namespace Eigen::internal;
  if (block_cols == 1) {
    std::copy(folded, folded + n, texels);
    return;
  }
  const Index whole = n / block_cols;  // texels of whole blocks
  Index t = 0;
  for (; t + kLanes <= whole; t += kLanes) {
    const float* first = folded + t * block_cols;
    Packet peak = pgather<float, Packet>(first, block_cols);
    for (Index k = 1; k < block_cols; ++k) peak = pick_peaks(peak, pgather<float, Packet>(first + k, block_cols));
    pstoreu(texels + t, peak);
  }
  peak_texel_row(folded + t * block_cols, n - t * block_cols, block_cols, texels + t);
}

// Where a stage's peaks go, and each thread's rows being folded (`heads` + 1 of C: the heads', then the mean's).
struct PeakTarget {
  float* heads = nullptr;  // (B, h, Tr, Tc)
  float* mean = nullptr;   // (B, Tr, Tc)
  Index block_rows = 1, block_cols = 1, texel_rows = 0, texel_cols = 0;
};

// Folds row r of batch item b, of every head (`row`, head_stride apart) and of the mean, into
// its block row; the block row's last row writes the texels. Rows come in order from a block's first.
void fold_peaks(const PeakTarget& target, const float* row, Index head_stride, Index heads, const float* mean_row,
                Index b, Index r, Index rows, Index cols, std::vector<float>& folded) {
  const Index in_block = r % target.block_rows;
  const bool last = in_block == target.block_rows - 1 || r == rows - 1;
  const Index t = r / target.block_rows;
  for (Index h = 0; h <= heads; ++h) {
    const float* source = h < heads ? row + h * head_stride : mean_row;
    float* rows_folded = folded.data() + h * cols;
    if (in_block == 0) std::copy(source, source + cols, rows_folded);
    else fold_peak_packets(rows_folded, source, cols);
    if (!last) continue;
    float* texels = h < heads ? target.heads + ((b * heads + h) * target.texel_rows + t) * target.texel_cols
                              : target.mean + (b * target.texel_rows + t) * target.texel_cols;
    peak_texel_packets(rows_folded, cols, target.block_cols, texels);
  }
}

}  // namespace

StageSummary summarize_stage(const Tensor& stage, const float* attend, std::shared_ptr<Tensor> head_mean,
                             Index max_texels) {
  AL_KERNEL_DISPATCH(summary, summarize_stage, stage, attend, head_mean, max_texels);
  using namespace Eigen::internal;
  const Index batch = stage.dim(0), heads = stage.dim(1), rows = stage.rows(), cols = stage.cols();
  float* const mean = head_mean->data.data();
  StageSummary summary;
  summary.max_abs.assign(static_cast<size_t>(batch * heads), 0.0f);
  summary.max_value.assign(static_cast<size_t>(batch * heads), -std::numeric_limits<float>::infinity());

  PeakTarget peaks;
  std::shared_ptr<Tensor> head_peaks, mean_peaks;
  const bool reduce = max_texels > 0 && (rows > max_texels || cols > max_texels);
  if (reduce) {
    peaks.block_rows = peak_block(rows, max_texels);
    peaks.block_cols = peak_block(cols, max_texels);
    peaks.texel_rows = peak_texels(rows, max_texels);
    peaks.texel_cols = peak_texels(cols, max_texels);
    head_peaks = std::make_shared<Tensor>(Tensor::for_overwrite({batch, heads, peaks.texel_rows, peaks.texel_cols}));
    mean_peaks = std::make_shared<Tensor>(Tensor::for_overwrite({batch, peaks.texel_rows, peaks.texel_cols}));
    peaks.heads = head_peaks->data.data();
    peaks.mean = mean_peaks->data.data();
  }
  // About 32 rows a task, whole blocks of peaks.
  const Index task_rows = (32 + peaks.block_rows - 1) / peaks.block_rows * peaks.block_rows;
  const Index blocks = (rows + task_rows - 1) / task_rows;
  std::mutex merge;
  // Each row of the mean is summed over the heads in registers, the heads' rows read side by
  // side: the stage is read once and the mean written once. Summing head after head into a
  // block of the mean in L2 read and wrote that block again for every head, and took 2.2 times as
  // long as reading the stage (docs/performance.md, thirteenth pass). The peaks fold the same
  // rows again from L2.
  parallel_for(batch * blocks, static_cast<double>(stage.size()) > kParallelFlops, [&](Index task, bool) {
    const Index b = task / blocks, first = (task % blocks) * task_rows;
    const Index count = std::min(task_rows, rows - first);
    std::vector<Maxima> maxima(static_cast<size_t>(heads));  // per head of this block
    thread_local std::vector<float> folded;
    if (reduce) folded.resize(static_cast<size_t>((heads + 1) * cols));
    for (Index r = first; r < first + count; ++r) {
      const float* row = stage.data.data() + (b * heads * rows + r) * cols;
      float* mean_row = mean + (b * rows + r) * cols;
      summarize_heads_row(row, rows * cols, heads, attend ? attend + (b * rows + r) * cols : nullptr, cols, mean_row,
                          maxima.data());
      if (reduce) fold_peaks(peaks, row, rows * cols, heads, mean_row, b, r, rows, cols, folded);
    }
    std::lock_guard<std::mutex> lock(merge);
    for (Index h = 0; h < heads; ++h) {
      const auto k = static_cast<size_t>(b * heads + h);
      const Maxima& m = maxima[static_cast<size_t>(h)];
      summary.max_abs[k] = std::max(summary.max_abs[k], predux_max(m.abs));
      summary.max_value[k] = std::max(summary.max_value[k], predux_max(m.value));
    }
  });
  summary.head_mean = std::move(head_mean);
  summary.peaks = std::move(head_peaks);
  summary.mean_peaks = std::move(mean_peaks);
  summary.peak_texels = reduce ? max_texels : 0;
  return summary;
}

}  // namespace al::detail
