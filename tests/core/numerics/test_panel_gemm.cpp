// The projections' GEMM (numerics/panel_gemm.hpp) against an explicit loop in double, on
// shapes that leave partial register tiles, a partial last panel and several depth blocks;
// the same bits however the rows and columns are split into calls or written into blocks, or
// computed with the scores' scaling and row max (multiply_panels_scaled), or read from B in
// place; and the packed-weight cache, which must never hand out the packing of a weight that
// is gone, and reads a weight in place at its first use by a few rows.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "base/random.hpp"
#include "numerics/panel_gemm.hpp"

using namespace al;

namespace {

// C = A · B with A (m, k) and B (k, n) row-major, summed in double.
std::vector<double> reference_product(const Tensor& a, const Tensor& b) {
  const Index m = a.rows(), k = a.cols(), n = b.cols();
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < n; ++j)
      for (Index p = 0; p < k; ++p)
        c[static_cast<size_t>(i * n + j)] += static_cast<double>(a.data[static_cast<size_t>(i * k + p)]) *
                                             b.data[static_cast<size_t>(p * n + j)];
  return c;
}

std::vector<float> product(const Tensor& a, const Tensor& b) {
  detail::PanelMatrix packed;
  detail::pack_panels(b.data.data(), b.cols(), b.rows(), b.cols(), packed);
  std::vector<float> c(static_cast<size_t>(a.rows() * b.cols()), -1.0f);
  detail::multiply_panels(a.data.data(), a.cols(), a.rows(), packed, c.data(), b.cols());
  return c;
}

}  // namespace

TEST_CASE("multiply_panels equals the product summed in double, on every shape of tile and panel") {
  struct Shape {
    Index m, k, n;
  };
  // Rows not a multiple of any tile height, columns not a multiple of 16, depths over the
  // 512-deep block, a single row and column, the trace's own 64 × 512 × 256, and seven whole
  // panels and a partial one (tiles of four panels, then three, then the 8-lane tiles).
  for (Shape s : {Shape{1, 1, 1}, Shape{5, 3, 7}, Shape{13, 37, 17}, Shape{64, 512, 256}, Shape{7, 1100, 33},
                  Shape{25, 513, 48}, Shape{3, 2048, 5}, Shape{9, 600, 121}}) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const Tensor a = random_normal({s.m, s.k}, 11, 1.0), b = random_normal({s.k, s.n}, 12, 1.0);
    const std::vector<double> expected = reference_product(a, b);
    const std::vector<float> got = product(a, b);
    for (size_t i = 0; i < got.size(); ++i) {
      // float32 summation: a few ulp of the terms' magnitude, sqrt(k) of them.
      const double tolerance = 1e-6 * std::sqrt(static_cast<double>(s.k)) * 8.0;
      REQUIRE(std::fabs(got[i] - expected[i]) <= tolerance * std::max(1.0, std::fabs(expected[i])));
    }
  }
}

TEST_CASE("an empty depth gives zeros, and strided A and C are read and written in place") {
  const Tensor a({3, 0}), b({0, 5});
  CHECK(product(a, b) == std::vector<float>(15, 0.0f));

  // A is the middle 4 columns of a (6, 8); C goes into columns 2..6 of a (6, 9) whose other cells stay.
  const Tensor wide = random_normal({6, 8}, 21, 1.0), b2 = random_normal({4, 5}, 22, 1.0);
  detail::PanelMatrix packed;
  detail::pack_panels(b2.data.data(), 5, 4, 5, packed);
  std::vector<float> c(6 * 9, 7.0f);
  detail::multiply_panels(wide.data.data() + 2, 8, 6, packed, c.data() + 2, 9);
  for (Index i = 0; i < 6; ++i)
    for (Index j = 0; j < 9; ++j) {
      const float got = c[static_cast<size_t>(i * 9 + j)];
      if (j < 2 || j >= 7) {
        CHECK(got == 7.0f);
        continue;
      }
      double sum = 0.0;
      for (Index p = 0; p < 4; ++p) sum += static_cast<double>(wide.at({i, 2 + p})) * b2.at({p, j - 2});
      CHECK(got == doctest::Approx(sum).epsilon(1e-5));
    }
}

TEST_CASE("rows and columns split into separate calls give the same bits") {
  const Tensor a = random_normal({40, 700}, 31, 1.0), b = random_normal({700, 80}, 32, 1.0);
  const std::vector<float> whole = product(a, b);
  // Rows 0..16 and 17..39 in two calls; columns 0..47 and 48..79 from two packings.
  detail::PanelMatrix left, right;
  detail::pack_panels(b.data.data(), 80, 700, 48, left);
  detail::pack_panels(b.data.data() + 48, 80, 700, 32, right);
  std::vector<float> split(whole.size(), 0.0f);
  for (Index first : {Index{0}, Index{17}}) {
    const Index rows = first == 0 ? 17 : 23;
    detail::multiply_panels(a.data.data() + first * 700, 700, rows, left, split.data() + first * 80, 80);
    detail::multiply_panels(a.data.data() + first * 700, 700, rows, right, split.data() + first * 80 + 48, 80);
  }
  CHECK(split == whole);
}

TEST_CASE("multiply_panel_columns writes a column range into blocks apart, with multiply_panels' bits") {
  // (13, 600) · (600, 112): columns 16 … 111 (six panels) into three blocks of 32 columns, each
  // (13, 32) with rows 32 apart and blocks 13·32 + 5 floats apart, as a projection writes heads.
  const Tensor a = random_normal({13, 600}, 35, 1.0), b = random_normal({600, 112}, 36, 1.0);
  const std::vector<float> whole = product(a, b);
  detail::PanelMatrix packed;
  detail::pack_panels(b.data.data(), 112, 600, 112, packed);
  const Index width = 32, stride = 13 * width + 5;
  std::vector<float> blocks(static_cast<size_t>(3 * stride), -7.0f);
  detail::multiply_panel_columns(a.data.data(), 600, 13, packed, 16, 96, blocks.data(), width, width, stride);
  for (Index s = 0; s < 3; ++s) {
    for (Index i = 0; i < 13; ++i)
      for (Index c = 0; c < width; ++c)
        REQUIRE(blocks[static_cast<size_t>(s * stride + i * width + c)] ==
                whole[static_cast<size_t>(i * 112 + 16 + s * width + c)]);
    for (Index gap = 13 * width; gap < stride; ++gap) CHECK(blocks[static_cast<size_t>(s * stride + gap)] == -7.0f);
  }
}

TEST_CASE("blocks that split the widest register tile, and a sum over several B, keep multiply_panels' bits") {
  // (11, 700) · (700, 144) into blocks of 48 columns: a copy whose tiles span two panels
  // (numerics/panel_gemm.cpp) puts columns 0 … 31 of each block in one tile and 32 … 47 in a
  // tile of one panel, where multiply_panels, one block, pairs panels 0-1, 2-3, … across the
  // blocks' edges. Depth 700 spans more than one depth block of every copy.
  const Tensor a = random_normal({11, 700}, 37, 1.0), b = random_normal({700, 144}, 38, 1.0);
  const std::vector<float> whole = product(a, b);
  detail::PanelMatrix packed;
  detail::pack_panels(b.data.data(), 144, 700, 144, packed);
  const Index width = 48, stride = 11 * width;
  std::vector<float> blocks(static_cast<size_t>(3 * stride), -7.0f);
  detail::multiply_panel_columns(a.data.data(), 700, 11, packed, 0, 144, blocks.data(), width, width, stride);
  auto at_block = [&](const std::vector<float>& v, Index i, Index j) {
    return v[static_cast<size_t>(j / width * stride + i * width + j % width)];
  };
  for (Index i = 0; i < 11; ++i)
    for (Index j = 0; j < 144; ++j) REQUIRE(at_block(blocks, i, j) == whole[static_cast<size_t>(i * 144 + j)]);

  // C += A₂ · B₂ over the same blocks: each element's chain goes on from C, the bits of
  // [A | A₂] · [B; B₂] in one product (700 + 300 deep).
  const Tensor a2 = random_normal({11, 300}, 39, 1.0), b2 = random_normal({300, 144}, 40, 1.0);
  detail::PanelMatrix packed2;
  detail::pack_panels(b2.data.data(), 144, 300, 144, packed2);
  detail::multiply_panel_columns(a2.data.data(), 300, 11, packed2, 0, 144, blocks.data(), width, width, stride, true);
  Tensor joined_a({11, 1000}), joined_b({1000, 144});
  for (Index i = 0; i < 11; ++i)
    for (Index p = 0; p < 1000; ++p)
      joined_a.data[static_cast<size_t>(i * 1000 + p)] = p < 700 ? a.at({i, p}) : a2.at({i, p - 700});
  for (Index p = 0; p < 1000; ++p)
    for (Index j = 0; j < 144; ++j)
      joined_b.data[static_cast<size_t>(p * 144 + j)] = p < 700 ? b.at({p, j}) : b2.at({p - 700, j});
  const std::vector<float> joined = product(joined_a, joined_b);
  for (Index i = 0; i < 11; ++i)
    for (Index j = 0; j < 144; ++j) REQUIRE(at_block(blocks, i, j) == joined[static_cast<size_t>(i * 144 + j)]);
}

TEST_CASE("pack_panels_transposed puts Bᵀ's rows, strided, into panels padded with zeros") {
  // Depths whole in 4- and 8-lane blocks (64), with a rest (13, 67); whole panels only
  // (32 keys) and a partial last one (37); rows of Bᵀ 5 floats further apart than the depth.
  for (Index k : {Index{13}, Index{64}, Index{67}})
    for (Index n : {Index{32}, Index{37}}) {
      CAPTURE(k);
      CAPTURE(n);
      const Index ldbt = k + 5;
      const Tensor bt = random_normal({n, ldbt}, 53, 1.0);
      detail::PanelMatrix packed;
      detail::pack_panels_transposed(bt.data.data(), ldbt, k, n, packed);
      const Index panels = (n + detail::kPanelWidth - 1) / detail::kPanelWidth;
      REQUIRE(packed.data.size() == static_cast<size_t>(panels * k * detail::kPanelWidth));
      for (Index j = 0; j < panels; ++j)
        for (Index p = 0; p < k; ++p)
          for (Index x = 0; x < detail::kPanelWidth; ++x) {
            const Index key = j * detail::kPanelWidth + x;
            const float expected = key < n ? bt.data[static_cast<size_t>(key * ldbt + p)] : 0.0f;
            REQUIRE(packed.panel(j)[p * detail::kPanelWidth + x] == expected);
          }
    }
}

TEST_CASE("multiply_panels_scaled: multiply_panels' bits, the scaled copy, and each row's max without the padding") {
  struct Shape {
    Index m, k, n;
  };
  // K given as (n, k) rows, packed from its transpose. Rows leaving short tiles (1, 13, 7),
  // a partial last panel (37, 2100), a depth over the 512-deep block of multiply_panels, whole
  // panels (48, 1088).
  for (Shape s : {Shape{1, 1, 1}, Shape{13, 16, 37}, Shape{7, 64, 2100}, Shape{25, 513, 48}, Shape{14, 64, 1088}}) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    const Tensor a = random_normal({s.m, s.k}, 51, 1.0), bt = random_normal({s.n, s.k}, 52, 1.0);
    Tensor b({s.k, s.n});
    for (Index p = 0; p < s.k; ++p)
      for (Index j = 0; j < s.n; ++j) b.data[static_cast<size_t>(p * s.n + j)] = bt.at({j, p});
    detail::PanelMatrix from_rows, from_transpose;
    detail::pack_panels(b.data.data(), s.n, s.k, s.n, from_rows);
    detail::pack_panels_transposed(bt.data.data(), s.k, s.k, s.n, from_transpose);
    REQUIRE(from_transpose.data == from_rows.data);

    const std::vector<float> expected = product(a, b);
    // C 64-byte aligned (offset 0: with whole panels the scores are streamed) and not (1).
    for (auto [scale, offset] : {std::pair{0.125f, 0}, std::pair{-0.3f, 0}, std::pair{0.125f, 1}}) {
      CAPTURE(offset);
      FloatBuffer c_buffer(expected.size() + 1, -1.0f);
      float* c_at = c_buffer.data() + offset;
      std::vector<float> scaled(expected.size(), -1.0f);
      std::vector<float> max(static_cast<size_t>(s.m), 99.0f);
      detail::multiply_panels_scaled(a.data.data(), s.k, s.m, from_transpose, scale, c_at, scaled.data(), s.n,
                                     max.data());
      const std::vector<float> c(c_at, c_at + expected.size());
      CHECK(c == expected);
      for (Index i = 0; i < s.m; ++i) {
        float row_max = -std::numeric_limits<float>::infinity();
        for (Index j = 0; j < s.n; ++j) {
          const size_t at = static_cast<size_t>(i * s.n + j);
          REQUIRE(scaled[at] == c[at] * scale);
          row_max = std::max(row_max, scaled[at]);
        }
        CHECK(max[static_cast<size_t>(i)] == row_max);
      }
      // Without `scaled` only C is written.
      std::vector<float> alone(expected.size(), -1.0f), untouched(static_cast<size_t>(s.m), 99.0f);
      detail::multiply_panels_scaled(a.data.data(), s.k, s.m, from_transpose, scale, alone.data(), nullptr, s.n,
                                     untouched.data());
      CHECK(alone == expected);
      CHECK(untouched == std::vector<float>(static_cast<size_t>(s.m), 99.0f));
    }
  }
}

TEST_CASE("multiply_panels_scaled's row max: all values negative past a partial panel, and NaN left out") {
  // 21 keys: the last panel has 5 and 11 zero columns of padding, which must not count as 0.
  // 53 keys: three whole panels first (the AVX-512 copy's 16-lane tiles), then a partial one.
  for (Index n : {Index{21}, Index{53}}) {
    CAPTURE(n);
    const Index m = 8, k = 4;
    const Tensor a({m, k}, 1.0f);
    Tensor bt({n, k});
    for (Index j = 0; j < n; ++j)
      for (Index p = 0; p < k; ++p) bt.data[static_cast<size_t>(j * k + p)] = 1.0f + static_cast<float>(j);
    bt.data[static_cast<size_t>(20 * k)] = std::numeric_limits<float>::quiet_NaN();  // key 20 gives NaN
    detail::PanelMatrix packed;
    detail::pack_panels_transposed(bt.data.data(), k, k, n, packed);
    std::vector<float> c(static_cast<size_t>(m * n)), scaled(c.size()), max(static_cast<size_t>(m));
    detail::multiply_panels_scaled(a.data.data(), k, m, packed, -0.5f, c.data(), scaled.data(), n, max.data());
    // Row i: scores 4 (j + 1) for j ≠ 20, scaled −2 (j + 1): the largest is −2 (key 0).
    for (Index i = 0; i < m; ++i) {
      CHECK(std::isnan(scaled[static_cast<size_t>(i * n + 20)]));
      CHECK(scaled[static_cast<size_t>(i * n + 19)] == -40.0f);
      CHECK(max[static_cast<size_t>(i)] == -2.0f);
    }
  }
}

TEST_CASE("packed_weight reuses a live weight's packing and never a dropped weight's") {
  TensorPtr w = make_tensor(random_normal({32, 48}, 41, 1.0));
  const auto first = detail::packed_weight(w, 16, 32);
  CHECK(detail::packed_weight(w, 16, 32) == first);       // the same block: packed once
  CHECK(detail::find_packed_weight(w, 0, 32) == nullptr);  // another block is not packed yet
  CHECK(first->k == 32);
  CHECK(first->n == 32);
  CHECK(first->data[0] == w->at({0, 16}));

  // The block's transpose B = W[:, 16:48]ᵀ (32, 32) is cached apart from the block:
  // B[p][x] = W[x][16 + p], panel by panel.
  const auto transposed = detail::packed_weight(w, 16, 32, true);
  CHECK(transposed != first);
  CHECK(detail::packed_weight(w, 16, 32, true) == transposed);
  CHECK(detail::packed_weight(w, 16, 32) == first);
  REQUIRE(transposed->k == 32);
  REQUIRE(transposed->n == 32);
  for (Index panel = 0; panel < 2; ++panel)
    for (Index p = 0; p < 32; ++p)
      for (Index x = 0; x < detail::kPanelWidth; ++x)
        CHECK(transposed->data[static_cast<size_t>((panel * 32 + p) * detail::kPanelWidth + x)] ==
              w->at({panel * detail::kPanelWidth + x, 16 + p}));

  // A new weight, whatever address it gets, is packed from its own values.
  w.reset();
  for (int round = 0; round < 20; ++round) {
    const TensorPtr next = make_tensor(Tensor({32, 48}, static_cast<float>(round)));
    const auto packed = detail::packed_weight(next, 16, 32);
    REQUIRE(packed->data[0] == static_cast<float>(round));
    REQUIRE(packed->data[packed->data.size() - 1] == static_cast<float>(round));
  }
}

TEST_CASE("panels read in place give the packed panels' bits") {
  // Columns 32 … 127 of a (1100, 160) B, rows 160 apart: two depth blocks, six panels, and
  // row counts that leave every partial register tile.
  const Tensor b = random_normal({1100, 160}, 51, 1.0);
  detail::PanelMatrix packed;
  detail::pack_panels(b.data.data() + 32, 160, 1100, 96, packed);
  const detail::PanelMatrix in_place = detail::panels_in_place(b.data.data() + 32, 160, 1100, 96);
  CHECK(in_place.data.empty());  // nothing copied
  for (Index m : {Index{1}, Index{5}, Index{13}, Index{64}}) {
    CAPTURE(m);
    const Tensor a = random_normal({m, 1100}, 52 + static_cast<std::uint64_t>(m), 1.0);
    std::vector<float> from_packed(static_cast<size_t>(m * 96), -1.0f), from_source(from_packed.size(), -2.0f);
    detail::multiply_panels(a.data.data(), 1100, m, packed, from_packed.data(), 96);
    detail::multiply_panels(a.data.data(), 1100, m, in_place, from_source.data(), 96);
    CHECK(from_source == from_packed);
    for (Index i = 0; i < m; ++i)  // and the product itself, summed in double
      for (Index j = 0; j < 96; j += 19) {
        double sum = 0.0;
        for (Index p = 0; p < 1100; ++p) sum += static_cast<double>(a.at({i, p})) * b.at({p, 32 + j});
        REQUIRE(from_source[static_cast<size_t>(i * 96 + j)] == doctest::Approx(sum).epsilon(1e-4).scale(1.0));
      }
    // Columns 16 … 79 into blocks of 32 apart, as a projection writes heads, added to C.
    const Index stride = m * 32 + 3;
    std::vector<float> blocks_packed(static_cast<size_t>(2 * stride), 0.25f), blocks_source(blocks_packed);
    const float* rows = a.data.data();
    detail::multiply_panel_columns(rows, 1100, m, packed, 16, 64, blocks_packed.data(), 32, 32, stride, true);
    detail::multiply_panel_columns(rows, 1100, m, in_place, 16, 64, blocks_source.data(), 32, 32, stride, true);
    CHECK(blocks_source == blocks_packed);
    // The scores' sweep reads panels the same way.
    std::vector<float> c1(from_packed.size()), c2(c1.size()), s1(c1.size()), s2(c1.size()), max1(m), max2(m);
    detail::multiply_panels_scaled(rows, 1100, m, packed, 0.5f, c1.data(), s1.data(), 96, max1.data());
    detail::multiply_panels_scaled(rows, 1100, m, in_place, 0.5f, c2.data(), s2.data(), 96, max2.data());
    CHECK(c2 == c1);
    CHECK(s2 == s1);
    CHECK(max2 == max1);
  }
}

TEST_CASE("pack_weight_blocks reads a new weight in place at its first use by few rows, and packs it at the next") {
  const TensorPtr w = make_tensor(random_normal({64, 96}, 61, 1.0));
  auto blocks_of = [&](Index column, Index width) {
    return std::vector<detail::WeightBlock>{{w, column, width, nullptr}};
  };

  std::vector<detail::WeightBlock> first = blocks_of(32, 64);
  detail::pack_weight_blocks(first, detail::kInPlaceRows, false);
  REQUIRE(first[0].packed);
  CHECK(first[0].packed->source == w->data.data() + 32);  // B's own columns 32 …, rows 96 apart
  CHECK(first[0].packed->source_stride == 96);
  CHECK(first[0].packed->data.empty());
  CHECK(detail::find_packed_weight(w, 32, 64) == nullptr);  // not kept: nothing was packed

  std::vector<detail::WeightBlock> second = blocks_of(32, 64);
  detail::pack_weight_blocks(second, 1, false);
  REQUIRE(second[0].packed);
  CHECK(second[0].packed->source == nullptr);
  CHECK(detail::find_packed_weight(w, 32, 64) == second[0].packed);  // packed once, and kept
  CHECK(second[0].packed->data[detail::kPanelWidth] == w->at({1, 32}));  // panel 0's second row

  // More rows than kInPlaceRows, or a last panel that is not whole: packed at the first use.
  std::vector<detail::WeightBlock> many_rows = blocks_of(0, 32), partial = blocks_of(0, 40);
  detail::pack_weight_blocks(many_rows, detail::kInPlaceRows + 1, false);
  detail::pack_weight_blocks(partial, 1, false);
  CHECK(many_rows[0].packed->source == nullptr);
  CHECK(partial[0].packed->source == nullptr);
  CHECK(detail::find_packed_weight(w, 0, 32) == many_rows[0].packed);
  CHECK(detail::find_packed_weight(w, 0, 40) == partial[0].packed);
}
