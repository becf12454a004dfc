#pragma once
// Multi-head attention as a reshape: head h owns columns [h·d_k, (h+1)·d_k) of
// Q, K, V (and of W_Q, W_K, W_V) and rows [h·d_k, (h+1)·d_k) of W_O, so
// concat·W_O = Σ_h context_h · W_O[h·d_k:(h+1)·d_k, :].
#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct HeadSumCheck {
  Tensor per_head_sum;    // (B, Lq, d_model): Σ_h context_h · W_O rows of h (+ b_O)
  double max_abs_difference = 0;  // max |per_head_sum − output| over finite cells
  bool has_w_o = false;   // without W_O the output is the concatenation itself
};

// Recomputes the output as a sum over heads (in double, from the trace's
// context and the session's W_O/b_O) and compares it with the trace's output.
Result<HeadSumCheck> check_head_sum(const Trace& trace, const Session& session);

}  // namespace al
