// Importing a matrix file into a session (see import.hpp).
#include "editing/import.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "io/matrix_io.hpp"

namespace al {
namespace {

struct Target {
  const char* name;  // as the learner sees it in the app
  const char* axes;  // what each axis of the expected shape is
};

Target describe_input(const Session& s, InputId id) {
  const bool cross = s.config.attention == AttentionKind::Cross;
  // With grouped-query heads K and V are num_kv_heads·d_k wide.
  const bool grouped = kv_input_width(s.config) != s.config.d_model;
  switch (id) {
    case InputId::X: return {cross ? "X_q" : "X", cross ? "B x Lq x d_model" : "B x L x d_model"};
    case InputId::XKv: return {"X_kv", "B x Lk x d_model"};
    case InputId::Q: return {"Q", "B x Lq x d_model"};
    case InputId::K: return {"K", grouped ? "B x Lk x num_kv_heads*d_k" : "B x Lk x d_model"};
    case InputId::V: return {"V", grouped ? "B x Lk x num_kv_heads*d_k" : "B x Lk x d_model"};
    case InputId::WQ: return {"W_Q", "d_model x d_model"};
    case InputId::WK: return {"W_K", grouped ? "d_model x num_kv_heads*d_k" : "d_model x d_model"};
    case InputId::WV: return {"W_V", grouped ? "d_model x num_kv_heads*d_k" : "d_model x d_model"};
    case InputId::WO: return {"W_O", "d_model x d_model"};
    case InputId::WQkv: return {"W_qkv", grouped ? "d_model x (d_model + 2*num_kv_heads*d_k)" : "d_model x 3*d_model"};
    case InputId::BQ: return {"b_Q", "d_model"};
    case InputId::BK: return {"b_K", grouped ? "num_kv_heads*d_k" : "d_model"};
    case InputId::BV: return {"b_V", grouped ? "num_kv_heads*d_k" : "d_model"};
    case InputId::BO: return {"b_O", "d_model"};
    case InputId::BQkv: return {"b_qkv", grouped ? "d_model + 2*num_kv_heads*d_k" : "3*d_model"};
    case InputId::MaskCustom: return {"the mask", "Lq x Lk"};
    case InputId::KeyPadding: return {"the key padding mask", "B x Lk"};
  }
  return {"?", "?"};
}

bool is_weight(InputId id) {
  return id == InputId::WQ || id == InputId::WK || id == InputId::WV || id == InputId::WO || id == InputId::WQkv;
}
bool is_mask(InputId id) { return id == InputId::MaskCustom || id == InputId::KeyPadding; }

// `t` in `shape` when it holds the same numbers in C order.
std::optional<Tensor> reshaped(const Tensor& t, std::vector<Index> shape) {
  if (shape_product(shape) != t.size()) return std::nullopt;
  Tensor out = t;
  out.shape = std::move(shape);
  return out;
}

// The shapes besides the exact one that hold the same C-order numbers (see import.hpp).
std::optional<Tensor> fit(const Tensor& t, const std::vector<Index>& expected, InputId id, Index batch) {
  if (t.shape == expected) return t;
  if (expected.size() == 1)  // a bias: also one row or one column
    return t.rank() == 2 && (t.dim(0) == 1 || t.dim(1) == 1) ? reshaped(t, expected) : std::nullopt;
  if (t.cols() != expected.back()) return std::nullopt;
  if (expected.size() == 3)  // B x L x d: also its batch items stacked as rows
    return t.rank() == 2 ? reshaped(t, expected) : std::nullopt;
  if (id == InputId::KeyPadding && t.rank() == 1) return reshaped(t, expected);  // B = 1
  if (id == InputId::MaskCustom) {
    // One mask per batch item: B x Lq x Lk, or its items stacked as rows.
    const std::vector<Index> per_item = {batch, expected[0], expected[1]};
    if (t.shape == per_item || (t.rank() == 2 && t.rows() == batch * expected[0])) return reshaped(t, per_item);
  }
  return std::nullopt;
}

std::string shortest(float v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

Tensor transposed(const Tensor& t) {
  Tensor out({t.cols(), t.rows()});
  out.matrix() = t.matrix().transpose();
  return out;
}

}  // namespace

std::vector<Index> expected_import_shape(const Session& s, InputId id) {
  const Index d = s.config.d_model, kv = kv_input_width(s.config);  // kv = H_kv·d_k
  const Index batch = std::max<Index>(1, s.batch());
  const Index lq = s.len_q(), lk = s.len_kv();
  switch (id) {
    case InputId::X: case InputId::Q: return {batch, lq, d};
    case InputId::XKv: return {batch, lk, d};
    case InputId::K: case InputId::V: return {batch, lk, kv};
    case InputId::WQ: case InputId::WO: return {d, d};
    case InputId::WK: case InputId::WV: return {d, kv};
    case InputId::WQkv: return {d, d + 2 * kv};
    case InputId::BQ: case InputId::BO: return {d};
    case InputId::BK: case InputId::BV: return {kv};
    case InputId::BQkv: return {d + 2 * kv};
    case InputId::MaskCustom: return {lq, lk};
    case InputId::KeyPadding: return {batch, lk};
  }
  return {};
}

Result<Session> import_matrix(const Session& s, InputId id, const Tensor& matrix, const std::string& source,
                              const ImportOptions& options) {
  const Target target = describe_input(s, id);
  const std::vector<Index> expected = expected_import_shape(s, id);
  const bool torch = options.torch_layout && is_weight(id);
  // What the file itself should hold: torch weights are out x in.
  std::vector<Index> expected_in_file = expected;
  if (torch) std::reverse(expected_in_file.begin(), expected_in_file.end());

  std::optional<Tensor> fitted;
  if (!torch) fitted = fit(matrix, expected, id, std::max<Index>(1, s.batch()));
  else if (matrix.shape == expected_in_file) fitted = transposed(matrix);

  if (!fitted) {
    std::string message = std::string(target.name) + (torch ? " in torch layout" : "") + " must be " +
                          shape_string(expected_in_file) + " (" + target.axes + (torch ? ", transposed" : "") + ")";
    if (id == InputId::MaskCustom && s.batch() > 1)
      message += " or " + shape_string({s.batch(), expected[0], expected[1]}) + " (B x Lq x Lk)";
    message += "; " + source + " holds " + shape_string(matrix.shape) + ".";
    // The commonest mix-up: a PyTorch weight (out x in) read as math layout, or the reverse.
    if (is_weight(id) && matrix.rank() == 2 && matrix.dim(0) == expected_in_file[1] &&
        matrix.dim(1) == expected_in_file[0])
      message += torch ? " It looks like math layout (in x out): turn torch layout off."
                       : " It looks like a PyTorch weight (out x in): turn torch layout on to transpose it.";
    else if (expected.size() == 3 || id == InputId::KeyPadding || id == InputId::MaskCustom)
      message += " To import a different length or batch, change the sizes first.";
    return make_error(is_mask(id) ? ErrorCode::MaskShapeMismatch : ErrorCode::ShapeMismatch, message,
                      {{"input", input_name(id)},
                       {"expected", shape_string(expected_in_file)},
                       {"actual", shape_string(matrix.shape)},
                       {"file", source}});
  }
  if (is_mask(id)) {
    for (Index i = 0; i < fitted->size(); ++i) {
      const float v = fitted->data[static_cast<size_t>(i)];
      if (v != 0.0f && v != 1.0f)
        return make_error(ErrorCode::InvalidConfig,
                          std::string(target.name) + " holds only 1 (attend) and 0 (masked), but value " +
                              std::to_string(i + 1) + " of " + source + " is " + shortest(v) + ".",
                          {{"input", input_name(id)}, {"file", source}});
    }
  }
  return with_input(s, id, make_tensor(std::move(*fitted)));
}

Result<Session> import_matrix_file(const Session& s, InputId id, const std::string& path,
                                   const ImportOptions& options) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  Result<Tensor> matrix = make_error(ErrorCode::UnsupportedFormat,
                                     "'" + path + "' is neither a .npy nor a .csv file; save the matrix with "
                                     "numpy.save(path, arr) or numpy.savetxt(path, arr, delimiter=',')",
                                     {{"file", path}});
  if (extension == ".npy") matrix = read_npy(path);
  else if (extension == ".csv" || extension == ".txt") matrix = read_csv(path);
  if (!matrix) return matrix.error();
  const std::string name = std::filesystem::path(path).filename().string();
  return import_matrix(s, id, *matrix, name, options);
}

}  // namespace al
