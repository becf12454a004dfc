#pragma once
// A tiny model trained on a toy task with the app's own forward (compute) and
// backward: token embedding + positions (learned, sinusoidal, or RoPE inside the attention) -> one
// multi-head attention layer -> unembedding -> cross-entropy over the scored
// positions, optimised with Adam. Seeded and deterministic on one machine.
#include <memory>
#include <vector>

#include "model/session.hpp"
#include "training/toy_tasks.hpp"
#include "model/trace.hpp"

namespace al {

enum class Positions { Learned, Sinusoidal, Rope };

struct TrainingConfig {
  ToyTask task = ToyTask::PreviousToken;
  std::uint64_t seed = 1;
  int steps = 0;            // the run's length (0: default_training's)
  Index d_model = 32;
  Index heads = 2;
  Index batch = 64;         // sequences per step
  Index heldout = 512;      // held-out sequences for the accuracy
  double learning_rate = 1e-2;
  Positions positions = Positions::Learned;
};

// The lab's and `attention-lab train`'s defaults for a task.
TrainingConfig default_training(ToyTask task);

class Trainer {
 public:
  explicit Trainer(const TrainingConfig& config);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One Adam step on the next training batch; returns that batch's mean loss.
  double step();
  int steps_done() const;
  const TrainingConfig& config() const;

  // Argmax accuracy over the scored positions of the held-out sequences.
  double heldout_accuracy() const;

  // The attention layer on the first `sequences` held-out sequences as an
  // ordinary session: x = their embeddings (B, L, d_model), the learned
  // weights, tokens = the first sequence's symbols.
  Session heldout_session(Index sequences = 1) const;
  // Their input symbol ids, (sequences, L).
  std::vector<int> heldout_tokens(Index sequences = 1) const;

 private:
  struct Model;
  std::unique_ptr<Model> model_;
};

}  // namespace al
