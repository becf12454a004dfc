// The mask painter: the Lq x Lk mask of one batch item as a grid. Press on a
// cell and drag: every cell the stroke crosses takes the opposite of the first
// cell's value (one undo step per stroke). Causal, padding and all-on buttons.
// Two more tools: the sliding window (a click sets w so that the cell is the
// band's edge) and global tokens (a click toggles the cell's key position).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "editing/config_edits.hpp"
#include "panels/panels.hpp"
#include "widgets/heatmap_widget.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// The custom (painted) mask value of cell (i, j) of batch item b: 1 when absent.
bool custom_attends(const Session& s, Index b, Index i, Index j) {
  const TensorPtr& custom = s.config.mask.custom;
  if (!custom || custom->rows() <= i || custom->cols() <= j) return true;
  const Index k = custom->rank() == 3 ? std::min(b, custom->matrices() - 1) : 0;
  return custom->matrix(k)(i, j) >= 0.5f;
}

bool is_global(const Session& s, Index p) {
  const auto& g = s.config.mask.global_tokens;
  return std::find(g.begin(), g.end(), p) != g.end();
}

// What hides cell (i, j) of batch item b besides the painted layer: "causal",
// "window", "padding" or "" (nothing: painting alone decides).
std::string hidden_by(const Session& s, Index b, Index i, Index j) {
  if (s.config.mask.causal && j > i) return "causal";
  const Index w = s.config.mask.window;
  if (w > 0 && std::abs(i - j) >= w && !is_global(s, i) && !is_global(s, j)) return "window";
  const TensorPtr& padding = s.config.mask.key_padding;  // (B, Lk)
  if (padding && b < padding->rows() && j < padding->cols() && padding->data[static_cast<size_t>(b * padding->cols() + j)] == 0.0f)
    return "padding";
  return "";
}

// The cells a stroke crosses from cell `from` to cell `to` (both in): one a step along the longer
// axis. A frame sees only where the pointer is now, so a quick drag jumps cells between frames.
std::vector<std::pair<Index, Index>> cells_between(std::pair<Index, Index> from, std::pair<Index, Index> to) {
  const Index steps = std::max(std::abs(to.first - from.first), std::abs(to.second - from.second));
  std::vector<std::pair<Index, Index>> cells;
  for (Index k = 0; k <= steps; ++k) {
    const double t = steps == 0 ? 1.0 : static_cast<double>(k) / static_cast<double>(steps);
    cells.emplace_back(from.first + static_cast<Index>(std::lround(t * static_cast<double>(to.first - from.first))),
                       from.second + static_cast<Index>(std::lround(t * static_cast<double>(to.second - from.second))));
  }
  return cells;
}

}  // namespace

void draw_mask_painter(AppState& app) {
  const Session s = app.model.session();
  const float font = ImGui::GetFontSize();
  ViewState& view = app.view;
  const Index batches = std::max<Index>(s.batch(), 1);
  const Index lq = s.len_q(), lk = s.len_kv();
  view.mask_batch = std::clamp<Index>(view.mask_batch, 0, batches - 1);
  const Index b = view.mask_batch;

  if (batches > 1) {
    int batch = static_cast<int>(b);
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputInt((std::string(app.tr("mask.batch")) + "###mask_batch").c_str(), &batch))
      view.mask_batch = std::clamp<Index>(batch, 0, batches - 1);
    app.widgets.add_last_item("mask.batch");
  }

  bool causal = s.config.mask.causal;
  if (ImGui::Checkbox((std::string(app.tr("mask.causal")) + "###causal").c_str(), &causal))
    app.edit(with_causal(s, causal), "edit.causal", "mask");
  app.widgets.add_last_item("mask.causal");
  ImGui::SameLine();
  if (ImGui::Button((std::string(app.tr("mask.all_on")) + "###all_on").c_str()))
    app.edit(with_mask_cleared(s), "edit.mask_cleared", "mask");
  app.widgets.add_last_item("mask.all_on");

  // Padding: this batch item attends to its first `length` keys. A padding that
  // keeps other keys (seed 002 keeps keys 2 and 3) is said as it is; the slider
  // then shows how many keys are kept and makes them the first ones.
  int length = static_cast<int>(lk);
  std::string kept_keys;  // "2, 3" when the kept keys are not the first ones
  if (const TensorPtr& padding = s.config.mask.key_padding; padding && b < padding->matrices() * padding->rows()) {
    length = 0;
    bool prefix = true;
    for (Index j = 0; j < padding->cols(); ++j) {
      if (padding->data[static_cast<size_t>(b * padding->cols() + j)] < 0.5f) continue;
      prefix = prefix && j == length;
      kept_keys += (length ? ", " : "") + std::to_string(j);
      ++length;
    }
    if (prefix) kept_keys.clear();
  }
  if (!kept_keys.empty()) {
    wrapped_text_colored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                         app.i18n.format("mask.kept_not_first", {{"count", std::to_string(length)},
                                                                 {"keys", kept_keys}}));
    app.widgets.add_last_item("mask.kept_not_first");
  }
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::SliderInt((std::string(app.tr("mask.padding")) + "###padding").c_str(), &length, 0,
                       static_cast<int>(lk)))
    app.edit(with_padding_length(s, b, length), "edit.padding", "mask", "mask.padding");
  app.widgets.add_last_item("mask.padding");
  show_error_if_from(app, "mask");

  // Tools: paint cells, set the sliding window, toggle global tokens.
  using Tool = ViewState::MaskTool;
  int tool = static_cast<int>(view.mask_tool);
  const char* tool_keys[] = {"mask.tool.paint", "mask.tool.window", "mask.tool.global"};
  const char* tool_ids[] = {"mask.tool.paint", "mask.tool.window", "mask.tool.global"};
  for (int t = 0; t < 3; ++t) {
    if (t > 0) ImGui::SameLine();
    ImGui::RadioButton((std::string(app.tr(tool_keys[t])) + "###" + tool_ids[t]).c_str(), &tool, t);
    app.widgets.add_last_item(tool_ids[t]);
  }
  view.mask_tool = static_cast<Tool>(tool);
  if (view.mask_tool == Tool::Window) {
    int window = static_cast<int>(s.config.mask.window);
    ImGui::SetNextItemWidth(10.0f * font);
    if (ImGui::SliderInt((std::string(app.tr("mask.window")) + "###mask_window").c_str(), &window, 0,
                         static_cast<int>(std::max(lq, lk)), window == 0 ? app.tr("mask.window.off") : "%d"))
      app.edit(with_window(s, window), "edit.window", "mask", "mask.window");
    app.widgets.add_last_item("mask.window");
  } else if (view.mask_tool == Tool::Global) {
    std::string list;
    for (Index p : s.config.mask.global_tokens) list += (list.empty() ? "" : ", ") + std::to_string(p);
    ImGui::TextUnformatted(app.i18n.format("mask.global_list", {{"positions", list.empty() ? "—" : list}}).c_str());
    app.widgets.add_last_item("mask.global_list");
  }
  const char* hints[] = {"mask.hint", "mask.hint.window", "mask.hint.global"};
  wrapped_text_disabled(app.tr(hints[tool]));

  // The effective mask (causal, padding and painted cells combined) from the trace.
  auto trace = app.model.trace();
  MatrixView effective;
  if (trace && trace->mask && trace->dims.len_q == lq && trace->dims.len_kv == lk)
    effective = matrix_of(trace->mask, std::min(b, trace->mask->matrices() - 1));
  if (!effective.valid()) {
    // No mask at all: everything attends.
    auto ones = std::make_shared<std::vector<float>>(static_cast<size_t>(lq * lk), 1.0f);
    effective.owner = ones;
    effective.data = ones->data();
    effective.rows = lq;
    effective.cols = lk;
    effective.row_stride = lk;
    effective.key = "ones/" + std::to_string(lq) + "x" + std::to_string(lk);
  }
  HeatmapSpec spec;
  spec.name = "mask_painter";
  spec.title = app.tr("mask.grid");
  spec.values = effective;
  spec.style = {Colormap::Mask, 0.0f, 1.0f};
  spec.row_labels = &s.tokens;
  spec.col_labels = s.config.attention == AttentionKind::Cross ? &s.tokens_kv : &s.tokens;
  spec.width = ImGui::GetContentRegionAvail().x;
  spec.max_height = std::max(6.0f * font, ImGui::GetContentRegionAvail().y - 3.0f * font);
  spec.max_cell = 2.2f * font;
  spec.pin_on_click = false;
  const HeatmapInteraction hit = heatmap_widget(app, spec);

  // A click flips what the grid shows. A cell the causal mask or the padding
  // hides cannot be shown by painting: say so (and offer to turn causal off)
  // instead of silently painting the layer underneath.
  if (hit.clicked && view.mask_tool == Tool::Window) {
    app.edit(with_window(s, std::abs(hit.row - hit.col) + 1), "edit.window", "mask");
  } else if (hit.clicked && view.mask_tool == Tool::Global) {
    app.edit(with_global_token(s, hit.col, !is_global(s, hit.col)), "edit.global_tokens", "mask");
  } else if (hit.clicked) {
    const bool shown = effective.at(hit.row, hit.col) >= 0.5f;
    const std::string cause = shown ? "" : hidden_by(s, b, hit.row, hit.col);
    view.mask_blocked = cause;
    view.mask_stroke_active = cause.empty();
    view.mask_stroke_value = !shown;
    view.mask_stroke_cell = {hit.row, hit.col};
    ++view.mask_stroke_id;
  }
  if (!hit.held) view.mask_stroke_active = false;
  if (view.mask_stroke_active && !hit.has_cell) view.mask_stroke_cell.reset();  // off the grid: no line back
  if (view.mask_stroke_active && hit.has_cell) {
    Session painted = s;
    for (const auto& [i, j] : cells_between(view.mask_stroke_cell.value_or(std::pair{hit.row, hit.col}),
                                            {hit.row, hit.col}))
      if (custom_attends(painted, b, i, j) != view.mask_stroke_value && hidden_by(s, b, i, j).empty())
        painted = with_mask_cell(painted, b, i, j, view.mask_stroke_value);
    view.mask_stroke_cell = {hit.row, hit.col};
    if (painted.config.mask.custom != s.config.mask.custom)
      app.edit(painted, "edit.paint_mask", "mask", "mask.stroke/" + std::to_string(view.mask_stroke_id));
  }

  if (view.mask_blocked == "causal" && s.config.mask.causal) {
    wrapped_text_colored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), app.tr("mask.blocked_causal"));
    app.widgets.add_last_item("mask.blocked");
    if (ImGui::Button((std::string(app.tr("mask.turn_causal_off")) + "###causal_off").c_str())) {
      app.edit(with_causal(s, false), "edit.causal", "mask");
      view.mask_blocked.clear();
    }
    app.widgets.add_last_item("mask.turn_causal_off");
  } else if (view.mask_blocked == "window" && s.config.mask.window > 0) {
    wrapped_text_colored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), app.tr("mask.blocked_window"));
    app.widgets.add_last_item("mask.blocked");
  } else if (view.mask_blocked == "padding") {
    wrapped_text_colored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), app.tr("mask.blocked_padding"));
    app.widgets.add_last_item("mask.blocked");
  }
}

}  // namespace al::gui
