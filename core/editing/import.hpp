#pragma once
// Bringing a matrix from a file into a session: a .npy or CSV file into X, a
// weight, Q/K/V or a mask, checked against the shape the session needs.
#include <string>

#include "editing/edits.hpp"
#include "base/error.hpp"
#include "model/session.hpp"

namespace al {

struct ImportOptions {
  // Weights (W_Q, W_K, W_V, W_O, W_qkv) stored out x in, as nn.Linear.weight
  // and nn.MultiheadAttention.in_proj_weight are: transposed on the way in.
  // Ignored for the other inputs.
  bool torch_layout = false;
};

// The shape `id` must have in `s` (math layout), e.g. {B, Lq, d_model} for X,
// {d_model, 3*d_model} for W_qkv, {Lq, Lk} for the custom mask (B x Lq x Lk is
// accepted too).
std::vector<Index> expected_import_shape(const Session& s, InputId id);

// Checks `matrix` against the session and returns the session with it in place
// (through with_input, so a fused session's W_Q block lands in W_qkv). Shapes
// accepted besides the exact one: a batch of one without its batch axis, batch
// items stacked as rows (B*L x d, as csv_text writes them), a bias as one row or
// one column, key padding of one item as a 1-D row. A shape that does not fit
// names both, e.g. "W_Q must be 8x8 (d_model x d_model); w.npy holds 8x16".
// Mask values must be 0 or 1. `source` names the file in messages.
Result<Session> import_matrix(const Session& s, InputId id, const Tensor& matrix, const std::string& source,
                              const ImportOptions& options = {});
// Reads `path` (.npy, or .csv / .txt as CSV) and imports it.
Result<Session> import_matrix_file(const Session& s, InputId id, const std::string& path,
                                   const ImportOptions& options = {});

}  // namespace al
