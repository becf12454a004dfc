// How the projections' and W_O's rows are cut into work items (numerics/work_items): sizes
// worked by hand, every row in exactly one item in order, and a trace whose items are cut
// for one thread equal, bit for bit, to one cut for two.
#include <doctest/doctest.h>
#include <omp.h>

#include <vector>

#include "numerics/attention.hpp"
#include "numerics/work_items.hpp"
#include "attention_reference.hpp"

using al::Index;
using al::detail::RowBlock;

namespace {

std::vector<Index> sizes_of(const std::vector<RowBlock>& blocks, size_t segment) {
  std::vector<Index> sizes;
  for (const RowBlock& b : blocks)
    if (b.segment == segment) sizes.push_back(b.count);
  return sizes;
}

// Every row of every segment in exactly one item, segments and rows in order, none over `most`.
void check_cover(const std::vector<RowBlock>& blocks, const std::vector<Index>& rows, Index most) {
  size_t segment = 0;
  Index next = 0;
  for (const RowBlock& b : blocks) {
    if (b.segment != segment) {
      CHECK(next == rows[segment]);
      CHECK(b.segment == segment + 1);
      segment = b.segment;
      next = 0;
    }
    CHECK(b.first == next);
    CHECK(b.count > 0);
    CHECK(b.count <= most);
    next += b.count;
  }
  CHECK(segment == rows.size() - 1);
  CHECK(next == rows.back());
}

}  // namespace

TEST_CASE("work items: tallest items that still give both threads two") {
  using al::detail::projection_rows;
  CHECK(projection_rows({512, 512, 512}) == 256);  // 6 items of 256
  CHECK(projection_rows({256, 256, 256}) == 128);  // 3 of 256 are too few: 6 of 128
  CHECK(projection_rows({64, 64, 64}) == 64);      // never below 64 rows
  CHECK(projection_rows({512}) == 128);            // W_O at L = 512: 4 items
  // Few rows: the columns are cut too (a 64-token projection: 3 items of rows, 2 column blocks).
  CHECK(al::detail::column_blocks(3, 512) == 2);
  CHECK(al::detail::column_blocks(6, 512) == 1);
  CHECK(al::detail::column_blocks(1, 256) == 2);  // at least 128 columns a block
}

TEST_CASE("work items: full items while each thread has two more to take, then smaller, down to 24 rows") {
  // Q, K, V at L = 512 (1536 rows in all), items of at most 256, two threads. What is left
  // before each item, over 4 (two items per thread), rounded down to 12 rows while under 256:
  // 1536, 1280, 1024 -> 256; 768 -> 192; 576 -> 144, but K has 64 rows left; 512 -> 128 -> 120;
  // 392 -> 98 -> 96; 296 -> 74 -> 72; 224 -> 56 -> 48; 176 -> 44 -> 36; 140 and less -> 24;
  // the last 20.
  const std::vector<Index> rows = {512, 512, 512};
  const auto blocks = al::detail::row_blocks(rows, 256, 2);
  check_cover(blocks, rows, 256);
  CHECK(sizes_of(blocks, 0) == std::vector<Index>{256, 256});
  CHECK(sizes_of(blocks, 1) == std::vector<Index>{256, 192, 64});
  CHECK(sizes_of(blocks, 2) == std::vector<Index>{120, 96, 72, 48, 36, 24, 24, 24, 24, 24, 20});

  SUBCASE("one thread: items of the full height") {
    const auto one = al::detail::row_blocks(rows, 256, 1);
    check_cover(one, rows, 256);
    for (size_t s = 0; s < 3; ++s) CHECK(sizes_of(one, s) == std::vector<Index>{256, 256});
  }
  SUBCASE("segments shorter than an item, and more threads") {
    const std::vector<Index> short_rows = {10, 100, 7, 1000};
    for (int threads : {2, 3, 8}) {
      const auto cut = al::detail::row_blocks(short_rows, 64, threads);
      check_cover(cut, short_rows, 64);
      CHECK(cut.back().count <= 24);
      // Within the last segment, items never grow.
      const auto last = sizes_of(cut, 3);
      for (size_t i = 1; i < last.size(); ++i) CHECK(last[i] <= last[i - 1]);
    }
  }
}

TEST_CASE("work items: a trace cut for one thread equals one cut for two, bit for bit") {
  if (omp_get_max_threads() < 2) return;  // OMP_NUM_THREADS=1: only one cut to compare
  // L = 300: for two threads Q's rows are cut [0, 216) [216, 300), for one [0, 256) [256, 300).
  // d_k 32 (heads of whole 16-column panels, projected straight into the heads) and d_k 12.
  for (const auto& [d_model, heads] : {std::pair<Index, Index>{64, 2}, {48, 4}}) {
    CAPTURE(d_model);
    const al::Session s = attention_test::random_projection_session(1, 300, d_model, heads, 410);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const auto one = attention_test::compute_ok(s);
    omp_set_num_threads(saved);
    const auto two = attention_test::compute_ok(s);
    for (al::Stage stage : al::kAllStages) {
      REQUIRE(one->has(stage) == two->has(stage));
      if (one->has(stage)) CHECK_MESSAGE(one->stage(stage) == two->stage(stage), al::stage_name(stage));
    }
  }
}
