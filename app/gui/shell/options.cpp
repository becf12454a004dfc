// The desktop app's command line:
//   attention-lab [<preset | session.json>] [flags]
//   attention-lab screenshot <preset | session.json> --stage <name> --out f.png
//                 [--size WxH] [--lang en|zh] [--head N] [flags]
// flags (also for tests): --widgets-out f.json, --save-on-exit f.json, --frames N
#include "shell/options.hpp"
#include "shell/gui.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "model/stage_heads.hpp"

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
// What an option that takes a value needs, for the message when it is missing; null for the others.
const char* value_needs(const std::string& option) {
  static const std::map<std::string, const char*> kNeeds = {
      {"--stage", "a stage name"},
      {"--out", "a file name"},
      {"--size", "WxH, e.g. 1600x1000"},
      {"--lang", "en or zh"},
      {"--head", "a head index (0, 1, ...)"},
      {"--tab", "config, matrices or mask"},
      {"--open", "a window name"},
      {"--snapshot", "a preset or session file"},
      {"--pin", "stage:batch:head:row:col, e.g. scores:0:0:1:1"},
      {"--export-heatmap", "a heatmap name, e.g. weights.h0"},
      {"--heatmap-out", "a file name"},
      {"--slide-width", "a width in pixels from 320 to 8192"},
      {"--quiz-hide", "stage or cell"},
      {"--memory-limit", "a number of bytes (1 or more)"},
      {"--keep", "a list of stages, e.g. --keep weights"},
      {"--lesson", "a step number (1, 2, ...)"},
      {"--widgets-out", "a file name"},
      {"--save-on-exit", "a file name"},
      {"--frames", "a positive number"},
  };
  const auto found = kNeeds.find(option);
  return found == kNeeds.end() ? nullptr : found->second;
}

// A cell named by --pin [grad.]stage:batch:head:row:col (head "avg": the average over heads; -1,
// the app's own name for it, is taken for the stages without heads, such as output).
struct Pin {
  Stage stage;
  Index batch = 0, row = 0, col = 0;
  std::optional<Index> head;  // none: avg or -1
  bool minus_one = false;
};
std::optional<Index> parse_index(const std::string& text) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return static_cast<Index>(std::stoll(text));
}
std::optional<Pin> parse_pin(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t colon; (colon = text.find(':', begin)) != std::string::npos; begin = colon + 1)
    parts.push_back(text.substr(begin, colon - begin));
  parts.push_back(text.substr(begin));
  if (parts.size() != 5) return std::nullopt;
  const std::string stage_part = parts[0].rfind("grad.", 0) == 0 ? parts[0].substr(5) : parts[0];
  const auto stage = stage_from_name(stage_part);
  const auto batch = parse_index(parts[1]), head = parse_index(parts[2]);
  const auto row = parse_index(parts[3]), col = parse_index(parts[4]);
  const bool minus_one = parts[2] == "-1";
  if (!stage || !batch || !row || !col || (!head && parts[2] != "avg" && !minus_one)) return std::nullopt;
  return Pin{*stage, *batch, *row, *col, head, minus_one};
}

// "heads 0–1", or "only head 0".
std::string indices_text(const std::string& noun, Index count) {
  return count == 1 ? "only " + noun + " 0" : noun + "s 0–" + std::to_string(count - 1);
}

std::string positions_text(const Session& session) {
  const Config& c = session.config;
  switch (c.positional.type) {
    case PositionalType::Sinusoidal:
      return c.mode == InputMode::Direct ? "positions: sinusoidal, which direct mode has no x to add to"
                                         : "positions: sinusoidal";
    case PositionalType::Rope: return "positions: rope";
    case PositionalType::Alibi: return "positions: alibi";
    default: return "positions: none";
  }
}

// Why --pin's cell is not in `session`: its stage is not computed, or an index is past the end.
std::optional<std::string> pin_problem(const std::string& text, const Session& session) {
  const Pin pin = *parse_pin(text);  // checked when parsed
  const Config& c = session.config;
  const bool sinusoidal = c.positional.type == PositionalType::Sinusoidal && c.mode == InputMode::Projection;
  const bool present = always_present(pin.stage) ||
                       (pin.stage == Stage::XPos && sinusoidal) ||
                       (pin.stage == Stage::XKvPos && sinusoidal && c.attention == AttentionKind::Cross) ||
                       ((pin.stage == Stage::QRot || pin.stage == Stage::KRot) &&
                        c.positional.type == PositionalType::Rope) ||
                       (pin.stage == Stage::Biased && c.positional.type == PositionalType::Alibi);
  const std::string stage = stage_name(pin.stage);
  if (!present) return "stage '" + stage + "' is not in this session (" + positions_text(session) + ")";
  const Index heads = stage_is_kv(pin.stage) ? c.kv_heads() : c.num_heads;
  const bool square = std::count(kSquareStages.begin(), kSquareStages.end(), pin.stage) > 0;
  const bool whole = !stage_is_per_head(pin.stage);  // (B, L, d_model)
  const Index rows = stage_rows_are_keys(pin.stage) ? session.len_kv() : session.len_q();
  const Index cols = square ? session.len_kv() : whole ? c.d_model : c.d_model / c.num_heads;
  if (pin.batch >= session.batch())
    return "batch item " + std::to_string(pin.batch) + ": this session has " + indices_text("batch item", session.batch());
  if (pin.minus_one && stage_is_per_head(pin.stage))
    return "head -1: this session has " + indices_text("head", heads) + "; write avg for their average";
  if (pin.head && *pin.head >= heads)
    return "head " + std::to_string(*pin.head) + ": this session has " +
           indices_text(stage_is_kv(pin.stage) ? "K/V head" : "head", heads);
  if (pin.row >= rows) return "row " + std::to_string(pin.row) + ": " + stage + " has " + indices_text("row", rows);
  if (pin.col >= cols)
    return "column " + std::to_string(pin.col) + ": " + stage + " has " + indices_text("column", cols);
  return std::nullopt;
}

// A picture's name: one ending in .png, or with no extension at all.
bool is_png_name(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  std::string lower;
  for (char c : extension) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.empty() || lower == ".png";
}

// An output that is a session given to read (the same file by device and inode, however
// spelled): a screenshot wrote its PNG over the learner's session. --save-on-exit writes a
// session and may name its own file.
std::optional<std::string> overwritten_input(const Options& options) {
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"--out", options.out}, {"--widgets-out", options.widgets_out}, {"--heatmap-out", options.heatmap_out},
      {"--frame-stats", options.frame_stats_out}};
  for (const auto& shot : options.shots) {
    outputs.emplace_back("--out", shot.out);
    outputs.emplace_back("--widgets-out", shot.widgets_out);
  }
  for (const std::string& input : {options.source, options.snapshot})
    for (const auto& [option, path] : outputs) {
      std::error_code error;
      if (!input.empty() && !path.empty() && std::filesystem::equivalent(path, input, error))
        return option + " " + path + " is the session file " + input +
               ": writing there would replace the session; nothing was written, choose another name";
    }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> parse_options(int argc, char** argv, Options* options) {
  int i = 1;
  if (i < argc && std::string(argv[i]) == "screenshot") {
    options->screenshot = true;
    ++i;
  }
  std::vector<std::string> stages, tabs;  // --stage a,b and --tab c,d: a screenshot of each pair
  std::map<std::string, std::string> given;  // option -> its value: each once, but --open
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string text;
    if (const char* needs = value_needs(arg)) {
      // A missing value took the next option as the value, and a second --stage replaced the first.
      const std::string what = arg + " needs " + needs;
      if (i + 1 >= argc) return what;
      text = argv[++i];
      if (text.rfind("--", 0) == 0) return what + ", but the next argument is the option " + text;
      if (text.empty()) return what + ", but it is empty";
      if (arg != "--open" && given.count(arg))
        return arg + " is given twice ('" + given[arg] + "', then '" + text + "'); give it once";
      given[arg] = text;
    }
    if (arg == "--stage") {
      stages = split_list(text);
      for (const auto& stage : stages)
        if (!step_from_name(stage)) return "unknown stage '" + stage + "'";
      options->stage = stages.front();
    } else if (arg == "--out") {
      options->out = text;
    } else if (arg == "--size") {
      const auto x = text.find('x');
      if (x == std::string::npos || !parse_int(text.substr(0, x), &options->width) ||
          !parse_int(text.substr(x + 1), &options->height) || options->width < 200 ||
          options->height < 150 || options->width > 16384 || options->height > 16384)
        return "--size needs WxH between 200x150 and 16384x16384, got '" + text + "'";
    } else if (arg == "--lang") {
      Language language;
      if (!parse_language(text, &language)) return "--lang takes en or zh";
      options->language = language;
    } else if (arg == "--head") {
      if (!parse_int(text, &options->head) || options->head < 0) return "--head takes a head index (0, 1, ...)";
    } else if (arg == "--tab") {
      tabs = split_list(text);
      for (const auto& tab : tabs)
        if (tab != "config" && tab != "matrices" && tab != "mask") return "--tab takes config, matrices or mask";
      options->tab = tabs.front();
    } else if (arg == "--open") {
      if (!known_window(text)) return "--open takes a window name: " + std::string(known_window_names());
      options->open_windows.push_back(text);
    } else if (arg == "--snapshot") {
      options->snapshot = text;
    } else if (arg == "--pin") {
      if (!parse_pin(text)) return "--pin needs stage:batch:head:row:col, e.g. scores:0:0:1:1 (head: a number or "
                                   "avg), got '" + text + "'";
      options->pin = text;
    } else if (arg == "--export-heatmap") {
      options->export_heatmap = text;
    } else if (arg == "--heatmap-out") {
      options->heatmap_out = text;
    } else if (arg == "--slide-width") {
      if (!parse_int(text, &options->slide_width) || options->slide_width < 320 || options->slide_width > 8192)
        return "--slide-width takes a width in pixels from 320 to 8192";
    } else if (arg == "--quiz-hide") {
      if (text != "stage" && text != "cell") return "--quiz-hide takes stage or cell";
      options->quiz_hide_cell = text == "cell";
    } else if (arg == "--memory-limit") {
      char* end = nullptr;
      const long long bytes = std::strtoll(text.c_str(), &end, 10);
      if (*end != '\0' || bytes < 1) return "--memory-limit takes a number of bytes (1 or more)";
      options->memory_limit = static_cast<Index>(bytes);
    } else if (arg == "--keep") {
      if (!(options->keep = square_stages_from_names(text)))
        return "--keep takes scores, scaled, biased, masked, weights or dropped, comma-separated";
    } else if (arg == "--lesson") {
      if (!parse_int(text, &options->lesson) || options->lesson < 1) return "--lesson takes a step number (1, 2, ...)";
      options->lesson -= 1;
    } else if (arg == "--widgets-out") {
      options->widgets_out = text;
    } else if (arg == "--save-on-exit") {
      options->save_on_exit = text;
    } else if (arg == "--frame-stats") {
      options->frame_stats = true;
      // The JSON path is optional; it is taken only after the session, so that
      // `--frame-stats session.json` still names the session.
      if (!options->source.empty() && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        options->frame_stats_out = argv[++i];
    } else if (arg == "--frames") {
      if (!parse_int(text, &options->frames) || options->frames < 1) return "--frames takes a positive number";
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
  if (auto problem = overwritten_input(*options)) return problem;
  for (const auto& [option, path] : {std::pair{"--out", options->out}, std::pair{"--heatmap-out", options->heatmap_out}})
    if (!path.empty() && !is_png_name(path))
      return std::string(option) + " " + path + ": the picture is written as PNG; give a name ending in .png";
  return std::nullopt;
}

std::optional<std::string> check_options_for_session(const Options& options, const Session& session) {
  std::vector<std::string> stages = {options.stage};
  for (const auto& shot : options.shots) stages.push_back(shot.stage);
  for (const auto& stage : stages)
    if (!stage.empty() && !step_present(*step_from_name(stage), session)) {
      std::string present;
      for (Step step : steps_of(session)) present += (present.empty() ? "" : ", ") + std::string(step_id(step));
      return "--stage " + stage + ": stage '" + stage + "' is not in this session (" + positions_text(session) +
             "); its stages are " + present;
    }
  const Index heads = session.config.num_heads;
  if (options.head >= heads)
    return "--head " + std::to_string(options.head) + ": this session has " + indices_text("head", heads);
  if (!options.pin.empty())
    if (auto problem = pin_problem(options.pin, session)) return "--pin " + options.pin + ": " + *problem;
  return std::nullopt;
}

}  // namespace al::gui
