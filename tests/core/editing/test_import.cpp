// Importing .npy / CSV matrices into a session: shapes checked and named,
// torch layout transposed, masks 0/1, the values landing where they should.
#include <doctest/doctest.h>

#include <fstream>

#include "numerics/attention.hpp"
#include "editing/import.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "user_dirs_fixture.hpp"

using namespace al;
using al::testing::TempDir;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// rows x cols with value 100*i + j at (i, j): every cell tells where it came from.
Tensor numbered(Index rows, Index cols) {
  Tensor t({rows, cols});
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) t.at({i, j}) = float(100 * i + j);
  return t;
}

std::string write_npy(const TempDir& dir, const std::string& name, const Tensor& t) {
  const std::string path = dir / name;
  REQUIRE_FALSE(write_file_atomic(path, npy_bytes(t)));
  return path;
}

std::string write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

Session preset(const char* name) {
  auto s = load_preset(name);
  REQUIRE(s.ok());
  return *s;
}

}  // namespace

TEST_CASE("import: a weight of the wrong shape names both shapes and what each axis is") {
  TempDir dir;
  const Session s = preset("default");  // d_model 8
  auto r = import_matrix_file(s, InputId::WQ, write_npy(dir, "w.npy", numbered(8, 16)));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::ShapeMismatch);
  CHECK(contains(r.error().message, "W_Q must be 8x8 (d_model x d_model); w.npy holds 8x16."));
}

TEST_CASE("import: a math-layout weight lands unchanged; torch layout is transposed") {
  TempDir dir;
  const Session s = preset("default");
  Tensor w = numbered(8, 8);
  auto math = import_matrix_file(s, InputId::WK, write_npy(dir, "wk.npy", w));
  REQUIRE(math.ok());
  CHECK(*math->weights.w_k == w);
  CHECK(math->weights.w_q == s.weights.w_q);  // nothing else changed

  auto torch = import_matrix_file(s, InputId::WK, write_text(dir, "wk.csv", csv_text(w)), {true});
  REQUIRE(torch.ok());
  for (Index i = 0; i < 8; ++i)
    for (Index j = 0; j < 8; ++j) CHECK(torch->weights.w_k->at({i, j}) == w.at({j, i}));
}

TEST_CASE("import: a torch W_qkv (3d x d) equals importing its three row blocks as separate weights") {
  TempDir dir;
  const Session s = preset("default");  // separate W_Q, W_K, W_V
  Tensor in_proj = numbered(24, 8);     // nn.MultiheadAttention.in_proj_weight: rows Q, K, V
  for (float& v : in_proj.data) v = v / 4000.0f - 0.3f;
  auto fused = import_matrix(s, InputId::WQkv, in_proj, "in_proj.npy", {true});
  REQUIRE(fused.ok());
  REQUIRE(fused->weights.fused());
  CHECK(fused->weights.w_qkv->shape == std::vector<Index>{8, 24});

  Session separate = s;
  const InputId blocks[] = {InputId::WQ, InputId::WK, InputId::WV};
  for (int b = 0; b < 3; ++b) {
    Tensor rows({8, 8});
    for (Index i = 0; i < 8; ++i)
      for (Index j = 0; j < 8; ++j) rows.at({i, j}) = in_proj.at({8 * b + i, j});
    auto next = import_matrix(separate, blocks[b], rows, "block.npy", {true});
    REQUIRE(next.ok());
    separate = *next;
  }
  auto a = compute(*fused), b = compute(separate);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // One fused product and three separate ones round differently, no more.
  const Tensor& fused_out = (*a)->stage(Stage::Output);
  const Tensor& separate_out = (*b)->stage(Stage::Output);
  REQUIRE(fused_out.shape == separate_out.shape);
  for (Index i = 0; i < fused_out.size(); ++i)
    CHECK(fused_out.data[size_t(i)] == doctest::Approx(separate_out.data[size_t(i)]).epsilon(1e-5));
  auto before = compute(s);  // and the import did change the output
  REQUIRE(before.ok());
  CHECK_FALSE(fused_out.data == (*before)->stage(Stage::Output).data);
}

TEST_CASE("import: a PyTorch weight read as math layout (or the reverse) says which switch to flip") {
  const Session s = preset("default");
  auto r = import_matrix(s, InputId::WQkv, numbered(24, 8), "in_proj.npy");
  REQUIRE_FALSE(r.ok());
  CHECK(contains(r.error().message, "W_qkv must be 8x24 (d_model x 3*d_model); in_proj.npy holds 24x8."));
  CHECK(contains(r.error().message, "turn torch layout on"));
  auto back = import_matrix(s, InputId::WQkv, numbered(8, 24), "math.npy", {true});
  REQUIRE_FALSE(back.ok());
  CHECK(contains(back.error().message, "W_qkv in torch layout must be 24x8"));
  CHECK(contains(back.error().message, "turn torch layout off"));
}

TEST_CASE("import: X from a CSV with the batch items stacked as rows; a wrong length is refused") {
  TempDir dir;
  const Session s = preset("padded-batch");  // x: 3 x 5 x 8
  Tensor stacked = numbered(15, 8);
  auto r = import_matrix_file(s, InputId::X, write_text(dir, "x.csv", "# B*L rows\n" + csv_text(stacked)));
  REQUIRE(r.ok());
  CHECK(r->x->shape == std::vector<Index>{3, 5, 8});
  CHECK(r->x->at({2, 4, 7}) == 1407.0f);  // row 2*5+4 = 14 of the file
  CHECK(r->x->at({1, 0, 3}) == 503.0f);

  auto wrong = import_matrix(s, InputId::X, numbered(6, 8), "x6.csv");
  REQUIRE_FALSE(wrong.ok());
  CHECK(contains(wrong.error().message, "X must be 3x5x8 (B x L x d_model); x6.csv holds 6x8."));
  CHECK(contains(wrong.error().message, "change the sizes first"));
}

TEST_CASE("import: biases as a row, a column or 1-D") {
  const Session s = preset("default");
  Tensor column = numbered(8, 1);
  auto r = import_matrix(s, InputId::BO, column, "b.csv");
  REQUIRE(r.ok());
  CHECK(r->weights.b_o->shape == std::vector<Index>{8});
  CHECK(r->weights.b_o->data[7] == 700.0f);
  CHECK(import_matrix(s, InputId::BO, numbered(1, 8), "b.csv").ok());
  auto wrong = import_matrix(s, InputId::BQ, numbered(2, 8), "b2.csv");
  REQUIRE_FALSE(wrong.ok());
  CHECK(contains(wrong.error().message, "b_Q must be 8 (d_model); b2.csv holds 2x8."));
}

TEST_CASE("import: masks must fit Lq x Lk and hold only 0 and 1") {
  TempDir dir;
  const Session s = preset("default");  // 6 tokens
  std::string causal;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) causal += std::string(j <= i ? "1" : "0") + (j == 5 ? "\n" : ",");
  auto ok = import_matrix_file(s, InputId::MaskCustom, write_text(dir, "mask.csv", causal));
  REQUIRE(ok.ok());
  CHECK(ok->config.mask.custom->at({4, 5}) == 0.0f);
  CHECK(ok->config.mask.custom->at({5, 4}) == 1.0f);
  auto trace = compute(*ok);
  REQUIRE(trace.ok());
  CHECK((*trace)->stage(Stage::Weights).at({0, 0, 0, 1}) == 0.0f);  // masked weight is exactly 0

  Tensor half = numbered(6, 6);
  for (float& v : half.data) v = 1.0f;
  half.at({2, 3}) = 0.5f;
  auto bad = import_matrix(s, InputId::MaskCustom, half, "soft.npy");
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.error().message, "only 1 (attend) and 0 (masked)"));
  CHECK(contains(bad.error().message, "value 16 of soft.npy is 0.5"));

  auto shape = import_matrix(s, InputId::MaskCustom, numbered(6, 5), "m.npy");
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error().code == ErrorCode::MaskShapeMismatch);
  CHECK(contains(shape.error().message, "the mask must be 6x6 (Lq x Lk); m.npy holds 6x5."));

  Tensor padding({6}, 1.0f);
  padding.data[5] = 0.0f;
  auto kp = import_matrix(s, InputId::KeyPadding, padding, "kp.npy");
  REQUIRE(kp.ok());
  CHECK(kp->config.mask.key_padding->shape == std::vector<Index>{1, 6});
}

TEST_CASE("import: a per-item mask for a batch, stacked as rows") {
  const Session s = preset("padded-batch");  // B 3, L 5
  Tensor stacked({15, 5}, 1.0f);
  stacked.at({7, 2}) = 0.0f;  // item 1, query 2, key 2
  auto r = import_matrix(s, InputId::MaskCustom, stacked, "m.csv");
  REQUIRE(r.ok());
  CHECK(r->config.mask.custom->shape == std::vector<Index>{3, 5, 5});
  CHECK(r->config.mask.custom->at({1, 2, 2}) == 0.0f);
  auto wrong = import_matrix(s, InputId::MaskCustom, Tensor({4, 5}, 1.0f), "m4.csv");
  REQUIRE_FALSE(wrong.ok());
  CHECK(contains(wrong.error().message, "must be 5x5 (Lq x Lk) or 3x5x5 (B x Lq x Lk); m4.csv holds 4x5."));
}

TEST_CASE("import: unreadable files and unknown extensions") {
  TempDir dir;
  const Session s = preset("default");
  auto missing = import_matrix_file(s, InputId::X, dir / "nope.npy");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::IoError);
  auto excel = import_matrix_file(s, InputId::X, write_text(dir, "x.xlsx", "1,2"));
  REQUIRE_FALSE(excel.ok());
  CHECK(contains(excel.error().message, "neither a .npy nor a .csv file"));
  auto broken = import_matrix_file(s, InputId::X, write_text(dir, "x.npy", "not numpy"));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().code == ErrorCode::ParseError);
}
