// Over 600 lines: the panel GEMM is compiled once in each kernel copy (core/CMakeLists.txt,
// wide_kernel_sources), and its packing, tiles, Q·Kᵀ sweep and packed-weight cache share one
// set of tile constants and packet types.
#include "numerics/panel_gemm.hpp"

#include <Eigen/Core>

#ifdef __SSE__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "base/thread_team.hpp"

namespace al::detail {

namespace {

#ifdef __AVX512VL__
// In the AVX-512 copy of the kernels (core/CMakeLists.txt) whole panels go through 16-lane tiles
// (WidePacket, below); eight-lane packets take a partial last panel and the rows a sweep's wide
// tile leaves, in AVX-512VL's 32 registers two panels wide. Every element is the AVX2 copy's
// chain, bit for bit.
using Packet = Eigen::internal::Packet8f;
constexpr Index kLanes = 8;
constexpr int kTilePanels = 2;
#else
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr Index kLanes = Eigen::internal::packet_traits<float>::size;
constexpr int kTilePanels = 1;
#endif
constexpr int kPanelPackets = static_cast<int>(kPanelWidth / kLanes);
// Rows per register tile: 12 accumulators a panel (6 × 2 AVX2 packets, 3 × 4 SSE ones); with a
// broadcast of A and the panels' packets, one panel fills 15 of 16 registers, two 29 of 32.
constexpr int kTileRows = 12 / kPanelPackets;
// Rows of B per pass over C: a panel's slice (32 KiB) stays in L1 while the tiles of A go by.
// Two panels' slice, 64 KiB, is read from L2, and still faster than a pass of half the depth,
// whose C is stored and reloaded once more (a (2048, 512) · (512, 512) projection, best of 20
// calls, 5 alternating runs: 167–208 against 146–171 GFLOP/s, AMD EPYC Zen 4). The AVX-512
// copy's 16-lane tiles of four panels read 128 KiB a block from L2 the same way (24 accumulators,
// four panel packets and a broadcast: 29 of 32 registers); the depth block was not measured
// again for them.
constexpr Index kDepthBlock = 512;

static_assert(kPanelWidth % kLanes == 0, "a panel is whole packets");

// A packet of Q·Kᵀ's scores. With `stream` it is stored past the caches, without reading its line
// first: in the sweep the per-head pass does not read the scores again (the softmax reads scaled),
// so they take no room from K's panels in L2 (docs/performance.md, twenty-second pass); `to` is
// then aligned.
template <typename P>
EIGEN_STRONG_INLINE void store_scores(float* to, const P& value, bool stream) {
  if (stream) {
#if defined(__AVX512F__)
    if constexpr (sizeof(P) == 64) return _mm512_stream_ps(to, value);
#endif
#if defined(__AVX__)
    if constexpr (sizeof(P) == 32) return _mm256_stream_ps(to, value);
#endif
#if defined(__SSE__)
    if constexpr (sizeof(P) == 16) return _mm_stream_ps(to, value);
#endif
  }
  Eigen::internal::pstoreu(to, value);
}

// A register tile's accumulators: Rows rows of C by Panels adjacent panels' columns.
template <int Rows, int Panels>
using Tile = Packet[Rows][Panels * kPanelPackets];

// acc[i] (+)= A[i, 0:depth] · the Panels panels from `panel` on, panel_stride floats apart, their
// rows ldp apart: one fused multiply-add chain per element, over p in order.
template <int Rows, int Panels>
EIGEN_STRONG_INLINE void accumulate_tile(Tile<Rows, Panels>& acc, const float* a, Index lda, const float* panel,
                                         Index panel_stride, Index ldp, Index depth) {
  using namespace Eigen::internal;
  constexpr int kPackets = Panels * kPanelPackets;
  for (Index p = 0; p < depth; ++p) {
    Packet column[kPackets];
    for (int q = 0; q < kPackets; ++q)
      column[q] = ploadu<Packet>(panel + q / kPanelPackets * panel_stride + p * ldp + q % kPanelPackets * kLanes);
    for (int i = 0; i < Rows; ++i) {
      const Packet x = pset1<Packet>(a[i * lda + p]);
      for (int q = 0; q < kPackets; ++q) acc[i][q] = pmadd(x, column[q], acc[i][q]);
    }
  }
}

// C[0:Rows, 0:cols] = acc; `cols` is short of the tile's width only in a one-panel tile.
template <int Rows, int Panels>
EIGEN_STRONG_INLINE void store_tile(const Tile<Rows, Panels>& acc, float* c, Index ldc, Index cols) {
  using namespace Eigen::internal;
  constexpr int kPackets = Panels * kPanelPackets;
  for (int i = 0; i < Rows; ++i) {
    if (cols == Panels * kPanelWidth) {
      for (int q = 0; q < kPackets; ++q) pstoreu(c + i * ldc + q * kLanes, acc[i][q]);
    } else {
      float partial[Panels * kPanelWidth];
      for (int q = 0; q < kPackets; ++q) pstoreu(partial + q * kLanes, acc[i][q]);
      std::copy(partial, partial + cols, c + i * ldc);
    }
  }
}

// C[0:Rows, 0:cols] (+)= A[0:Rows, 0:depth] · the tile's panels: C is started from zero on the
// first depth block and continued from its stored value on the next ones, so each element
// stays one chain over p in order.
template <int Rows, int Panels>
void multiply_tile(const float* a, Index lda, const float* panel, Index panel_stride, Index ldp, Index depth, float* c,
                   Index ldc, Index cols, bool first_block) {
  using namespace Eigen::internal;
  constexpr int kPackets = Panels * kPanelPackets;
  Tile<Rows, Panels> acc;
  for (int i = 0; i < Rows; ++i) {
    const float* row = c + i * ldc;
    float partial[Panels * kPanelWidth];
    if (!first_block && cols < Panels * kPanelWidth) {  // the last panel: zero past C's columns
      std::fill(std::copy(row, row + cols, partial), partial + Panels * kPanelWidth, 0.0f);
      row = partial;
    }
    for (int q = 0; q < kPackets; ++q)
      acc[i][q] = first_block ? pset1<Packet>(0.0f) : ploadu<Packet>(row + q * kLanes);
  }
  accumulate_tile<Rows, Panels>(acc, a, lda, panel, panel_stride, ldp, depth);
  store_tile<Rows, Panels>(acc, c, ldc, cols);
}

// The tile of multiply_panels_scaled: C[0:Rows, 0:cols] = A · the tile's panels over the whole
// depth and, unless `scaled` is null, scaled = C · scale and max[i] = pmax(max[i], scaled row i)
// over the `cols` real columns.
template <int Rows, int Panels>
void multiply_tile_scaled(const float* a, Index lda, const float* panel, Index panel_stride, Index ldp, Index depth,
                          float scale, float* c, float* scaled, Index ldc, Index cols, Packet* max, bool stream) {
  using namespace Eigen::internal;
  constexpr int kPackets = Panels * kPanelPackets;
  Tile<Rows, Panels> acc;
  for (int i = 0; i < Rows; ++i)
    for (int q = 0; q < kPackets; ++q) acc[i][q] = pset1<Packet>(0.0f);
  accumulate_tile<Rows, Panels>(acc, a, lda, panel, panel_stride, ldp, depth);
  if (!scaled) return store_tile<Rows, Panels>(acc, c, ldc, cols);
  const Packet factor = pset1<Packet>(scale);
  if (cols == Panels * kPanelWidth) {
    // The whole tile's scores first, then its scaled rows: interleaved, the two stores to each
    // row took the sweep from 62-64 to 46-55 GFLOP/s at 4096 keys on Zen 3 (docs/performance.md,
    // twenty-sixth pass).
    for (int i = 0; i < Rows; ++i)
      for (int q = 0; q < kPackets; ++q) store_scores(c + i * ldc + q * kLanes, acc[i][q], stream);
    for (int i = 0; i < Rows; ++i)
      for (int q = 0; q < kPackets; ++q) {
        const Packet v = pmul(acc[i][q], factor);
        pstoreu(scaled + i * ldc + q * kLanes, v);
        max[i] = pmax(max[i], v);
      }
    return;
  }
  for (int i = 0; i < Rows; ++i) {  // the last panel: its padding columns are left out of the max
    float partial[Panels * kPanelWidth];
    for (int q = 0; q < kPackets; ++q) pstoreu(partial + q * kLanes, acc[i][q]);
    std::copy(partial, partial + cols, c + i * ldc);
    for (int q = 0; q < kPackets; ++q) pstoreu(partial + q * kLanes, pmul(acc[i][q], factor));
    std::copy(partial, partial + cols, scaled + i * ldc);
    std::fill(partial + cols, partial + Panels * kPanelWidth, -std::numeric_limits<float>::infinity());
    for (int q = 0; q < kPackets; ++q) max[i] = pmax(max[i], ploadu<Packet>(partial + q * kLanes));
  }
}

#ifdef __AVX512VL__
// 16-lane tiles in the AVX-512 copy: a panel's row is one packet. Each lane runs the 8-lane
// tiles' chain, so the bits are theirs. Stand-alone, one thread, GFLOP/s against the 6 × 2 tiles
// of 8 lanes (docs/performance.md, issue 16's twenty-first pass): a projection's (2046, 512) ·
// (512, 512) 118-119 with tiles of 6 rows × 3 panels against 97-104; Q·Kᵀ's shape (d_k 64,
// 1024-4096 keys), whose short depth makes a tile's set-up and stores weigh more, 98-108 with
// 4 rows × 3 panels against 82-100 on AMD Zen 4; on an Intel Xeon (two 512-bit FMA ports) 6 rows ×
// 4 panels 122-128 against 113-117 (thirtieth pass).
using WidePacket = Eigen::internal::Packet16f;
static_assert(kPanelWidth == 16, "a wide packet is a panel's row");
template <int Rows, int Panels>
using WideTile = WidePacket[Rows][Panels];

// accumulate_tile's wide form: acc[i][q] (+)= A[i, 0:depth] · panel q.
template <int Rows, int Panels>
EIGEN_STRONG_INLINE void accumulate_wide_tile(WideTile<Rows, Panels>& acc, const float* a, Index lda,
                                              const float* panel, Index panel_stride, Index ldp, Index depth) {
  using namespace Eigen::internal;
  for (Index p = 0; p < depth; ++p) {
    WidePacket column[Panels];
    for (int q = 0; q < Panels; ++q) column[q] = ploadu<WidePacket>(panel + q * panel_stride + p * ldp);
    for (int i = 0; i < Rows; ++i) {
      const WidePacket x = pset1<WidePacket>(a[i * lda + p]);
      for (int q = 0; q < Panels; ++q) acc[i][q] = pmadd(x, column[q], acc[i][q]);
    }
  }
}

// multiply_tile's wide form, every panel whole: C[0:Rows, 0:16·Panels] (+)= A · the panels.
template <int Rows, int Panels>
void multiply_wide_tile(const float* a, Index lda, const float* panel, Index panel_stride, Index ldp, Index depth,
                        float* c, Index ldc, bool first_block) {
  using namespace Eigen::internal;
  WideTile<Rows, Panels> acc;
  for (int i = 0; i < Rows; ++i)
    for (int q = 0; q < Panels; ++q)
      acc[i][q] = first_block ? pset1<WidePacket>(0.0f) : ploadu<WidePacket>(c + i * ldc + q * kPanelWidth);
  accumulate_wide_tile<Rows, Panels>(acc, a, lda, panel, panel_stride, ldp, depth);
  for (int i = 0; i < Rows; ++i)
    for (int q = 0; q < Panels; ++q) pstoreu(c + i * ldc + q * kPanelWidth, acc[i][q]);
}

// multiply_wide_tile with `rows` ≤ kTileRows.
template <int Panels, int Rows = kTileRows>
void multiply_rows_wide_tile(int rows, const float* a, Index lda, const float* panel, Index panel_stride, Index ldp,
                             Index depth, float* c, Index ldc, bool first_block) {
  if constexpr (Rows > 0) {
    if (rows == Rows)
      return multiply_wide_tile<Rows, Panels>(a, lda, panel, panel_stride, ldp, depth, c, ldc, first_block);
    multiply_rows_wide_tile<Panels, Rows - 1>(rows, a, lda, panel, panel_stride, ldp, depth, c, ldc, first_block);
  }
}

// Whole panels in the wide tile at column x of C (n columns, cut into blocks of block_width):
// 4, 3 or 2 where they fit in one block, else 0 (the 8-lane tiles take it). Four make a head's
// 64 columns (the projections, ·V) one tile: with three, its fourth panel went to the 8-lane
// tiles, at half an Intel core's 512-bit rate (docs/performance.md, issue 16's twenty-eighth pass).
int wide_panels_at(Index x, Index n, Index block_width) {
  for (int panels : {4, 3, 2})
    if (x + panels * kPanelWidth <= n && x % block_width + panels * kPanelWidth <= block_width) return panels;
  return 0;
}

// Q·Kᵀ's sweep tile: 6 rows × 4 panels (a 12-row step is two tiles; 64 keys, so 2048 keys
// leave no panel to the 8-lane tiles), from zero over the whole depth; with `scaled`, also
// scaled = C · scale and max[i] = pmax(max[i], …) over 8-lane halves in column order, as the
// 8-lane tiles take it, so the max is theirs too, NaN included. Its 24 accumulators share each
// broadcast of Q over four panels of K, and a 12-row step sweeps K from L2 twice, where 4 × 3
// took 1.5 times the loads per multiply-add and three sweeps.
constexpr int kWideRows = 6, kWidePanels = 4;
void multiply_wide_tile_scaled(const float* a, Index lda, const float* panel, Index panel_stride, Index ldp,
                               Index depth, float scale, float* c, float* scaled, Index ldc, Packet* max,
                               bool stream) {
  using namespace Eigen::internal;
  WideTile<kWideRows, kWidePanels> acc;
  for (int i = 0; i < kWideRows; ++i)
    for (int q = 0; q < kWidePanels; ++q) acc[i][q] = pset1<WidePacket>(0.0f);
  accumulate_wide_tile<kWideRows, kWidePanels>(acc, a, lda, panel, panel_stride, ldp, depth);
  // Unrolled, branches outside the loops, maxima in registers: rolled, GCC spilled the accumulators
  // and chained each max through memory behind the stores to `scaled` (forty-first pass).
  if (stream) {
#pragma GCC unroll 6
    for (int i = 0; i < kWideRows; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < kWidePanels; ++q) store_scores(c + i * ldc + q * kPanelWidth, acc[i][q], true);
  } else {
#pragma GCC unroll 6
    for (int i = 0; i < kWideRows; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < kWidePanels; ++q) pstoreu(c + i * ldc + q * kPanelWidth, acc[i][q]);
  }
  if (!scaled) return;
  const WidePacket factor = pset1<WidePacket>(scale);
#pragma GCC unroll 6
  for (int i = 0; i < kWideRows; ++i) {
    Packet row_max = max[i];
#pragma GCC unroll 4
    for (int q = 0; q < kWidePanels; ++q) {
      const WidePacket v = pmul(acc[i][q], factor);
      pstoreu(scaled + i * ldc + q * kPanelWidth, v);
      row_max = pmax(row_max, Packet(_mm512_castps512_ps256(v)));
      row_max = pmax(row_max, Packet(_mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE))));  // upper half
    }
    max[i] = row_max;
  }
}
#endif

// multiply_tile with `rows` ≤ kTileRows: the last m % kTileRows rows have a tile of their own.
template <int Panels, int Rows = kTileRows>
void multiply_rows_tile(int rows, const float* a, Index lda, const float* panel, Index panel_stride, Index ldp,
                        Index depth, float* c, Index ldc, Index cols, bool first_block) {
  if constexpr (Rows > 0) {
    if (rows == Rows)
      return multiply_tile<Rows, Panels>(a, lda, panel, panel_stride, ldp, depth, c, ldc, cols, first_block);
    multiply_rows_tile<Panels, Rows - 1>(rows, a, lda, panel, panel_stride, ldp, depth, c, ldc, cols, first_block);
  }
}

// multiply_tile_scaled with `rows` ≤ kTileRows.
template <int Panels, int Rows = kTileRows>
void multiply_rows_tile_scaled(int rows, const float* a, Index lda, const float* panel, Index panel_stride, Index ldp,
                               Index depth, float scale, float* c, float* scaled, Index ldc, Index cols, Packet* max,
                               bool stream) {
  if constexpr (Rows > 0) {
    if (rows == Rows)
      return multiply_tile_scaled<Rows, Panels>(a, lda, panel, panel_stride, ldp, depth, scale, c, scaled, ldc, cols,
                                                max, stream);
    multiply_rows_tile_scaled<Panels, Rows - 1>(rows, a, lda, panel, panel_stride, ldp, depth, scale, c, scaled, ldc,
                                                cols, max, stream);
  }
}

// Panels in the tile at column x of C (n columns, cut into blocks of block_width): kTilePanels
// when they are all whole and in one block, so adjacent in C; else one.
int tile_panels_at(Index x, Index n, Index block_width) {
  constexpr Index width = kTilePanels * kPanelWidth;
  return x + width <= n && x % block_width + width <= block_width ? kTilePanels : 1;
}

}  // namespace

namespace {

// Sizes `out` for B (k, n) and returns its number of panels.
Index size_panels(Index k, Index n, PanelMatrix& out) {
  const Index panels = (n + kPanelWidth - 1) / kPanelWidth;
  out.k = k;
  out.n = n;
  out.data.resize(static_cast<size_t>(panels * k * kPanelWidth));
  return panels;
}

// A (lanes, lanes) block of B's transpose, rows `ld` apart, into a panel's rows as B.
template <typename P>
EIGEN_STRONG_INLINE void transpose_block(const float* from, Index ld, float* to) {
  using namespace Eigen::internal;
  constexpr int lanes = unpacket_traits<P>::size;
  PacketBlock<P, lanes> block;
  for (int r = 0; r < lanes; ++r) block.packet[r] = ploadu<P>(from + r * ld);
  ptranspose(block);
  for (int r = 0; r < lanes; ++r) pstoreu(to + r * kPanelWidth, block.packet[r]);
}

}  // namespace

void pack_panels(const float* b, Index ldb, Index k, Index n, PanelMatrix& out) {
  const Index panels = size_panels(k, n, out);
  // A band of rows at a time, every panel's share of it: B is read front to back, and a full
  // panel's row is a copy of fixed size, which the compiler inlines. Panel after panel down all
  // k rows, each row's copy a call, took 0.31 against 0.15 ms for a (512, 512) weight not in
  // cache (a fresh process's), 0.067 against 0.027 for one in cache.
  constexpr Index kBandRows = 16;
  for (Index p0 = 0; p0 < k; p0 += kBandRows) {
    const Index band_end = std::min(k, p0 + kBandRows);
    for (Index j = 0; j < panels; ++j) {
      const Index first = j * kPanelWidth, cols = std::min(kPanelWidth, n - first);
      float* panel = out.data.data() + j * k * kPanelWidth;
      if (cols == kPanelWidth) {
        for (Index p = p0; p < band_end; ++p)
          std::memcpy(panel + p * kPanelWidth, b + p * ldb + first, sizeof(float) * kPanelWidth);
        continue;
      }
      for (Index p = p0; p < band_end; ++p) {
        std::memcpy(panel + p * kPanelWidth, b + p * ldb + first, sizeof(float) * static_cast<size_t>(cols));
        std::fill(panel + p * kPanelWidth + cols, panel + (p + 1) * kPanelWidth, 0.0f);
      }
    }
  }
}

PanelMatrix panels_in_place(const float* b, Index ldb, Index k, Index n) {
  assert(n % kPanelWidth == 0);
  PanelMatrix view;
  view.k = k;
  view.n = n;
  view.source = b;
  view.source_stride = ldb;
  return view;
}

void pack_panels_transposed(const float* bt, Index ldbt, Index k, Index n, PanelMatrix& out) {
  using namespace Eigen::internal;
  const Index panels = size_panels(k, n, out);
  const Index whole_depth = k / kLanes * kLanes;
  for (Index j = 0; j < panels; ++j) {
    const Index first = j * kPanelWidth, cols = std::min(kPanelWidth, n - first);
    float* panel = out.data.data() + j * k * kPanelWidth;
    Index depth = 0;  // rows of the panel written by the blocks
    if (cols == kPanelWidth) {
      // (kLanes, kLanes) blocks transposed in registers: an element at a time, with a store
      // every kPanelWidth floats, took 0.4 ms of a 2048-key trace's per-head pass.
      for (; depth < whole_depth; depth += kLanes)
        for (Index x = 0; x < kPanelWidth; x += kLanes)
          transpose_block<Packet>(bt + (first + x) * ldbt + depth, ldbt, panel + depth * kPanelWidth + x);
    }
    for (Index x = 0; x < kPanelWidth; ++x)
      for (Index p = depth; p < k; ++p) panel[p * kPanelWidth + x] = x < cols ? bt[(first + x) * ldbt + p] : 0.0f;
  }
}

void multiply_panels_scaled(const float* a, Index lda, Index m, const PanelMatrix& b, float scale, float* c,
                            float* scaled, Index ldc, float* row_max) {
  using namespace Eigen::internal;
  const Index panels = (b.n + kPanelWidth - 1) / kPanelWidth, ldp = b.row_stride(), step = b.panel_stride();
#ifdef __AVX512VL__
  constexpr Index kRowStep = kWideRows;
  const Index whole_panels = b.n / kPanelWidth;
#else
  constexpr Index kRowStep = kTileRows;
#endif
  static_assert(kRowStep <= kTileRows, "the 8-lane tiles take the rest of a step's rows");
  // Scores are streamed only when the sweep scales them too (else the scaling pass reads them
  // next), and only where every whole panel's packets are aligned.
  const bool stream = scaled && reinterpret_cast<std::uintptr_t>(c) % 64 == 0 && ldc % kPanelWidth == 0;
  for (Index i = 0; i < m; i += kRowStep) {
    const int rows = static_cast<int>(std::min<Index>(kRowStep, m - i));
    Packet max[kTileRows];
    std::fill(max, max + kTileRows, pset1<Packet>(-std::numeric_limits<float>::infinity()));
    for (Index j = 0; j < panels;) {
      const Index x = j * kPanelWidth;
#ifdef __AVX512VL__
      if (rows == kWideRows && j + kWidePanels <= whole_panels) {
        multiply_wide_tile_scaled(a + i * lda, lda, b.panel(j), step, ldp, b.k, scale, c + i * ldc + x,
                                  scaled ? scaled + i * ldc + x : nullptr, ldc, max, stream);
        j += kWidePanels;
        continue;
      }
#endif
      const int tile_panels = tile_panels_at(x, b.n, b.n);
      const Index cols = std::min(tile_panels * kPanelWidth, b.n - x);
      const float* panel = b.panel(j);
      float* tile = c + i * ldc + x;
      float* scaled_tile = scaled ? scaled + i * ldc + x : nullptr;
      if (tile_panels == kTilePanels)
        multiply_rows_tile_scaled<kTilePanels>(rows, a + i * lda, lda, panel, step, ldp, b.k, scale, tile,
                                               scaled_tile, ldc, cols, max, stream);
      else
        multiply_rows_tile_scaled<1>(rows, a + i * lda, lda, panel, step, ldp, b.k, scale, tile, scaled_tile, ldc,
                                     cols, max, stream);
      j += tile_panels;
    }
    if (scaled)
      for (int r = 0; r < rows; ++r) row_max[i + r] = predux_max(max[r]);
  }
#ifdef __SSE__
  if (stream) _mm_sfence();  // streamed stores are weakly ordered: visible before the caller moves on
#endif
}

void multiply_panels(const float* a, Index lda, Index m, const PanelMatrix& b, float* c, Index ldc) {
  multiply_panel_columns(a, lda, m, b, 0, b.n, c, ldc, std::max<Index>(b.n, 1), 0);
}

void multiply_panel_columns(const float* a, Index lda, Index m, const PanelMatrix& b, Index first, Index n, float* c,
                            Index ldc, Index block_width, Index block_stride, bool accumulate) {
  if (b.k == 0) {  // an empty sum
    if (accumulate) return;
    for (Index x = 0; x < n; ++x)
      for (Index i = 0; i < m; ++i) c[x / block_width * block_stride + i * ldc + x % block_width] = 0.0f;
    return;
  }
  const Index first_panel = first / kPanelWidth, panels = (n + kPanelWidth - 1) / kPanelWidth;
  const Index ldp = b.row_stride(), step = b.panel_stride();
  for (Index p0 = 0; p0 < b.k; p0 += kDepthBlock) {
    const Index depth = std::min(kDepthBlock, b.k - p0);
    const bool first_block = p0 == 0 && !accumulate;
    for (Index j = 0; j < panels;) {
      const Index x = j * kPanelWidth;  // C's column within the range
#ifdef __AVX512VL__
      if (const int wide = wide_panels_at(x, n, block_width)) {
        const float* panel = b.panel(first_panel + j) + p0 * ldp;
        float* column = c + x / block_width * block_stride + x % block_width;
        for (Index i = 0; i < m; i += kTileRows) {
          const int rows = static_cast<int>(std::min<Index>(kTileRows, m - i));
          if (wide == 4)
            multiply_rows_wide_tile<4>(rows, a + i * lda + p0, lda, panel, step, ldp, depth, column + i * ldc, ldc,
                                       first_block);
          else if (wide == 3)
            multiply_rows_wide_tile<3>(rows, a + i * lda + p0, lda, panel, step, ldp, depth, column + i * ldc, ldc,
                                       first_block);
          else
            multiply_rows_wide_tile<2>(rows, a + i * lda + p0, lda, panel, step, ldp, depth, column + i * ldc, ldc,
                                       first_block);
        }
        j += wide;
        continue;
      }
#endif
      const int tile_panels = tile_panels_at(x, n, block_width);
      const Index cols = std::min(tile_panels * kPanelWidth, n - x);
      const float* panel = b.panel(first_panel + j) + p0 * ldp;
      float* column = c + x / block_width * block_stride + x % block_width;
      for (Index i = 0; i < m; i += kTileRows) {
        const int rows = static_cast<int>(std::min<Index>(kTileRows, m - i));
        const float* a_tile = a + i * lda + p0;
        if (tile_panels == kTilePanels)
          multiply_rows_tile<kTilePanels>(rows, a_tile, lda, panel, step, ldp, depth, column + i * ldc, ldc, cols,
                                          first_block);
        else
          multiply_rows_tile<1>(rows, a_tile, lda, panel, step, ldp, depth, column + i * ldc, ldc, cols, first_block);
      }
      j += tile_panels;
    }
  }
}

namespace {

struct CachedWeight {
  std::weak_ptr<const Tensor> weight;  // expired once the session drops it
  const Tensor* address;
  Index column, width;
  bool transposed;
  std::shared_ptr<const PanelMatrix> packed;  // null: read in place once, packed at the next use

  bool is(const TensorPtr& w, Index c, Index n, bool t) const {
    return address == w.get() && !weight.expired() && column == c && width == n && transposed == t;
  }
};
// A session's four weights in up to eight column blocks each, and their transposes for the
// backward pass; the oldest entry goes first.
constexpr size_t kCachedWeights = 40;
std::mutex weight_cache_mutex;
auto& weight_cache = *new std::vector<CachedWeight>;  // never destroyed: computations may end during exit

}  // namespace

std::shared_ptr<const PanelMatrix> find_packed_weight(const TensorPtr& weight, Index column, Index width,
                                                      bool transposed) {
  std::lock_guard<std::mutex> lock(weight_cache_mutex);
  for (const CachedWeight& e : weight_cache)
    if (e.is(weight, column, width, transposed)) return e.packed;
  return nullptr;
}

namespace {

// Packs the block into `out`, already sized or not.
void pack_weight_block(const Tensor& weight, Index column, Index width, bool transposed, PanelMatrix& out) {
  const float* block = weight.data.data() + column;
  if (transposed)
    pack_panels_transposed(block, weight.cols(), width, weight.rows(), out);
  else
    pack_panels(block, weight.cols(), weight.rows(), width, out);
}

// Caller holds weight_cache_mutex. Replaces the block's entry, if any.
void remember_locked(const TensorPtr& weight, Index column, Index width, bool transposed,
                     std::shared_ptr<const PanelMatrix> packed) {
  weight_cache.erase(std::remove_if(weight_cache.begin(), weight_cache.end(),
                                    [&](const CachedWeight& e) {
                                      return e.weight.expired() || e.is(weight, column, width, transposed);
                                    }),
                     weight_cache.end());
  if (weight_cache.size() >= kCachedWeights) weight_cache.erase(weight_cache.begin());
  weight_cache.push_back({weight, weight.get(), column, width, transposed, std::move(packed)});
}

void remember_packed(const TensorPtr& weight, Index column, Index width, bool transposed,
                     std::shared_ptr<const PanelMatrix> packed) {
  std::lock_guard<std::mutex> lock(weight_cache_mutex);
  remember_locked(weight, column, width, transposed, std::move(packed));
}

// True, and the block remembered as used, the first time a block is asked for.
bool first_use(const TensorPtr& weight, Index column, Index width) {
  std::lock_guard<std::mutex> lock(weight_cache_mutex);
  for (const CachedWeight& e : weight_cache)
    if (e.is(weight, column, width, false)) return false;
  remember_locked(weight, column, width, false, nullptr);
  return true;
}

}  // namespace

std::shared_ptr<const PanelMatrix> packed_weight(const TensorPtr& weight, Index column, Index width,
                                                 bool transposed) {
  if (auto found = find_packed_weight(weight, column, width, transposed)) return found;
  auto packed = std::make_shared<PanelMatrix>();
  pack_weight_block(*weight, column, width, transposed, *packed);
  remember_packed(weight, column, width, transposed, packed);
  return packed;
}

void pack_weight_blocks(std::vector<WeightBlock>& blocks, Index rows, bool parallel) {
  std::vector<WeightBlock*> missing;
  std::vector<std::shared_ptr<PanelMatrix>> packings;
  for (WeightBlock& b : blocks) {
    if (!b.weight || (b.packed = find_packed_weight(b.weight, b.column, b.width))) continue;
    if (rows <= kInPlaceRows && b.width % kPanelWidth == 0 && first_use(b.weight, b.column, b.width)) {
      b.packed = std::make_shared<const PanelMatrix>(
          panels_in_place(b.weight->data.data() + b.column, b.weight->cols(), b.weight->rows(), b.width));
      continue;
    }
    // Allocated here, not on the thread that packs it: a helper's first allocations come
    // from an arena of its own whose pages are all fresh, where this thread's land on the
    // heap warm_up (numerics/attention.hpp) left resident.
    missing.push_back(&b);
    packings.push_back(std::make_shared<PanelMatrix>());
    size_panels(b.weight->rows(), b.width, *packings.back());
  }
  parallel_for(static_cast<Index>(missing.size()), parallel, [&](Index m, bool) {
    const WeightBlock& b = *missing[static_cast<size_t>(m)];
    pack_weight_block(*b.weight, b.column, b.width, false, *packings[static_cast<size_t>(m)]);
  });
  for (size_t m = 0; m < missing.size(); ++m) {
    WeightBlock& b = *missing[m];
    remember_packed(b.weight, b.column, b.width, false, packings[m]);
    b.packed = std::move(packings[m]);
  }
}

}  // namespace al::detail
