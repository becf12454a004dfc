#pragma once
// FlashAttention-style computation: the same output as compute(), but the
// (Lq, Lk) matrices are never stored. Queries and keys are cut into tiles; each
// query row keeps a running max m and a running sum ℓ of exp(score − m), and its
// partial output is rescaled by exp(m_old − m_new) whenever m grows (online
// softmax). Extra memory is O(n): Q, K, V and the output, plus one tile.
//
// Masks, fill value and dropout are honoured as in the full trace: a fully
// masked row with a -inf fill gives NaN, with a finite fill the mean of V.
#include <vector>

#include "base/error.hpp"
#include "model/session.hpp"
#include "model/trace.hpp"

namespace al {

struct FlashTiles {
  Index queries = 64;  // rows of a query tile
  Index keys = 256;    // rows of a key tile (256 measured faster than 64 or 128 at L = 1024)
};

struct FlashResult {
  Dims dims;
  Tensor output;           // (B, Lq, d_model), equal to the full trace's Output stage
  Index extra_bytes = 0;   // peak bytes held besides the session and the output (see flash_extra_bytes)
  Index threads = 1;       // OpenMP threads that each held one tile's scratch
  double compute_ms = 0;
};

// The multi-head output, parallel over (batch, head, query tile) with OpenMP.
Result<FlashResult> flash_attention(const Session& session, const FlashTiles& tiles = {});

// Bytes flash_attention() holds besides its inputs and output:
// Q, K, V in head layout (B·(Lq + 2·Lk)·d_model floats), the concatenated heads
// (B·Lq·d_model) and, per thread, one scores tile (Tq·Tk), one output
// accumulator (Tq·d_k) and m, ℓ, the rescale factors (3·Tq) — linear in L.
Index flash_extra_bytes(const Dims& dims, const FlashTiles& tiles, Index threads);

// ---- step-through for the FlashAttention lab (one batch item, one head) ------

struct FlashStep {
  Index query_tile = 0, key_tile = 0;        // tile indices
  Index query_begin = 0, query_end = 0;      // query rows [begin, end)
  Index key_begin = 0, key_end = 0;          // key rows [begin, end)
  std::vector<float> scores;                 // (rows, keys): scaled and masked scores of the tile
  std::vector<float> m_before, m_after;      // (rows) running max
  std::vector<float> l_before, l_after;      // (rows) running sum of exp(score − m)
  std::vector<float> rescale;                // (rows) exp(m_before − m_after), multiplies ℓ and the partial output
  std::vector<float> partial_output;         // (rows, d_k) unnormalised Σ exp(score − m)·v after the step
};

struct FlashSteps {
  Index batch = 0, head = 0;
  Index len_q = 0, len_kv = 0, d_k = 0;
  FlashTiles tiles;
  std::vector<FlashStep> steps;     // query tile by query tile, key tiles in order
  Tensor context;                   // (Lq, d_k): partial output / ℓ, equal to the trace's Context of (batch, head)
  Tensor row_max, row_sum;          // (Lq): final m and ℓ (ℓ = 0 where no key contributed)
  Index held_bytes = 0;             // see flash_step_held_bytes
  Index plain_bytes = 0;            // bytes the full trace's distinct (Lq, Lk) stages take for this head
};

// Bytes the tiled computation of one head holds besides Q, K, V: the output
// accumulator (Lq·d_k), m and ℓ of every row (2·Lq) and one scores tile (Tq·Tk).
Index flash_step_held_bytes(Index len_q, Index d_k, const FlashTiles& tiles);

// Records every tile step; refuses sizes above kFlashStepMaxCells (the record
// itself keeps every scores tile, which is O(n²)).
constexpr Index kFlashStepMaxCells = 512 * 512;
Result<FlashSteps> flash_attention_steps(const Session& session, Index batch, Index head, const FlashTiles& tiles);

namespace detail {
// The two entries above in another compiled copy (numerics/kernel_dispatch.hpp).
struct FlashKernels {
  decltype(&al::flash_attention) flash_attention;
  decltype(&al::flash_attention_steps) flash_attention_steps;
};
}  // namespace detail

}  // namespace al
