#include "teaching/table_text.hpp"

#include "teaching/lab_numbers.hpp"

namespace al {

namespace {

std::string label_of(const std::vector<std::string>& labels, Index i) {
  const size_t k = static_cast<size_t>(i);
  return k < labels.size() && !labels[k].empty() ? labels[k] : std::to_string(i);
}

// A '|' would end a Markdown cell.
std::string markdown_escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string latex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}':
        out += '\\';
        out += c;
        break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

// lab_number writes a true minus sign (U+2212); LaTeX math wants '-'.
std::string latex_number(double v) {
  std::string text = lab_number(v);
  const std::string minus = "\u2212";
  for (size_t at = text.find(minus); at != std::string::npos; at = text.find(minus)) text.replace(at, minus.size(), "-");
  if (text == "\u221e" || text == "-\u221e") return "$" + std::string(text[0] == '-' ? "-" : "") + "\\infty$";
  return "$" + text + "$";
}

}  // namespace

std::string markdown_table(const Tensor& m, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& col_labels, const std::string& corner) {
  std::string out = "| " + markdown_escape(corner) + " |";
  for (Index c = 0; c < m.cols(); ++c) out += " " + markdown_escape(label_of(col_labels, c)) + " |";
  out += "\n|---|";
  for (Index c = 0; c < m.cols(); ++c) out += "---:|";
  out += "\n";
  for (Index r = 0; r < m.rows(); ++r) {
    out += "| **" + markdown_escape(label_of(row_labels, r)) + "** |";
    for (Index c = 0; c < m.cols(); ++c) out += " " + lab_number(m.data[static_cast<size_t>(r * m.cols() + c)]) + " |";
    out += "\n";
  }
  return out;
}

std::string latex_table(const Tensor& m, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const std::string& corner) {
  std::string out = "\\begin{tabular}{l|" + std::string(static_cast<size_t>(m.cols()), 'r') + "}\n" +
                    latex_escape(corner);
  for (Index c = 0; c < m.cols(); ++c) out += " & " + latex_escape(label_of(col_labels, c));
  out += " \\\\\n\\hline\n";
  for (Index r = 0; r < m.rows(); ++r) {
    out += latex_escape(label_of(row_labels, r));
    for (Index c = 0; c < m.cols(); ++c) out += " & " + latex_number(m.data[static_cast<size_t>(r * m.cols() + c)]);
    out += " \\\\\n";
  }
  return out + "\\end{tabular}\n";
}

}  // namespace al
