#pragma once
// How every window writes a number (lab_number), and the numbers the
// FlashAttention and linear-attention labs show beside the results
// of flash_attention.hpp and linear_attention.hpp: how far two results are
// apart, what the tiled computation of one head holds in memory, and the
// operation counts of both attention forms over a range of sequence lengths.
#include <string>
#include <vector>

#include "numerics/flash_attention.hpp"
#include "numerics/linear_attention.hpp"
#include "base/tensor.hpp"

namespace al {

// A number as a learner reads it, the same in every window and explanation:
// 4 significant digits, a whole number with ".0" ("1.0", "0.7071"), a true
// minus sign ("−2.25", as in "−∞"), exponents as written by hand ("−1e9",
// "2.5e-5"), "NaN", "∞"; −0 is "0.0".
std::string lab_number(double v);
// A heatmap cell's value as its text reads (compact: in the cell; else in the tooltip):
// two decimals in a cell, four in a tooltip, three significant digits from 100 on (and
// in a tooltip under 0.005), "NaN", "−∞", never "-0.00". The quiz works answers out from
// these texts (value_as_shown), so the screen and the quiz read one rule.
std::string cell_value_text(float v, bool compact);
// RoPE's base as Settings and papers write it: "10000", not "1e4"; lab_number if not whole.
std::string rope_base_text(double base);
// A memory size: "545 B", "812.5 KiB", "30.0 MiB", "1.2 GiB".
std::string bytes_text(Index bytes);

// max |a_i − b_i| over n values. NaN at the same place in both counts as equal
// (a fully masked row is NaN in every method); NaN in only one is +∞.
double max_abs_difference(const float* a, const float* b, Index n);

// a − b element by element (same shape), NaN where both are NaN → 0.
Tensor difference(const Tensor& a, const Tensor& b);

// The bytes the tiled computation of one head holds besides Q, K and V, part
// by part; their sum is flash_step_held_bytes(). Beside them, the bytes of one
// full (Lq, Lk) matrix, which the tiled computation never stores.
struct FlashMemory {
  Index output_bytes = 0;       // the output accumulator, Lq·d_k floats
  Index statistics_bytes = 0;   // m and ℓ of every query row, 2·Lq floats
  Index tile_bytes = 0;         // one scores tile, Tq·Tk floats
  Index held_bytes = 0;         // the three above
  Index full_matrix_bytes = 0;  // one Lq·Lk matrix of scores or weights
};
FlashMemory flash_memory(Index len_q, Index len_kv, Index d_k, const FlashTiles& tiles);

// Multiply-adds of softmax and linear attention for one head of width d_k at
// sequence lengths n = step, 2·step, ..., n_max (Lq = Lk = n), from attention_costs().
struct CostCurve {
  std::vector<Index> lengths;
  std::vector<double> softmax_multiply_adds;  // O(n²·d)
  std::vector<double> linear_multiply_adds;   // O(n·d²)
};
CostCurve cost_curve(Index d_k, Index n_max, int points);

// The sequence length from which linear attention needs fewer multiply-adds
// than softmax attention for one head of width d_k (Lq = Lk = n); 0 if d_k ≤ 0.
Index linear_break_even_length(Index d_k);

}  // namespace al
