// The desktop app's command line:
//   attention-lab [<preset | session.json>] [flags]
//   attention-lab screenshot <preset | session.json> --stage <name> --out f.png
//                 [--size WxH] [--lang en|zh] [--head N] [flags]
// flags (also for tests): --widgets-out f.json, --save-on-exit f.json, --frames N
#include "shell/options.hpp"
#include "shell/gui.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace al::gui {

const char* usage_text() {
  return "usage: attention-lab [<preset | session.json>] [--lang en|zh] [--stage NAME] [--head N]\n"
         "                     [--size WxH] [--widgets-out FILE] [--save-on-exit FILE] [--frames N]\n"
         "                     [--out FILE.png (a picture of the window when it closes)]\n"
         "       attention-lab screenshot <preset | session.json> --stage NAME --out FILE.png\n"
         "                     [--size WxH] [--lang en|zh] [--head N] [--tab config|matrices|mask]\n"
         "                     [--widgets-out FILE]\n"
         "                  --stage and --tab take comma-separated lists: one picture of each stage with\n"
         "                  each tab, in one window, FILE-STAGE[-TAB].png (and .json for --widgets-out)\n"
         "       --open WINDOW (repeatable) opens a floating window at start: flash, linear, lessons,\n"
         "                  explain, token_lines, heads, diff, export,\n"
         "                  sqrt_dk, mask_fill, softmax_stability, fused_qkv, quiz, decode, rope,\n"
         "                  gradients (the stepper's gradient view), training\n"
         "       --lesson N opens the guided tour at step N (1, 2, ...)\n"
         "       --pin STAGE:BATCH:HEAD:ROW:COL pins a cell at start (HEAD avg: the average)\n"
         "       --snapshot <preset | session.json> opens the diff view with that session's trace as \"before\"\n"
         "       --export-heatmap NAME --heatmap-out FILE.png saves the heatmap NAME (as in --widgets-out\n"
         "                  without \"heatmap.\": weights.h0, scaled.avg, output, input.x, mask) as a PNG when\n"
         "                  it is drawn, in its on-screen colours; fails if it is not at the step shown\n"
         "       --slide-width W with --export-heatmap: a slide picture W pixels wide instead (title,\n"
         "                  token labels, the numbers when they fit, colour bar with its range)\n"
         "       --quiz-hide stage|cell: the quiz hides the whole stage (default) or only the asked cell\n"
         "       --memory-limit BYTES refuses traces over BYTES (default: a share of the machine's memory), so\n"
         "                  a small session can show what a too-large one does\n"
         "       --keep STAGES keeps only these (B, h, Lq, Lk) stages, comma-separated (scores, scaled,\n"
         "                  biased, masked, weights, dropped) and the weights, while the whole trace is\n"
         "                  over the limit\n"
         "       <preset | session.json> --frame-stats [out.json] [--frames N] measures idle-redraw fps,\n"
         "                  fps while head 0's weights are enlarged, zoomed and panned (a scripted wheel\n"
         "                  and drag), fps while an edit is recomputed every frame, edit->visible latency\n"
         "                  (20 edits at least) and start-up (N frames for the idle and recompute phases,\n"
         "                  default 120; shows the weights stage), then quits\n"
         "stages: x, x_pos, qkv (or q, k, v), rope (or q_rot, k_rot), scores, scaled, alibi (or biased),\n"
         "        masked, weights, dropped, context, concat, w_o, output (x_pos, rope and alibi only with\n"
         "        their positions on)\n";
}

namespace {
bool parse_int(const std::string& text, int* out) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return false;
  *out = static_cast<int>(value);
  return true;
}

// Floating windows --open knows, one per line.
const char* const kWindowNames[] = {
    "flash",
    "linear",
    "lessons",
    "explain",
    "token_lines",
    "heads",
    "diff",
    "export",
    "sqrt_dk",
    "mask_fill",
    "softmax_stability",
    "fused_qkv",
    "quiz",
    "decode",
    "rope",
    "gradients",
    "training",
};
bool known_window(const std::string& name) {
  for (const char* known : kWindowNames)
    if (name == known) return true;
  return false;
}
std::string known_window_names() {
  std::string names;
  for (const char* known : kWindowNames) names += (names.empty() ? "" : ", ") + std::string(known);
  return names;
}

// "a,b,,c" -> {a, b, c}; never empty ("" -> {""}, which the caller then rejects by name).
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (items.empty()) items.push_back(text);
  return items;
}

// "dir/name.png" + "weights" -> "dir/name-weights.png" (the suffix before the extension).
std::string with_suffix(const std::string& path, const std::string& suffix) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return has_extension ? path.substr(0, dot) + suffix + path.substr(dot) : path + suffix;
}

// One picture per stage and tab. Several pictures name their files after the stage (and the tab,
// when --tab is given): --out shots/s.png -> shots/s-weights-mask.png; one keeps --out as it is.
void plan_shots(const std::vector<std::string>& stages, const std::vector<std::string>& tabs, Options* options) {
  const std::vector<std::string> tab_list = tabs.empty() ? std::vector<std::string>{""} : tabs;
  const bool several = stages.size() * tab_list.size() > 1;
  for (const auto& stage : stages)
    for (const auto& tab : tab_list) {
      const std::string suffix = several ? "-" + stage + (tab.empty() ? "" : "-" + tab) : "";
      options->shots.push_back({stage, tab, with_suffix(options->out, suffix),
                                options->widgets_out.empty() ? "" : with_suffix(options->widgets_out, suffix)});
    }
  options->out = options->shots.front().out;
  options->widgets_out = options->shots.front().widgets_out;
}
}  // namespace

std::optional<std::string> parse_options(int argc, char** argv, Options* options) {
  int i = 1;
  if (i < argc && std::string(argv[i]) == "screenshot") {
    options->screenshot = true;
    ++i;
  }
  std::vector<std::string> stages, tabs;  // --stage a,b and --tab c,d: a screenshot of each pair
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) -> bool {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--stage") {
      if (!value(&text)) return "--stage needs a stage name";
      stages = split_list(text);
      for (const auto& stage : stages)
        if (!step_from_name(stage)) return "unknown stage '" + stage + "'";
      options->stage = stages.front();
    } else if (arg == "--out") {
      if (!value(&options->out)) return "--out needs a file name";
    } else if (arg == "--size") {
      if (!value(&text)) return "--size needs WxH, e.g. 1600x1000";
      const auto x = text.find('x');
      if (x == std::string::npos || !parse_int(text.substr(0, x), &options->width) ||
          !parse_int(text.substr(x + 1), &options->height) || options->width < 200 ||
          options->height < 150 || options->width > 16384 || options->height > 16384)
        return "--size needs WxH between 200x150 and 16384x16384, got '" + text + "'";
    } else if (arg == "--lang") {
      Language language;
      if (!value(&text) || !parse_language(text, &language)) return "--lang takes en or zh";
      options->language = language;
    } else if (arg == "--head") {
      if (!value(&text) || !parse_int(text, &options->head) || options->head < 0)
        return "--head takes a head index (0, 1, ...)";
    } else if (arg == "--tab") {
      if (!value(&text)) return "--tab takes config, matrices or mask";
      tabs = split_list(text);
      for (const auto& tab : tabs)
        if (tab != "config" && tab != "matrices" && tab != "mask") return "--tab takes config, matrices or mask";
      options->tab = tabs.front();
    } else if (arg == "--open") {
      if (!value(&text) || !known_window(text))
        return "--open takes a window name: " + std::string(known_window_names());
      options->open_windows.push_back(text);
    } else if (arg == "--snapshot") {
      if (!value(&options->snapshot)) return "--snapshot needs a preset or session file";
    } else if (arg == "--pin") {
      if (!value(&options->pin)) return "--pin needs stage:batch:head:row:col, e.g. scores:0:0:1:1";
    } else if (arg == "--export-heatmap") {
      if (!value(&options->export_heatmap)) return "--export-heatmap needs a heatmap name, e.g. weights.h0";
    } else if (arg == "--heatmap-out") {
      if (!value(&options->heatmap_out)) return "--heatmap-out needs a file name";
    } else if (arg == "--slide-width") {
      if (!value(&text) || !parse_int(text, &options->slide_width) || options->slide_width < 320 ||
          options->slide_width > 8192)
        return "--slide-width takes a width in pixels from 320 to 8192";
    } else if (arg == "--quiz-hide") {
      if (!value(&text) || (text != "stage" && text != "cell")) return "--quiz-hide takes stage or cell";
      options->quiz_hide_cell = text == "cell";
    } else if (arg == "--memory-limit") {
      char* end = nullptr;
      const long long bytes = value(&text) ? std::strtoll(text.c_str(), &end, 10) : 0;
      if (text.empty() || *end != '\0' || bytes < 1) return "--memory-limit takes a number of bytes (1 or more)";
      options->memory_limit = static_cast<Index>(bytes);
    } else if (arg == "--keep") {
      if (!value(&text) || !(options->keep = square_stages_from_names(text)))
        return "--keep takes scores, scaled, biased, masked, weights or dropped, comma-separated";
    } else if (arg == "--lesson") {
      if (!value(&text) || !parse_int(text, &options->lesson) || options->lesson < 1)
        return "--lesson takes a step number (1, 2, ...)";
      options->lesson -= 1;
    } else if (arg == "--widgets-out") {
      if (!value(&options->widgets_out)) return "--widgets-out needs a file name";
    } else if (arg == "--save-on-exit") {
      if (!value(&options->save_on_exit)) return "--save-on-exit needs a file name";
    } else if (arg == "--frame-stats") {
      options->frame_stats = true;
      // The JSON path is optional; it is taken only after the session, so that
      // `--frame-stats session.json` still names the session.
      if (!options->source.empty() && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        options->frame_stats_out = argv[++i];
    } else if (arg == "--frames") {
      if (!value(&text) || !parse_int(text, &options->frames) || options->frames < 1)
        return "--frames takes a positive number";
    } else if (arg.rfind("--", 0) == 0) {
      return "unknown option " + arg;
    } else if (options->source.empty()) {
      options->source = arg;
    } else {
      return "more than one session given ('" + options->source + "' and '" + arg + "')";
    }
  }
  if (options->frame_stats && options->screenshot) return "--frame-stats cannot be combined with screenshot";
  if (options->frame_stats && options->stage.empty()) options->stage = "weights";  // the 8 heads' (n, n) heatmaps
  if (options->export_heatmap.empty() != options->heatmap_out.empty())
    return "--export-heatmap NAME and --heatmap-out FILE.png go together";
  if (options->slide_width > 0 && options->export_heatmap.empty())
    return "--slide-width goes with --export-heatmap NAME --heatmap-out FILE.png";
  if (options->screenshot) {
    if (options->source.empty()) return "screenshot needs a preset or session file";
    if (options->out.empty()) return "screenshot needs --out FILE.png";
    if (options->stage.empty()) return "screenshot needs --stage NAME";
    plan_shots(stages, tabs, options);
  } else if (stages.size() > 1 || tabs.size() > 1) {
    return "a list after --stage or --tab is for screenshot (one picture each)";
  }
  return std::nullopt;
}

}  // namespace al::gui
