#pragma once
// A matrix as a table to paste into slides or notes: Markdown (pipes) or LaTeX
// (tabular), with labels on both axes and numbers as the app writes them
// (lab_number: "−0.25", never "-0.00").
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace al {

// `matrix` is (R, C); `row_labels` / `col_labels` name the rows and columns
// (an entry missing or empty: its index). `corner` goes above the row labels.
std::string markdown_table(const Tensor& matrix, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& col_labels, const std::string& corner);
std::string latex_table(const Tensor& matrix, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const std::string& corner);

}  // namespace al
