// attention-lab: dispatches the headless commands (trace, grad, decode, train, export-torch,
// --list-presets, --help, --version) and hands everything else to the window.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli_export_torch.hpp"
#include "cli_decode.hpp"
#include "cli_grad.hpp"
#include "cli_train.hpp"
#include "cli_trace.hpp"
#include "base/heap_policy.hpp"
#include "io/session_io.hpp"
#include "numerics/kernel_dispatch.hpp"
#ifdef ATTENTION_LAB_HAS_GUI
#include "gui/shell/gui.hpp"
#endif

namespace {

constexpr const char* kHelp =
    "Attention Lab: watch softmax(QK^T / sqrt(d_k)) V computed step by step on numbers you can edit.\n"
    "\n"
    "usage:\n"
    "  attention-lab [preset | session.json]     open the window (default preset: \"default\")\n"
    "  attention-lab trace <preset | session.json> --json\n"
    "                                            print every stage as JSON (no window needed)\n"
    "  attention-lab trace <preset | session.json> --summary\n"
    "                                            print each stage's shape and range, memory, compute_ms\n"
    "  attention-lab grad <preset | session.json> [--upstream G.npy] --json\n"
    "                                            print the gradient of L = sum(output * G) (G: all\n"
    "                                            ones, or the output-shaped .npy) for every input,\n"
    "                                            weight (math layout) and stage\n"
    "  attention-lab decode <preset | session.json> --json\n"
    "                                            run a causal session token by token with a KV cache\n"
    "                                            (a rolling cache with a sliding window) and print each step\n"
    "  attention-lab train --task NAME [--steps N] [--seed S] [--positions P] [--out session.json] --json\n"
    "                                            train a one-layer attention model on a toy task\n"
    "                                            (previous_token, max_so_far, duplicate; positions\n"
    "                                            learned, sinusoidal or rope) and print its loss\n"
    "                                            curve and held-out accuracy\n"
    "  attention-lab export-torch <preset | session.json> --out script.py\n"
    "                                            write a PyTorch script that rebuilds every stage\n"
    "  attention-lab screenshot <preset | session.json> --stage S --out file.png\n"
    "                [--size WxH] [--lang en|zh] [--head N]\n"
    "                                            render one stage's view to a PNG (needs a display,\n"
    "                                            e.g. run under xvfb-run)\n"
    "                [--export-heatmap NAME --heatmap-out heatmap.png [--slide-width W]]\n"
    "                                            also save one heatmap (e.g. weights.h0) as a PNG\n"
    "                                            in its on-screen colours; with --slide-width, a\n"
    "                                            slide picture W pixels wide\n"
    "  attention-lab --list-presets              the built-in examples, one per line\n"
    "  attention-lab --help                      this text\n"
    "  attention-lab --version                   the version\n"
    "\n"
    "Stages: x_pos x_kv_pos q k v q_rot k_rot scores scaled biased masked weights dropped context concat\n"
    "output (x_pos and x_kv_pos with sinusoidal positions, q_rot and k_rot with RoPE, biased with ALiBi).\n"
    "Session files: see docs/session-format.md.\n";

int list_presets() {
  for (const al::PresetInfo& p : al::list_presets()) std::printf("%-20s %s\n", p.name.c_str(), p.description.c_str());
  return 0;
}

// The subcommands, for the suggestion after a misspelt one.
constexpr const char* kSubcommands[] = {"trace", "grad", "decode", "train", "export-torch", "screenshot"};

// Edits (insert, delete, replace) that turn a into b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The subcommand `word` most likely meant, ignoring case: one it begins (export, screen), or
// one a couple of typos away (Trace, tarce); empty when none is close.
std::string closest_subcommand(const std::string& word) {
  std::string lower = word, best;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t best_distance = 3;
  for (const char* command : kSubcommands) {
    const std::string name = command;
    const size_t distance = lower.size() >= 4 && name.rfind(lower, 0) == 0 ? 0 : edit_distance(lower, name);
    if (distance < best_distance) best = name, best_distance = distance;
  }
  return best;
}

bool is_preset(const std::string& name) {
  for (const al::PresetInfo& p : al::list_presets())
    if (p.name == name) return true;
  return false;
}

// `attention-lab export default` read "export" as a session and then said two sessions were
// given: a first word that is no file, preset or path, followed by another word, is a
// misspelt subcommand.
std::optional<std::string> misspelt_subcommand(int argc, char** argv) {
  if (argc < 3 || argv[2][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  std::error_code error;
  if (word.empty() || word[0] == '-' || word == "screenshot" || word.find_first_of("./") != std::string::npos ||
      std::filesystem::exists(word, error) || is_preset(word))
    return std::nullopt;
  std::string subcommands;
  for (const char* command : kSubcommands) subcommands += (subcommands.empty() ? "" : ", ") + std::string(command);
  const std::string guess = closest_subcommand(word);
  return "'" + word + "' is not a subcommand, a preset or a file" +
         (guess.empty() ? "" : " (did you mean " + guess + "?)") + "; the subcommands are " + subcommands +
         " (see attention-lab --help)";
}

int open_window(int argc, char** argv) {
#ifdef ATTENTION_LAB_HAS_GUI
  return al::gui::main(argc, argv);
#else
  (void)argc;
  (void)argv;
  std::cerr << "attention-lab: error: this build has no window (configured with ATTENTION_LAB_BUILD_GUI=OFF); "
               "the headless commands still work, see attention-lab --help\n";
  return 1;
#endif
}

int dispatch(int argc, char** argv) {
  if (argc < 2) return open_window(argc, argv);
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kHelp;
#ifdef ATTENTION_LAB_HAS_GUI
    std::cout << "\nThe window's options (attention-lab [preset | session.json] ..., and screenshot):\n"
              << al::gui::usage_text();
#endif
    return 0;
  }
  if (command == "--version" || command == "-V") {
    std::cout << "attention-lab " << ATTENTION_LAB_VERSION << "\n"
              << "kernels: " << al::detail::kernel_path() << " (ATTENTION_LAB_CPU=baseline or avx2 caps them)\n";
    return 0;
  }
  if (command == "--list-presets") return list_presets();
  if (command == "trace") return al::cli::run_trace(argc, argv);
  if (command == "train") return al::cli::run_train(argc, argv);
  if (command == "grad") return al::cli::run_grad(argc, argv);
  if (command == "decode") return al::cli::run_decode(argc, argv);
  if (command == "export-torch") return al::cli::run_export_torch(argc, argv);
  if (const auto problem = misspelt_subcommand(argc, argv)) {
    std::cerr << "attention-lab: error: " << *problem << "\n";
    return 2;
  }
#ifdef ATTENTION_LAB_HAS_GUI
  for (int i = 1; i < argc; ++i)  // `attention-lab default --help`, `screenshot --help`: the window's options
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << al::gui::usage_text();
      return 0;
    }
#endif
  return open_window(argc, argv);  // a preset, a session path, `screenshot`, or window options
}

// libgomp reads OMP_WAIT_POLICY once, when it is loaded, before main() runs. Its
// default lets idle threads spin, which on a 2-core machine starves the renderer
// and made a tiny trace take 10-30 ms instead of 0.04 ms. So the process
// re-executes itself once with the passive policy; a user's own setting wins.
void ensure_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: run on with the default policy
}

}  // namespace

int main(int argc, char** argv) {
  ensure_passive_openmp(argv);
  al::keep_freed_memory_in_heap();  // before anything is allocated and freed
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "attention-lab: error: out of memory; try a smaller session (shorter sequences, smaller batch)\n";
  } catch (const std::exception& e) {
    std::cerr << "attention-lab: error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "attention-lab: error: an unexpected failure\n";
  }
  return 1;
}
