// The backward pass's large products (dConcat, dW_O, db_O, dX, dW_Q/K/V, their biases) against
// explicit double loops over the trace and the kept stage gradients, at sizes where they run
// on the thread team, in row and column blocks, with widths that are not whole panels: the
// finite-difference tests (test_backward.cpp) cover every option, but only on tiny shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "attention_reference.hpp"
#include "numerics/backward.hpp"

using namespace attention_test;
using al::Index;
using al::Stage;

namespace {

using Element = std::function<double(Index, Index)>;

// ours (m, n), rows ld apart from `first`, against Σ_p a(i, p) · b(p, j) over p < k in double:
// within 2e-5 of Σ_p |a · b| (float rounding grows with the terms' sizes, not their sum).
void check_product(const std::string& what, const float* ours, Index ld, Index m, Index n, Index k, const Element& a,
                   const Element& b) {
  INFO(what);
  Index wrong = 0;
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < n; ++j) {
      double sum = 0, size = 0;
      for (Index p = 0; p < k; ++p) {
        sum += a(i, p) * b(p, j);
        size += std::abs(a(i, p) * b(p, j));
      }
      if (!(std::abs(ours[i * ld + j] - sum) <= 2e-5 * size + 1e-7)) ++wrong;
    }
  CHECK(wrong == 0);
}

// Element (row, column) of a (rows, cols) row-major tensor.
Element of(const al::Tensor& t) {
  return [&t](Index r, Index c) { return double(t.data[size_t(r * t.cols() + c)]); };
}

// A (B, heads, L, d_k) stage gradient read in model layout: row b·L + l, column head·d_k + j.
Element model_layout(const al::Tensor& heads) {
  const Index h = heads.dim(1), len = heads.dim(2), d_k = heads.dim(3);
  return [&heads, h, len, d_k](Index row, Index column) {
    const Index b = row / len, l = row % len, head = column / d_k, j = column % d_k;
    return double(heads.data[size_t(((b * h + head) * len + l) * d_k + j)]);
  };
}

Element transposed(const Element& e) {
  return [e](Index i, Index j) { return e(j, i); };
}

Element ones() {
  return [](Index, Index) { return 1.0; };
}

// Checks every product of a session's backward pass. Fused: W_qkv (d, 3d), Q | K | V.
void check_products(const al::Session& s) {
  const auto trace = compute_ok(s);
  const al::Tensor upstream = al::random_normal({trace->dims.batch, trace->dims.len_q, s.config.d_model}, 77);
  auto grads = al::backward(s, *trace, upstream);
  REQUIRE(grads);
  const al::Dims& d = trace->dims;
  const Index dm = d.d_model, rows_q = d.batch * d.len_q, rows_kv = d.batch * d.len_kv;
  const Element g = [&](Index r, Index c) { return double(upstream.data[size_t(r * dm + c)]); };
  const al::Tensor& w_o = *s.weights.w_o;
  const al::Tensor& concat = trace->stage(Stage::Concat);

  check_product("dConcat = G · W_Oᵀ", grads->stage(Stage::Concat).data.data(), dm, rows_q, dm, dm, g,
                transposed(of(w_o)));
  check_product("dW_O = concatᵀ · G", grads->input("w_o")->data.data(), dm, dm, dm, rows_q,
                transposed(of(concat)), g);
  check_product("db_O = Σ rows of G", grads->input("b_o")->data.data(), dm, 1, dm, rows_q, ones(), g);

  const bool cross = s.config.attention == al::AttentionKind::Cross, fused = s.weights.fused();
  const al::Tensor& x_q = *s.x;
  const al::Tensor& x_kv = cross ? *s.x_kv : *s.x;
  const Element dq = model_layout(grads->stage(Stage::Q)), dk = model_layout(grads->stage(Stage::K)),
                dv = model_layout(grads->stage(Stage::V));
  const Index kv_width = d.kv_heads * d.d_k;
  // W_i (d, w_i) as elements: its own tensor, or columns of W_qkv.
  auto weight = [&](const al::TensorPtr& own, Index column) -> Element {
    if (!fused) return of(*own);
    const al::Tensor& w = *s.weights.w_qkv;
    return [&w, column](Index r, Index c) { return double(w.data[size_t(r * w.cols() + column + c)]); };
  };
  const Element w_q = weight(s.weights.w_q, 0), w_k = weight(s.weights.w_k, dm), w_v = weight(s.weights.w_v, 2 * dm);

  // dX = Σ dP_i · W_iᵀ over the projections that read X, checked as one product:
  // [dQ | dK | dV] · [W_Q | W_K | W_V]ᵀ.
  const Index width_q = dm, width = width_q + 2 * kv_width;
  const Element dp_self = [&](Index r, Index p) {
    if (p < width_q) return dq(r, p);
    return p < width_q + kv_width ? dk(r, p - width_q) : dv(r, p - width_q - kv_width);
  };
  const Element w_self_t = [&](Index p, Index c) {
    if (p < width_q) return w_q(c, p);
    return p < width_q + kv_width ? w_k(c, p - width_q) : w_v(c, p - width_q - kv_width);
  };
  if (!cross) {
    check_product("dX = [dQ dK dV] · [W_Q W_K W_V]ᵀ", grads->input("x")->data.data(), dm, rows_q, dm, width, dp_self,
                  w_self_t);
  } else {
    check_product("dX_q = dQ · W_Qᵀ", grads->input("x_q")->data.data(), dm, rows_q, dm, dm, dq, transposed(w_q));
    const Element dp_kv = [&](Index r, Index p) { return p < kv_width ? dk(r, p) : dv(r, p - kv_width); };
    const Element w_kv_t = [&](Index p, Index c) { return p < kv_width ? w_k(c, p) : w_v(c, p - kv_width); };
    check_product("dX_kv = [dK dV] · [W_K W_V]ᵀ", grads->input("x_kv")->data.data(), dm, rows_kv, dm, 2 * kv_width,
                  dp_kv, w_kv_t);
  }

  // dW_i = xᵀ · dP_i and db_i = Σ rows of dP_i, in the session's own names and columns.
  struct Target {
    const char* weight;
    const char* bias;
    Index column, width, rows;
    const al::Tensor& x;
    Element dp;
  };
  const Target targets[3] = {{"w_q", "b_q", 0, dm, rows_q, x_q, dq},
                             {"w_k", "b_k", dm, kv_width, rows_kv, x_kv, dk},
                             {"w_v", "b_v", 2 * dm, kv_width, rows_kv, x_kv, dv}};
  for (const Target& t : targets) {
    const al::Tensor& dw = *grads->input(fused ? "w_qkv" : t.weight);
    const al::Tensor& db = *grads->input(fused ? "b_qkv" : t.bias);
    const Index first = fused ? t.column : 0;
    check_product(std::string("d") + t.weight, dw.data.data() + first, dw.cols(), dm, t.width, t.rows,
                  transposed(of(t.x)), t.dp);
    check_product(std::string("d") + t.bias, db.data.data() + first, 0, 1, t.width, t.rows, ones(), t.dp);
  }
}

}  // namespace

TEST_CASE("backward products: row and column blocks, widths not whole panels, grouped K/V") {
  // d_model 264 = 16.5 panels; 40 rows of X make one row block, so dX is cut into column blocks.
  check_products(with_kv_heads(random_projection_session(2, 20, 264, 4, 3), 2, 9));
  // 300 rows: five row blocks for dX; dW's 40 columns, two and a half panels.
  check_products(random_projection_session(1, 300, 40, 2, 5));
}

TEST_CASE("backward products: cross attention with fused W_qkv, queries and keys of different lengths") {
  al::Session s = random_projection_session(2, 20, 264, 4, 13);
  s.config.attention = al::AttentionKind::Cross;
  s.x_kv = random_tensor({2, 45, 264}, 17);
  s.weights.w_qkv = random_tensor({264, 3 * 264}, 19, 1.0 / std::sqrt(264.0));
  s.weights.b_qkv = random_tensor({3 * 264}, 23, 0.1);
  s.weights.w_q = s.weights.w_k = s.weights.w_v = nullptr;
  s.weights.b_q = s.weights.b_k = s.weights.b_v = nullptr;
  check_products(s);
}
