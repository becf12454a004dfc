// Soak: 10 000 edits through the session model (cell edits, fills, head and
// size changes, mask fills) mixed with undo and redo, as a learner's long
// session would make them. Prints resident memory after a warm-up and at the
// end; fails (exit 1) when it grew by 5 % or more. Not a ctest: run by
// bench/soak.sh, which records the numbers.
//   attention_soak [preset] [edits]   (default: default, 10000)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "editing/edits.hpp"
#include "io/session_io.hpp"
#include "editing/session_model.hpp"

namespace {

// Resident set size in KiB, from /proc/self/status (VmRSS).
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// One random step: an edit of a cell of X or W_Q, a fill, or undo / redo.
void random_step(al::SessionModel& model, std::mt19937_64& rng, int index) {
  using al::InputId;
  const al::Session& s = model.session();
  std::uniform_int_distribution<int> pick(0, 99);
  const int roll = pick(rng);
  if (roll < 15) {
    model.undo();
  } else if (roll < 25) {
    model.redo();
  } else if (roll < 85) {
    const InputId id = roll < 60 ? InputId::X : InputId::WQ;
    const al::TensorPtr t = al::input(s, id);
    if (!t || t->size() == 0) return;
    std::uniform_int_distribution<al::Index> cell(0, t->size() - 1);
    std::normal_distribution<float> value(0.0f, 1.0f);
    // Runs of 5 edits share a merge key, like a drag.
    model.edit(al::with_cell(s, id, cell(rng), value(rng)), "edit.cell", "drag/" + std::to_string(index / 5));
  } else if (roll < 95) {
    model.edit(al::with_filled(s, InputId::WK, al::Fill::Random, rng()), "edit.randomise");
  } else {
    model.edit(al::with_causal(s, !s.config.mask.causal), "edit.causal");
  }
  model.wait_idle();
  model.poll();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string preset = argc > 1 ? argv[1] : "default";
  const int edits = argc > 2 ? std::atoi(argv[2]) : 10000;
  auto session = al::load_session_or_preset(preset);
  if (!session) {
    std::fprintf(stderr, "soak: %s\n", session.error().message.c_str());
    return 2;
  }
  al::SessionModel model(std::move(*session));
  model.wait_idle();
  model.poll();
  std::mt19937_64 rng(20261123);
  // Long enough to fill the undo history (100 steps of up to 5 merged edits) and
  // the buffer pools: only then is the memory in its steady state.
  const int warm_up = std::min(edits / 2, std::max(edits / 10, 1000));
  for (int i = 0; i < warm_up; ++i) random_step(model, rng, i);
  const long after_warm_up = resident_kib();
  for (int i = warm_up; i < edits; ++i) random_step(model, rng, i);
  const long at_end = resident_kib();
  const double growth = 100.0 * static_cast<double>(at_end - after_warm_up) / static_cast<double>(after_warm_up);
  std::printf("soak: %s, %d edits/undo/redo; resident after %d warm-up steps %ld KiB, at the end %ld KiB "
              "(%+.2f %%)\n",
              preset.c_str(), edits, warm_up, after_warm_up, at_end, growth);
  return growth < 5.0 ? 0 : 1;
}
