#pragma once
// How a trace's GEMMs over rows (the projections, W_O) are cut into work items for the
// thread team (base/thread_team.hpp). Integer arithmetic only: every kernel copy cuts alike.
#include <vector>

#include "base/tensor.hpp"

namespace al::detail {

// Rows per full work item of GEMMs (rows · weight) over inputs of `rows_per_input` rows: each
// item reads the whole packed weight, so items are as tall as they can be (256, 128 or 64 rows)
// while both threads still get two each.
Index projection_rows(const std::vector<Index>& rows_per_input);

// Into how many column blocks to cut GEMMs of `row_blocks` full row items in all, `width`
// columns each: enough for both threads to stay busy when the rows are few (a 64-token
// sequence is one row item per projection), none when there are rows enough.
Index column_blocks(Index row_blocks, Index width);

// A work item: rows [first, first + count) of segment `segment` (a GEMM, or one column block of it).
struct RowBlock {
  size_t segment;
  Index first, count;
};

// Cuts segments of `rows_per_segment` rows into work items, in order, for `threads` threads:
// `most` rows each while what is left gives every thread two more, then smaller ones (half a
// thread's share of what is left, in whole 12-row steps of the tiles, down to 24 rows), so that
// the thread that finishes first waits for the other at most a small item. With equal items it
// waited up to a whole one: at L = 512 the caller spent 6 % of its time so, the helper's core
// running the same tiles 15 % slower (docs/performance.md, issue 16's fifty-third pass). A row's
// product is the same chain of multiply-adds in any item, so the cut changes no bit. One thread:
// items of `most` rows.
std::vector<RowBlock> row_blocks(const std::vector<Index>& rows_per_segment, Index most, int threads);

}  // namespace al::detail
