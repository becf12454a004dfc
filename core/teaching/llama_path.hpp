#pragma once
// The lesson "from the seeds' multi-head attention to a Llama block, one change at a
// time": four sessions built from the llama-block preset's weights, each one option
// away from the one before (MHA → causal → grouped-query K/V → RoPE), and what each
// change did to the numbers, measured on the two traces (never typed in a text).
#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/trace.hpp"

namespace al {

struct PathStep {
  std::string id;   // "mha", "causal", "gqa", "rope": i18n lessons.path_<id>.*
  Session session;
};

// mha: 8 heads with their own K/V (llama-block's K/V columns repeated for each query
// head of a group, as repeat_kv does), no mask, no positions; causal: + the causal
// mask; gqa: + 2 K/V heads shared by groups of 4 (llama-block's own W_K, W_V); rope:
// + RoPE half, i.e. llama-block itself.
Result<std::vector<PathStep>> llama_path();

// What one step changed, from the trace before to the trace after.
struct PathChange {
  double max_weight_change = 0;  // largest |Δ weight| over every head and cell
  double max_output_change = 0;  // largest |Δ output|
  Index newly_masked = 0;        // cells (over all heads) masked after but not before
  Index kv_floats_before = 0;    // K and V floats a decoder caches per token: 2·h_kv·d_k
  Index kv_floats_after = 0;
};
PathChange path_change(const Trace& before, const Trace& after);

}  // namespace al
