// A matrix as Markdown and LaTeX tables, checked against text written by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "teaching/table_text.hpp"

using namespace al;

TEST_CASE("table text: Markdown with labels on both axes, numbers as the app writes them") {
  const Tensor m({2, 3}, {0.25f, -0.5f, -0.0f, 1.0f, 1e-20f, -std::numeric_limits<float>::infinity()});
  const std::string expected =
      "| α | the | a\\|b | 2 |\n"  // a pipe in a label is escaped
      "|---|---:|---:|---:|\n"
      "| **cat** | 0.25 | −0.5 | 0.0 |\n"
      "| **1** | 1.0 | 1e-20 | −∞ |\n";
  CHECK(markdown_table(m, {"cat", ""}, {"the", "a|b"}, "α") == expected);
}

TEST_CASE("table text: LaTeX tabular escapes labels and writes numbers in math mode") {
  const Tensor m({1, 2}, {-0.125f, std::numeric_limits<float>::infinity()});
  const std::string expected =
      "\\begin{tabular}{l|rr}\n"
      "w & x\\_1 & 50\\% \\\\\n"
      "\\hline\n"
      "\\#0 & $-0.125$ & $\\infty$ \\\\\n"
      "\\end{tabular}\n";
  CHECK(latex_table(m, {"#0"}, {"x_1", "50%"}, "w") == expected);
}
