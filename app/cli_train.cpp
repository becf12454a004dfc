#include "cli_train.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "io/session_io.hpp"
#include "training/training.hpp"
#include "cli_common.hpp"

namespace al::cli {
namespace {

const std::string kUsage =
    "usage: attention-lab train --task NAME [--steps N] [--seed S] [--positions P] [--out session.json] --json\n"
    "  trains embedding + positions -> one attention layer -> unembedding with Adam, and prints\n"
    "  {\"task\", \"steps\", \"loss\": [one per step], \"heldout_accuracy\", \"seconds\"}\n"
    "  tasks: " + toy_task_names() + "\n"
    "  --positions  learned (default), sinusoidal (added to the embeddings), or rope (q and k turned\n"
    "               by position inside the attention)\n"
    "  --out  save the learned attention layer on a held-out sequence as a session\n";

// A whole number in [low, high] from an option's value, or nothing.
std::optional<long long> whole_number(const std::string& text, long long low, long long high) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= low && v <= high) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

int run_train(int argc, char** argv) {
  std::string task_name, out_path, steps_text, seed_text, positions_text;
  bool json = false;
  OptionValues values(argc, argv);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--task" || arg == "--steps" || arg == "--seed" || arg == "--out" || arg == "--positions") {
      std::string& into = arg == "--task"        ? task_name
                          : arg == "--steps"     ? steps_text
                          : arg == "--seed"      ? seed_text
                          : arg == "--positions" ? positions_text
                                                 : out_path;
      if (auto problem = values.take(i, arg, "a value", into)) return usage_error("train: " + *problem, kUsage);
    } else {
      return usage_error("train: unknown argument " + arg, kUsage);
    }
  }
  if (task_name.empty()) return usage_error("train: which task? Give --task (" + toy_task_names() + ").", kUsage);
  if (!json) return usage_error("train: give --json (the only output format).", kUsage);
  const auto task = toy_task_from_name(task_name);
  if (!task) return usage_error("train: unknown task '" + task_name + "'; the tasks are " + toy_task_names(), kUsage);

  TrainingConfig config = default_training(*task);
  if (!steps_text.empty()) {
    const auto steps = whole_number(steps_text, 1, 1000000);
    if (!steps)
      return usage_error("train: --steps must be a whole number from 1 to 1000000, not '" + steps_text + "'", kUsage);
    config.steps = static_cast<int>(*steps);
  }
  if (!seed_text.empty()) {
    const auto seed = whole_number(seed_text, 0, (1ll << 53));
    if (!seed)
      return usage_error("train: --seed must be a whole number from 0 to 2^53, not '" + seed_text + "'", kUsage);
    config.seed = static_cast<std::uint64_t>(*seed);
  }

  if (!positions_text.empty()) {
    if (positions_text == "learned") config.positions = Positions::Learned;
    else if (positions_text == "sinusoidal") config.positions = Positions::Sinusoidal;
    else if (positions_text == "rope") config.positions = Positions::Rope;
    else
      return usage_error("train: --positions is learned, sinusoidal or rope, not '" + positions_text + "'", kUsage);
  }

  // A typo in --out must not cost the minutes of training before the save.
  if (!out_path.empty())
    if (auto problem = cannot_save(out_path)) return fail("train: " + *problem + "; nothing was trained");

  const auto start = std::chrono::steady_clock::now();
  Trainer trainer(config);
  std::string losses;
  for (int s = 0; s < config.steps; ++s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.6g", s ? ", " : "", trainer.step());
    losses += buf;
  }
  const double accuracy = trainer.heldout_accuracy();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::optional<Error> save_error;
  if (!out_path.empty()) save_error = save_session_file(out_path, trainer.heldout_session());

  // Printed even when the save failed: the loss curve and accuracy are the rest of the work.
  std::printf("{\"task\": \"%s\", \"steps\": %d, \"loss\": [%s], \"heldout_accuracy\": %.6g, \"seconds\": %.3f}\n",
              toy_task_name(*task), config.steps, losses.c_str(), accuracy, seconds);
  std::fflush(stdout);
  if (save_error) return fail("train: " + save_error->message + " (the result above was not saved as a session)");
  if (std::ferror(stdout)) return fail("could not write the output");
  return 0;
}

}  // namespace al::cli
