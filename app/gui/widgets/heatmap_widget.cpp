#include "widgets/heatmap_widget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "teaching/lab_numbers.hpp"
#include "widgets/heatmap_cells.hpp"
#include "widgets/heatmap_png.hpp"

namespace al::gui {

namespace {

void colour_bar(AppState& app, const HeatmapSpec& spec, ImVec2 at, float width) {
  ImDrawList* draw_list = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  if (spec.style.colormap == Colormap::Mask) return;
  const MatrixView bar = colour_ramp(spec.style);
  const ImVec2 bar_max(at.x + width, at.y + 0.5f * font);
  app.heatmaps.draw(draw_list, at, bar_max, app.textures.get(bar), 0, 1, static_cast<int>(bar.cols), spec.style,
                    /*grid=*/false);
  const float text_y = bar_max.y + 0.1f * font;
  if (spec.no_finite_values) {  // its ends would be a made-up range: no cell takes a colour from it
    draw_list->AddText(ImVec2(at.x, text_y), text, app.tr("heatmap.no_finite_values"));
  } else {
    const std::string low = cell_value_text(spec.style.low, true);
    const std::string high = cell_value_text(spec.style.high, true);
    draw_list->AddText(ImVec2(at.x, text_y), text, low.c_str());
    draw_list->AddText(ImVec2(bar_max.x - ImGui::CalcTextSize(high.c_str()).x, text_y), text, high.c_str());
  }
  app.widgets.add("colorbar." + spec.name, at, bar_max,
                  {{"low", spec.style.low}, {"high", spec.style.high}, {"finite", spec.no_finite_values ? 0.0f : 1.0f}});
}

// Below the grid: the colour bar and its numbers, or for a mask only the gap.
float below_grid(const HeatmapSpec& spec) {
  return (spec.style.colormap == Colormap::Mask ? 0.35f : 2.05f) * ImGui::GetFontSize();
}

constexpr float kColLabelHeight = 1.15f;  // font units
constexpr float kColourBarWidth = 7.0f;   // font units: at least its two numbers
constexpr float kHairline = 2.0f;         // font units: a grid narrower than this is widened

bool zeroed_by_dropout(const HeatmapSpec& spec, Index r, Index c) {
  return spec.before_dropout.valid() && spec.values.at(r, c) == 0.0f && spec.before_dropout.at(r, c) != 0.0f;
}

// A cross over every cell dropout zeroed, once cells are big enough to hold one.
void draw_dropout_marks(AppState& app, const HeatmapSpec& spec, ImDrawList* draw_list, ImVec2 grid_min,
                        ImVec2 cell_size) {
  const MatrixView& m = spec.values;
  const float cell = std::min(cell_size.x, cell_size.y);
  if (!spec.before_dropout.valid() || cell < 6.0f || m.rows * m.cols > 256 * 256) return;
  const ImU32 colour = IM_COL32(255, 90, 60, 255);
  const float inset = 0.2f * cell, thickness = std::max(1.5f, 0.06f * cell);
  int marked = 0;
  for (Index r = 0; r < m.rows; ++r)
    for (Index c = 0; c < m.cols; ++c) {
      if (!zeroed_by_dropout(spec, r, c)) continue;
      const ImVec2 a(grid_min.x + c * cell_size.x + inset, grid_min.y + r * cell_size.y + inset);
      const ImVec2 b(grid_min.x + (c + 1) * cell_size.x - inset, grid_min.y + (r + 1) * cell_size.y - inset);
      draw_list->AddLine(a, b, colour, thickness);
      draw_list->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), colour, thickness);
      ++marked;
    }
  if (app.widgets.enabled()) app.widgets.set_fact("heatmap." + spec.name + ".dropped_marks", std::to_string(marked));
}

// The part of a (rows, cols) matrix on screen: all of it, or what the enlarged view's zoom shows.
struct VisibleWindow {
  Index row = 0, col = 0, rows = 0, cols = 0;
};

VisibleWindow visible_window(const ViewState& view, const MatrixView& full, bool zoomed) {
  if (!zoomed) return {0, 0, full.rows, full.cols};
  VisibleWindow w;
  w.rows = std::clamp<Index>(static_cast<Index>(std::ceil(static_cast<float>(full.rows) / view.zoom)), 1, full.rows);
  w.cols = std::clamp<Index>(static_cast<Index>(std::ceil(static_cast<float>(full.cols) / view.zoom)), 1, full.cols);
  w.row = std::clamp<Index>(std::lround(view.center_row - 0.5f * static_cast<float>(w.rows)), 0, full.rows - w.rows);
  w.col = std::clamp<Index>(std::lround(view.center_col - 0.5f * static_cast<float>(w.cols)), 0, full.cols - w.cols);
  return w;
}

// The enlarged heatmap: the wheel zooms around the pointer (the matrix point under it stays
// under it), a drag moves the view, a double-click shows the whole matrix again.
// True when the view moved: the next frame draws the new window.
bool zoom_and_pan(ViewState& view, const MatrixView& full, const VisibleWindow& w, ImVec2 grid_min, float cell,
                  bool hovered, bool dragging) {
  const ImGuiIO& io = ImGui::GetIO();
  const float before[3] = {view.zoom, view.center_row, view.center_col};
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view.zoom = 1.0f;
  if (hovered && io.MouseWheel != 0.0f) {
    const float at_row = static_cast<float>(w.row) + (io.MousePos.y - grid_min.y) / cell;
    const float at_col = static_cast<float>(w.col) + (io.MousePos.x - grid_min.x) / cell;
    // Closest: about four cells across the longer side.
    const float most = std::max(1.0f, static_cast<float>(std::max(full.rows, full.cols)) / 4.0f);
    const float next = std::clamp(view.zoom * std::pow(1.25f, io.MouseWheel), 1.0f, most);
    const float keep = view.zoom / next;  // distances to the pointer shrink by this
    view.center_row = at_row + (view.center_row - at_row) * keep;
    view.center_col = at_col + (view.center_col - at_col) * keep;
    view.zoom = next;
  }
  if (dragging) {
    view.center_row -= io.MouseDelta.y / cell;
    view.center_col -= io.MouseDelta.x / cell;
  }
  // Keep the centre where a window of this zoom fits, so a drag past the edge does not build up.
  const float half_rows = 0.5f * static_cast<float>(full.rows) / view.zoom;
  const float half_cols = 0.5f * static_cast<float>(full.cols) / view.zoom;
  view.center_row = std::clamp(view.center_row, half_rows, static_cast<float>(full.rows) - half_rows);
  view.center_col = std::clamp(view.center_col, half_cols, static_cast<float>(full.cols) - half_cols);
  return view.zoom != before[0] || view.center_row != before[1] || view.center_col != before[2];
}

}  // namespace

HeatmapInteraction heatmap_widget(AppState& app, const HeatmapSpec& spec) {
  HeatmapInteraction interaction;
  if (!spec.values.valid()) return interaction;
  const float font = ImGui::GetFontSize();
  const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);
  ImGui::PushID(spec.name.c_str());
  ImGui::BeginGroup();
  ImGui::TextUnformatted(spec.title.c_str());
  if (spec.enlargeable && !spec.enlarged) {
    // A one-character button: a longer one widened narrow heatmaps' titles past their width.
    ImGui::SameLine();
    const bool enlarge = ImGui::SmallButton("+");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", app.tr("zoom.enlarge"));
    if (enlarge) {
      app.view.enlarged = spec.name;
      app.view.zoom = 1.0f;
      app.view.center_row = 0.5f * static_cast<float>(spec.values.rows);
      app.view.center_col = 0.5f * static_cast<float>(spec.values.cols);
    }
    app.widgets.add_last_item("enlarge." + spec.name);
  }

  // `shown` is the part on screen (all of it unless zoomed); row0/col0 map its cells back.
  const VisibleWindow window = visible_window(app.view, spec.values, spec.enlarged);
  const Index row0 = window.row, col0 = window.col;
  HeatmapSpec shown = spec;
  shown.values = block(spec.values, row0, col0, window.rows, window.cols);
  if (spec.mask.valid()) shown.mask = block(spec.mask, row0, col0, window.rows, window.cols);
  if (spec.before_dropout.valid())
    shown.before_dropout = block(spec.before_dropout, row0, col0, window.rows, window.cols);
  const MatrixView& m = shown.values;
  if (spec.enlarged) {
    auto span = [](Index first, Index count) { return std::to_string(first) + "–" + std::to_string(first + count - 1); };
    char zoom[16];
    std::snprintf(zoom, sizeof zoom, "%.1f", app.view.zoom);
    ImGui::TextDisabled("%s", app.i18n.format("zoom.showing", {{"rows", span(row0, m.rows)}, {"cols", span(col0, m.cols)},
                                                               {"total_rows", std::to_string(spec.values.rows)},
                                                               {"total_cols", std::to_string(spec.values.cols)},
                                                               {"zoom", zoom}}).c_str());
  }

  const HeatmapSizer::Geometry geometry = HeatmapSizer(spec, m, row0, col0).geometry(spec.width, spec.max_height);
  const float cell = geometry.cell, cell_width = geometry.cell_width, row_label_width = geometry.row_label_width;
  const float col_label_height = geometry.col_label_height;

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 grid_min(origin.x + row_label_width, origin.y + col_label_height);
  const ImVec2 grid_size(cell_width * m.cols, cell * m.rows);
  const ImVec2 grid_max(grid_min.x + grid_size.x, grid_min.y + grid_size.y);
  ImGui::SetCursorScreenPos(grid_min);
  ImGui::InvisibleButton("grid", ImVec2(std::max(grid_size.x, 1.0f), std::max(grid_size.y, 1.0f)));
  const bool hovered = ImGui::IsItemHovered();
  // Enlarged, a press may start a drag: a cell is pinned by a click that did not move.
  const ImGuiIO& io = ImGui::GetIO();
  const bool moved = io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] > io.MouseDragThreshold * io.MouseDragThreshold;
  const bool clicked = spec.enlarged ? ImGui::IsItemDeactivated() && !moved : ImGui::IsItemClicked(ImGuiMouseButton_Left);
  interaction.held = ImGui::IsItemActive();
  if (spec.enlarged && zoom_and_pan(app.view, spec.values, window, grid_min, cell, hovered,
                                    interaction.held && ImGui::IsMouseDragging(ImGuiMouseButton_Left)))
    app.keep_drawing = true;
  heatmap_png_hooks(app, spec);  // right-click: save as PNG

  ImDrawList* draw_list = ImGui::GetWindowDrawList();
  // At most a texel per pixel, and every cell its own texel wherever a cell covers a pixel
  // (the enlarged view zoomed in): only the part on screen is uploaded, when it moves.
  const ImVec2 fb_scale = ImGui::GetIO().DisplayFramebufferScale;
  const auto max_texels = static_cast<Index>(std::ceil(std::max(grid_size.x * fb_scale.x, grid_size.y * fb_scale.y)));
  const GLuint mask_texture = shown.mask.valid() ? app.textures.screen(shown.mask, max_texels) : 0;
  app.heatmaps.draw(draw_list, grid_min, grid_max, app.textures.screen(m, max_texels), mask_texture,
                    static_cast<int>(m.rows), static_cast<int>(m.cols), spec.style);
  app.widgets.add("heatmap." + spec.name, grid_min, grid_max,
                  {{"rows", static_cast<double>(spec.values.rows)}, {"cols", static_cast<double>(spec.values.cols)},
                   {"low", spec.style.low}, {"high", spec.style.high},
                   {"first_row", static_cast<double>(row0)}, {"first_col", static_cast<double>(col0)},
                   {"shown_rows", static_cast<double>(m.rows)}, {"shown_cols", static_cast<double>(m.cols)},
                   {"texel_rows", static_cast<double>(TextureCache::screen_texels(m.rows, max_texels))},
                   {"texel_cols", static_cast<double>(TextureCache::screen_texels(m.cols, max_texels))},
                   {"peaks_ahead", TextureCache::takes_peaks(m, max_texels) ? 1.0 : 0.0}});
  if (app.widgets.enabled()) {  // tests read them
    app.widgets.set_fact("heatmap." + spec.name + ".title", spec.title);
    const std::string first = axis_label(spec.row_labels, 0);
    app.widgets.set_fact("heatmap." + spec.name + ".first_row_label",
                         row_label_width > 0 ? fitted_label(first, row_label_width - 0.4f * font) : first);
  }

  // Labels and numbers are ordinary ImGui text drawn over the quad.
  for (Index r = 0; row_label_width > 0 && r < m.rows; ++r) {
    const std::string label = fitted_label(axis_label(spec.row_labels, row0 + r), row_label_width - 0.4f * font);
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    draw_list->AddText(ImVec2(grid_min.x - size.x - 0.3f * font,
                              grid_min.y + (r + 0.5f) * cell - 0.5f * size.y),
                       text_colour, label.c_str());
  }
  for (Index c = 0; col_label_height > 0 && c < m.cols; ++c) {
    const std::string label = axis_label(spec.col_labels, col0 + c);
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    draw_list->AddText(ImVec2(grid_min.x + (c + 0.5f) * cell_width - 0.5f * size.x, origin.y),
                       text_colour, label.c_str());
  }
  const bool numbers_fit = cell_width >= ImGui::CalcTextSize("-0.00").x + 0.3f * font && cell >= 1.2f * font;
  // A mask's 1/0 reads from its colours; numbers would only clutter it.
  const bool numbered = numbers_fit && m.rows * m.cols <= 64 * 64;
  if (!numbered && spec.style.colormap != Colormap::Mask && !quiz_covers(app, spec.name, -1, -1))
    app.labs.quiz.numbers_hidden = true;
  if (numbered && spec.style.colormap != Colormap::Mask) {
    for (Index r = 0; r < m.rows; ++r)
      for (Index c = 0; c < m.cols; ++c) {
        if (quiz_covers(app, spec.name, row0 + r, col0 + c)) continue;
        const float v = m.at(r, c);
        const std::string label = cell_value_text(v, true);
        const ImVec2 size = ImGui::CalcTextSize(label.c_str());
        // The shader hatches a masked cell in mid greys (unless it shows a leaked weight):
        // black reads there, white did not.
        const bool hatched = spec.mask.valid() && spec.mask.at(row0 + r, col0 + c) < 0.5f && !std::isnan(v) &&
                             !(spec.style.colormap == Colormap::Sequential && v > kLeakVisible);
        const ImU32 colour = !hatched && dark_background(spec.style, v) ? IM_COL32(255, 255, 255, 255)
                                                                        : IM_COL32(0, 0, 0, 255);
        draw_list->AddText(ImVec2(grid_min.x + (c + 0.5f) * cell_width - 0.5f * size.x,
                                  grid_min.y + (r + 0.5f) * cell - 0.5f * size.y),
                           colour, label.c_str());
      }
  }

  draw_dropout_marks(app, shown, draw_list, grid_min, ImVec2(cell_width, cell));
  draw_quiz_cover(app, spec.name, grid_min, grid_max, ImVec2(cell_width, cell));

  // Hover: the value and its row/column tokens. Click: pin (click again: unpin).
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if ((hovered || interaction.held) && mouse.x >= grid_min.x && mouse.x < grid_max.x &&
      mouse.y >= grid_min.y && mouse.y < grid_max.y) {
    interaction.has_cell = true;
    interaction.row = row0 + std::clamp<Index>(static_cast<Index>((mouse.y - grid_min.y) / cell), 0, m.rows - 1);
    interaction.col = col0 + std::clamp<Index>(static_cast<Index>((mouse.x - grid_min.x) / cell_width), 0, m.cols - 1);
    interaction.clicked = clicked;
  }
  if (interaction.has_cell && hovered && !quiz_covers(app, spec.name, interaction.row, interaction.col)) {
    CellRef cell_ref{spec.name, interaction.row, interaction.col};
    app.view.hovered = cell_ref;
    const float v = spec.values.at(cell_ref.row, cell_ref.col);
    const std::string tokens = std::string(app.tr("heatmap.row")) + " " + axis_label(spec.row_labels, cell_ref.row) +
                               "   " + app.tr("heatmap.col") + " " + axis_label(spec.col_labels, cell_ref.col);
    const std::string value = "[" + std::to_string(cell_ref.row) + ", " + std::to_string(cell_ref.col) +
                              "] = " + cell_value_text(v, false);
    app.widgets.set_fact("tooltip", spec.title + "\n" + tokens + "\n" + value);  // tests read what it says
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(spec.title.c_str());
    ImGui::TextUnformatted(tokens.c_str());
    ImGui::TextUnformatted(value.c_str());
    if (spec.mask.valid() && spec.mask.at(cell_ref.row, cell_ref.col) < 0.5f)
      ImGui::TextUnformatted(app.tr("heatmap.masked_cell"));
    if (zeroed_by_dropout(spec, cell_ref.row, cell_ref.col))
      ImGui::TextUnformatted(app.i18n.format("heatmap.dropped_cell", {{"weight",
          lab_number(spec.before_dropout.at(cell_ref.row, cell_ref.col))}}).c_str());
    ImGui::EndTooltip();
    if (clicked && spec.pin_on_click) {
      if (app.view.pinned && *app.view.pinned == cell_ref) app.view.pinned.reset();
      else app.view.pinned = cell_ref;
    }
  }
  // Rows and columns an explained cell came from (the explain window sets them).
  for (const HeatmapHighlight& highlight : app.teaching.highlights) {
    if (highlight.heatmap != spec.name) continue;
    const ImU32 outline = IM_COL32(0, 230, 255, 255);
    const float thickness = std::max(2.0f, 0.12f * font);
    for (Index r : highlight.rows)
      if (r >= row0 && r < row0 + m.rows)
        draw_list->AddRect(ImVec2(grid_min.x, grid_min.y + (r - row0) * cell),
                           ImVec2(grid_max.x, grid_min.y + (r - row0 + 1) * cell), outline, 0.0f, 0, thickness);
    for (Index c : highlight.cols)
      if (c >= col0 && c < col0 + m.cols)
        draw_list->AddRect(ImVec2(grid_min.x + (c - col0) * cell_width, grid_min.y),
                           ImVec2(grid_min.x + (c - col0 + 1) * cell_width, grid_max.y), outline, 0.0f, 0, thickness);
  }
  if (app.view.pinned && app.view.pinned->heatmap == spec.name) {
    const CellRef& p = *app.view.pinned;
    if (p.row >= row0 && p.row < row0 + m.rows && p.col >= col0 && p.col < col0 + m.cols) {
      const ImVec2 a(grid_min.x + (p.col - col0) * cell_width, grid_min.y + (p.row - row0) * cell);
      draw_list->AddRect(a, ImVec2(a.x + cell_width, a.y + cell), IM_COL32(255, 200, 0, 255), 0.0f, 0,
                         std::max(2.0f, 0.12f * font));
    }
  }

  // Colour bar below, at least wide enough for its two numbers.
  const ImVec2 bar_at(grid_min.x, grid_max.y + 0.35f * font);
  const float bar_width = std::max(grid_size.x, kColourBarWidth * font);
  colour_bar(app, spec, bar_at, bar_width);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(std::max(row_label_width + bar_width, row_label_width + grid_size.x),
                      col_label_height + grid_size.y + below_grid(spec)));
  ImGui::EndGroup();
  ImGui::PopID();
  return interaction;
}

HeatmapSizer::HeatmapSizer(const HeatmapSpec& spec, const MatrixView& shown, Index first_row, Index first_col)
    : spec_(spec), rows_(shown.rows), cols_(shown.cols) {
  // More than 64 are never drawn: no need to measure 2048 labels a frame.
  if (spec.row_labels && rows_ <= 64) {
    widest_row_label_ = 0.0f;
    for (Index r = 0; r < rows_; ++r)
      widest_row_label_ = std::max(widest_row_label_,
                                   ImGui::CalcTextSize(axis_label(spec.row_labels, first_row + r).c_str()).x);
  }
  if (spec.col_labels && cols_ <= 64) {
    widest_col_label_ = 0.0f;
    for (Index c = 0; c < cols_; ++c)
      widest_col_label_ = std::max(widest_col_label_,
                                   ImGui::CalcTextSize(axis_label(spec.col_labels, first_col + c).c_str()).x);
  }
}

HeatmapSizer::Geometry HeatmapSizer::geometry(float width, float max_height) const {
  const float font = ImGui::GetFontSize();
  Geometry g;
  // Row labels (tokens) on the left when rows are tall enough to read them.
  if (widest_row_label_ >= 0.0f) g.row_label_width = std::min(widest_row_label_, 6.0f * font) + 0.4f * font;
  const float max_cell = spec_.max_cell > 0 ? spec_.max_cell : 3.4f * font;
  g.cell = std::min({(width - g.row_label_width) / static_cast<float>(cols_), max_height / static_cast<float>(rows_),
                     max_cell});
  // Thousands of rows get sub-pixel cells: the grid fits its box (a floor of a quarter pixel
  // made a 4096-row matrix 1024 pixels tall, pushing the step's other rows off screen).
  // Only a box too small for anything still gets a picture one font unit long.
  g.cell = std::max(g.cell, font / static_cast<float>(std::max(rows_, cols_)));
  if (g.cell < 0.9f * font) g.row_label_width = 0.0f;
  // A tall, narrow matrix squeezed into its box (400 tokens × 8 numbers) was a hairline over its
  // colour bar: under two font units wide, its columns widen up to half its height, so it is still
  // drawn taller than wide as it is, and at most to the bar's width. Any other matrix keeps square
  // cells, as does the enlarged view, whose zoom and pan count in them.
  g.cell_width = g.cell;
  const float grid_height = g.cell * static_cast<float>(rows_), square_width = g.cell * static_cast<float>(cols_);
  if (!spec_.enlarged && rows_ > cols_ && square_width < kHairline * font) {
    const float widened = std::min({0.5f * grid_height, kColourBarWidth * font, width - g.row_label_width});
    g.cell_width = std::max(g.cell, widened / static_cast<float>(cols_));
  }
  if (widest_col_label_ >= 0.0f && g.cell_width >= widest_col_label_ + 0.2f * font)
    g.col_label_height = kColLabelHeight * font;
  return g;
}

float HeatmapSizer::height(float width, float max_height) const {
  const float font = ImGui::GetFontSize();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const Geometry g = geometry(width, max_height);
  // The title line (its button is as tall as the text), the group, then the next item.
  return font + spacing + g.col_label_height + g.cell * static_cast<float>(rows_) + below_grid(spec_) + spacing;
}

}  // namespace al::gui
