#pragma once
// The training lab's toy tasks: sequences of symbols and, per position, the
// symbol a one-layer attention model should output there. Each is chosen so one
// head solves it with a pattern a learner can read off the heatmap:
//   previous_token  output the token before          -> the head attends i-1 (off-diagonal)
//   max_so_far      output the largest token so far  -> the head attends the maximum (causal)
//   duplicate       is this token a repeat of an earlier one ("repeat"/"new")
//                   -> the head attends the earlier copy, or the start token <s> if none
// Sequences are drawn from a counter-based generator: batch n of seed s is the
// same on every machine.
#include <optional>
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace al {

enum class ToyTask { PreviousToken, MaxSoFar, Duplicate };

const char* toy_task_name(ToyTask task);  // "previous_token", "max_so_far", "duplicate"
std::optional<ToyTask> toy_task_from_name(const std::string& name);
std::string toy_task_names();  // "previous_token, max_so_far, duplicate"

struct ToyTaskShape {
  Index vocab = 0;         // input symbols (duplicate: including <s> at id 0)
  Index output_vocab = 0;  // output symbols
  Index length = 0;        // L
  bool causal = false;     // the model's attention is causal
};
ToyTaskShape toy_task_shape(ToyTask task);

struct ToyBatch {
  Index batch = 0, length = 0;
  std::vector<int> tokens;   // (B, L) input symbol ids
  std::vector<int> targets;  // (B, L) output symbol ids, -1 where nothing is asked (not scored)
};

// `count` sequences; sequence k is drawn from (seed, first + k).
ToyBatch toy_batch(ToyTask task, std::uint64_t seed, std::uint64_t first, Index count);

std::vector<std::string> toy_input_symbols(ToyTask task);   // (vocab)
std::vector<std::string> toy_output_symbols(ToyTask task);  // (output_vocab)

// The pattern the task's ideal head has, for one sequence: (L, L) rows summing
// to 1 over the positions it should attend (the lab shows it beside the learned one).
Tensor toy_ideal_pattern(ToyTask task, const std::vector<int>& tokens);

// How closely learned attention follows an ideal pattern, as the lab says it under the heatmaps.
// A row's share is the weight it puts on the ideal keys (ideal > 0); shares are averaged over the
// rows after the first (row 0 has no earlier token to find: every task's answer there is trivial).
struct IdealShares {
  std::vector<double> per_head;  // (h): each head's mean share
  double best_head = 0;          // the mean over rows of the larger share among the heads
};
// weights (B, h, L, L), batch item 0; ideal (L, L); L ≥ 2.
IdealShares ideal_shares(const Tensor& weights, const Tensor& ideal);

}  // namespace al
