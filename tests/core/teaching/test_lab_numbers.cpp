// The labs' numbers: differences (with NaN where every method gives NaN), the
// memory of the tiled computation part by part, and the cost curves, checked
// against hand-worked values and the closed formulas 2·n²·d and 2·n·d·(d + 1).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "teaching/lab_numbers.hpp"

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("max_abs_difference: largest gap, shared NaN equal, lone NaN infinite") {
  const float a[] = {1.0f, -2.0f, 0.5f, kNaN};
  const float b[] = {1.5f, -2.25f, 0.5f, kNaN};
  CHECK(al::max_abs_difference(a, b, 4) == doctest::Approx(0.5));
  const float c[] = {1.0f, kNaN};
  const float d[] = {1.0f, 3.0f};
  CHECK(std::isinf(al::max_abs_difference(c, d, 2)));
  CHECK(al::max_abs_difference(c, d, 1) == 0.0);
}

TEST_CASE("difference: a − b, 0 where both are NaN") {
  const al::Tensor a({2, 2}, {3.0f, 1.0f, kNaN, -1.0f});
  const al::Tensor b({2, 2}, {1.0f, 1.5f, kNaN, 2.0f});
  const al::Tensor d = al::difference(a, b);
  CHECK(d.shape == a.shape);
  CHECK(d.data[0] == 2.0f);
  CHECK(d.data[1] == -0.5f);
  CHECK(d.data[2] == 0.0f);
  CHECK(d.data[3] == -3.0f);
}

TEST_CASE("flash_memory: parts by hand, sum equals flash_step_held_bytes") {
  // Lq = 10, Lk = 12, d_k = 4, tiles 4 x 5: accumulator 40 floats, m and ℓ 20, tile 20.
  const al::FlashMemory m = al::flash_memory(10, 12, 4, {4, 5});
  CHECK(m.output_bytes == 160);
  CHECK(m.statistics_bytes == 80);
  CHECK(m.tile_bytes == 80);
  CHECK(m.held_bytes == 320);
  CHECK(m.full_matrix_bytes == 480);
  CHECK(m.held_bytes == al::flash_step_held_bytes(10, 4, {4, 5}));
  // Linear in n: doubling both lengths doubles everything but the tile.
  const al::FlashMemory twice = al::flash_memory(20, 24, 4, {4, 5});
  CHECK(twice.output_bytes == 2 * m.output_bytes);
  CHECK(twice.statistics_bytes == 2 * m.statistics_bytes);
  CHECK(twice.tile_bytes == m.tile_bytes);
  CHECK(twice.full_matrix_bytes == 4 * m.full_matrix_bytes);
}

TEST_CASE("flash_memory: a tile larger than the sequence holds only the sequence") {
  const al::FlashMemory m = al::flash_memory(3, 2, 2, {64, 256});
  CHECK(m.tile_bytes == 4 * 3 * 2);
}

TEST_CASE("cost_curve: the closed formulas at every point") {
  const al::Index d = 16;
  const al::CostCurve curve = al::cost_curve(d, 1000, 10);
  REQUIRE(curve.lengths.size() == 10);
  CHECK(curve.lengths.front() == 100);
  CHECK(curve.lengths.back() == 1000);
  for (size_t i = 0; i < curve.lengths.size(); ++i) {
    const double n = static_cast<double>(curve.lengths[i]);
    CHECK(curve.softmax_multiply_adds[i] == 2.0 * n * n * d);        // QKᵀ and weights·V
    CHECK(curve.linear_multiply_adds[i] == 2.0 * n * d * (d + 1));  // φ(K)ᵀV, φ(K)ᵀ1, and per query
  }
}

TEST_CASE("linear_break_even_length: first n with 2·n·d·(d+1) < 2·n²·d is d + 2") {
  for (al::Index d : {1, 2, 8, 64, 100}) {
    CAPTURE(d);
    CHECK(al::linear_break_even_length(d) == d + 2);
  }
  CHECK(al::linear_break_even_length(0) == 0);
}

TEST_CASE("lab_number: one way to write a number in every window") {
  CHECK(al::lab_number(1.0) == "1.0");
  CHECK(al::lab_number(0.5) == "0.5");
  CHECK(al::lab_number(-2.25) == "−2.25");
  CHECK(al::lab_number(-0.0) == "0.0");
  CHECK(al::lab_number(1.0 / std::sqrt(2.0)) == "0.7071");  // 4 significant digits
  CHECK(al::lab_number(0.00012345) == "0.0001234");
  CHECK(al::lab_number(1234.0) == "1234.0");
  CHECK(al::lab_number(123456.0) == "1.235e5");
  CHECK(al::lab_number(-1e9) == "−1e9");
  CHECK(al::lab_number(-1e-20) == "−1e-20");
  CHECK(al::lab_number(2.5e-5) == "2.5e-5");
  CHECK(al::lab_number(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(al::lab_number(std::numeric_limits<double>::infinity()) == "∞");
  CHECK(al::lab_number(-std::numeric_limits<double>::infinity()) == "−∞");
}

TEST_CASE("cell_value_text: a heatmap cell's text, compact in the cell, longer in its tooltip") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(al::cell_value_text(0.125f, true) == "0.12");  // printf rounds 0.125 (exact) to even
  CHECK(al::cell_value_text(0.125f, false) == "0.1250");
  CHECK(al::cell_value_text(-1.996f, true) == "-2.00");
  CHECK(al::cell_value_text(-0.004f, true) == "0.00");  // no sign on a shown zero
  CHECK(al::cell_value_text(-0.004f, false) == "-0.004");  // the tooltip keeps 3 digits under 0.005
  CHECK(al::cell_value_text(0.0f, false) == "0.0000");
  CHECK(al::cell_value_text(99.994f, true) == "99.99");
  CHECK(al::cell_value_text(123.456f, true) == "123");  // three significant digits from 100 on
  CHECK(al::cell_value_text(-1e9f, false) == "-1e+09");
  CHECK(al::cell_value_text(std::numeric_limits<float>::quiet_NaN(), true) == "NaN");
  CHECK(al::cell_value_text(-inf, true) == "−∞");
  CHECK(al::cell_value_text(inf, false) == "∞");
}

TEST_CASE("rope_base_text: a whole base in full, as Settings shows it; else as lab_number") {
  CHECK(al::rope_base_text(10000.0) == "10000");
  CHECK(al::lab_number(10000.0) == "1e4");  // what the RoPE window said beside Settings' 10000
  CHECK(al::rope_base_text(500000.0) == "500000");
  CHECK(al::rope_base_text(2.5) == "2.5");
}

TEST_CASE("bytes_text: bytes, then KiB, MiB, GiB with one decimal") {
  CHECK(al::bytes_text(0) == "0 B");
  CHECK(al::bytes_text(1023) == "1023 B");
  CHECK(al::bytes_text(1024) == "1.0 KiB");
  CHECK(al::bytes_text(1536) == "1.5 KiB");
  CHECK(al::bytes_text(al::Index{30} << 20) == "30.0 MiB");
  CHECK(al::bytes_text((al::Index{6} << 30) / 5) == "1.2 GiB");
}
