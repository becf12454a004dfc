#include "numerics/work_items.hpp"

#include <algorithm>

namespace al::detail {

Index projection_rows(const std::vector<Index>& rows_per_input) {
  constexpr Index kMin = 64, kMax = 256, kTasksWanted = 4;
  Index rows = kMax;
  auto tasks = [&](Index block) {
    Index n = 0;
    for (Index r : rows_per_input) n += (r + block - 1) / block;
    return n;
  };
  while (rows > kMin && tasks(rows) < kTasksWanted) rows /= 2;
  return rows;
}

Index column_blocks(Index row_blocks, Index width) {
  constexpr Index kTasksWanted = 4, kMinColumns = 128;
  const Index wanted = (kTasksWanted + row_blocks - 1) / row_blocks;
  return std::max<Index>(1, std::min(wanted, width / kMinColumns));
}

std::vector<RowBlock> row_blocks(const std::vector<Index>& rows_per_segment, Index most, int threads) {
  constexpr Index kStep = 12, kTailRows = 24;
  Index left = 0;
  for (Index rows : rows_per_segment) left += rows;
  std::vector<RowBlock> blocks;
  for (size_t s = 0; s < rows_per_segment.size(); ++s)
    for (Index first = 0; first < rows_per_segment[s];) {
      Index share = threads > 1 ? left / (2 * threads) : most;
      if (share < most) share = std::max(share / kStep * kStep, kTailRows);
      const Index count = std::min({most, share, rows_per_segment[s] - first});
      blocks.push_back({s, first, count});
      first += count;
      left -= count;
    }
  return blocks;
}

}  // namespace al::detail
