#include "training/toy_tasks.hpp"

#include <algorithm>

#include "base/random.hpp"

namespace al {

namespace {

constexpr Index kLetters = 24;  // a ... x
constexpr Index kLength = 8;
constexpr int kStart = 0;       // duplicate's <s>
constexpr int kNew = 0, kRepeat = 1;

// Uniform symbol in [0, n) for draw `counter` of sequence `sequence`.
int draw(std::uint64_t seed, std::uint64_t sequence, Index position, Index n) {
  const double u = uniform01(splitmix64(seed) ^ (sequence * 0x9E3779B97F4A7C15ull), static_cast<std::uint64_t>(position));
  return std::min(static_cast<int>(u * static_cast<double>(n)), static_cast<int>(n - 1));
}

}  // namespace

const char* toy_task_name(ToyTask task) {
  switch (task) {
    case ToyTask::PreviousToken: return "previous_token";
    case ToyTask::MaxSoFar: return "max_so_far";
    case ToyTask::Duplicate: return "duplicate";
  }
  return "?";
}

std::optional<ToyTask> toy_task_from_name(const std::string& name) {
  for (ToyTask t : {ToyTask::PreviousToken, ToyTask::MaxSoFar, ToyTask::Duplicate})
    if (name == toy_task_name(t)) return t;
  return std::nullopt;
}

std::string toy_task_names() { return "previous_token, max_so_far, duplicate"; }

ToyTaskShape toy_task_shape(ToyTask task) {
  switch (task) {
    case ToyTask::PreviousToken: return {kLetters, kLetters, kLength, true};
    case ToyTask::MaxSoFar: return {kLetters, kLetters, kLength, true};
    case ToyTask::Duplicate: return {kLetters + 1, 2, kLength, true};
  }
  return {};
}

ToyBatch toy_batch(ToyTask task, std::uint64_t seed, std::uint64_t first, Index count) {
  const ToyTaskShape shape = toy_task_shape(task);
  const Index L = shape.length;
  ToyBatch batch{count, L, std::vector<int>(static_cast<size_t>(count * L)),
                 std::vector<int>(static_cast<size_t>(count * L), -1)};
  for (Index b = 0; b < count; ++b) {
    int* tokens = batch.tokens.data() + b * L;
    int* targets = batch.targets.data() + b * L;
    const std::uint64_t sequence = first + static_cast<std::uint64_t>(b);
    switch (task) {
      case ToyTask::PreviousToken:
        for (Index i = 0; i < L; ++i) tokens[i] = draw(seed, sequence, i, kLetters);
        for (Index i = 1; i < L; ++i) targets[i] = tokens[i - 1];
        break;
      case ToyTask::MaxSoFar:
        for (Index i = 0; i < L; ++i) {
          tokens[i] = draw(seed, sequence, i, kLetters);
          targets[i] = i == 0 ? tokens[0] : std::max(targets[i - 1], tokens[i]);
        }
        break;
      case ToyTask::Duplicate: {
        // A small alphabet per sequence (4 to 8 letters) so repeats are common
        // (about half the positions), then <s> followed by letters from it.
        const int letters = 4 + draw(seed, sequence, L, 5);
        tokens[0] = kStart;
        for (Index i = 1; i < L; ++i) {
          tokens[i] = 1 + draw(seed, sequence, i, letters);
          targets[i] = std::find(tokens + 1, tokens + i, tokens[i]) != tokens + i ? kRepeat : kNew;
        }
        break;
      }
    }
  }
  return batch;
}

std::vector<std::string> toy_input_symbols(ToyTask task) {
  std::vector<std::string> symbols;
  if (task == ToyTask::Duplicate) symbols.push_back("<s>");
  for (Index i = 0; i < kLetters; ++i) symbols.push_back(std::string(1, static_cast<char>('a' + i)));
  return symbols;
}

std::vector<std::string> toy_output_symbols(ToyTask task) {
  if (task == ToyTask::Duplicate) return {"new", "repeat"};
  return toy_input_symbols(task);
}

Tensor toy_ideal_pattern(ToyTask task, const std::vector<int>& tokens) {
  const Index L = static_cast<Index>(tokens.size());
  Tensor pattern({L, L});
  for (Index i = 0; i < L; ++i) {
    std::vector<Index> attend;
    switch (task) {
      case ToyTask::PreviousToken: attend = {std::max<Index>(i - 1, 0)}; break;
      case ToyTask::MaxSoFar:
        for (Index j = 0; j <= i; ++j)
          if (tokens[size_t(j)] == *std::max_element(tokens.begin(), tokens.begin() + i + 1)) attend.push_back(j);
        break;
      case ToyTask::Duplicate:
        for (Index j = 1; j < i; ++j)
          if (tokens[size_t(j)] == tokens[size_t(i)]) attend.push_back(j);
        if (attend.empty()) attend = {0};  // no earlier copy: rest on <s>
        break;
    }
    for (Index j : attend) pattern.at({i, j}) = 1.0f / static_cast<float>(attend.size());
  }
  return pattern;
}

IdealShares ideal_shares(const Tensor& weights, const Tensor& ideal) {
  const Index heads = weights.dim(1), L = ideal.dim(0);
  IdealShares shares;
  shares.per_head.assign(static_cast<size_t>(heads), 0.0);
  for (Index i = 1; i < L; ++i) {
    double best = 0;
    for (Index h = 0; h < heads; ++h) {
      double share = 0;
      for (Index j = 0; j < L; ++j)
        if (ideal.at({i, j}) > 0) share += weights.at({0, h, i, j});
      shares.per_head[static_cast<size_t>(h)] += share / static_cast<double>(L - 1);
      best = std::max(best, share);
    }
    shares.best_head += best / static_cast<double>(L - 1);
  }
  return shares;
}

}  // namespace al
