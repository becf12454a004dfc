#include "widgets/heatmap_rows.hpp"

#include <algorithm>
#include <cmath>

#include "widgets/heatmap_widget.hpp"

namespace al::gui {

namespace {

constexpr float kHeatmapGap = 1.2f;  // font units between heatmaps side by side

// The width of each of `per_line` heatmaps side by side in `available`.
float heatmap_width(float available, size_t per_line) {
  const float spacing = kHeatmapGap * ImGui::GetFontSize();
  return (available - spacing * static_cast<float>(per_line - 1)) / static_cast<float>(per_line);
}

// How many of a row's heatmaps go side by side in `available` width. Each needs a colour bar
// wide enough for its numbers, and its title with the enlarge button (8 heads and their average
// did not fit at 1280 px and were cut off behind a scrollbar). The last title of a line may run
// on into the empty space after it: English's "… average over heads" had held every head of
// the largest preset to 4 maps a line, about half the size of Chinese's 5. Of the counts that
// need the fewest lines, the smallest gives the widest maps.
size_t heatmaps_per_line(const HeatmapRow& row, float available) {
  const float font = ImGui::GetFontSize();
  const float spacing = kHeatmapGap * font;
  const size_t count = std::max<size_t>(row.specs.size(), 1);
  std::vector<float> titles;  // each title's width with its enlarge button
  for (const HeatmapSpec& spec : row.specs) titles.push_back(ImGui::CalcTextSize(spec.title.c_str()).x + 2.2f * font);
  auto titles_fit = [&](size_t per_line) {
    const float width = heatmap_width(available, per_line);
    for (size_t i = 0; i < titles.size(); ++i) {
      const size_t column = i % per_line;
      const bool ends_line = column + 1 == per_line || i + 1 == titles.size();
      const float room = ends_line ? available - static_cast<float>(column) * (width + spacing) : width;
      if (titles[i] > room) return false;
    }
    return true;
  };
  const float narrowest = 9.0f * font;  // a colour bar's two numbers
  size_t most = std::min(count, static_cast<size_t>(std::max(1.0f, std::floor((available + spacing) / (narrowest + spacing)))));
  while (most > 1 && !titles_fit(most)) --most;
  const size_t lines = (count + most - 1) / most;
  for (size_t per_line = (count + lines - 1) / lines; per_line < most; ++per_line)
    if (titles_fit(per_line)) return per_line;
  return most;
}

// Lays a row's heatmaps out side by side in the available width, in lines if they do not fit.
void draw_row(AppState& app, HeatmapRow row) {
  std::vector<HeatmapSpec>& specs = row.specs;
  const float max_height = row.max_height;
  const bool select_head_on_click = row.select_head_on_click;
  const Index head_group = row.head_group;
  if (specs.empty()) return;
  const float font = ImGui::GetFontSize();
  if (!row.label.empty()) ImGui::TextDisabled("%s", row.label.c_str());  // K and V go on under Q's label
  const float spacing = kHeatmapGap * font;
  const float available = ImGui::GetContentRegionAvail().x;
  const size_t per_line = heatmaps_per_line(row, available);
  const float width = heatmap_width(available, per_line);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i % per_line != 0) ImGui::SameLine(0.0f, spacing);
    specs[i].width = width;
    specs[i].max_height = max_height;
    specs[i].enlargeable = true;
    if (heatmap_widget(app, specs[i]).clicked && select_head_on_click) {
      // Clicking a head shows that head's inputs.
      const auto& name = specs[i].name;
      auto pos = name.rfind(".h");
      if (pos != std::string::npos) app.view.input_head = std::stoll(name.substr(pos + 2)) * head_group;
    }
  }
  ImGui::Spacing();
}

}  // namespace

void draw_heatmap_rows(AppState& app, std::vector<HeatmapRow> rows, float region) {
  const float font = ImGui::GetFontSize();
  // Each row also needs its label, titles, column labels and colour bar: shrink the grids by
  // one factor so that every row, colour-bar numbers included, fits without scrolling where
  // it can; no grid goes under four font units. Each heatmap's height is the widget's own
  // (a guess of 6.5 font units a line for the rest once left the largest preset's bottom
  // fifth empty; one factor applied past a floored row overflowed).
  const float width = ImGui::GetContentRegionAvail().x;
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  struct Line {
    size_t row;
    std::vector<HeatmapSizer> sizers;
  };
  std::vector<Line> lines;
  std::vector<float> widths(rows.size(), 0.0f);
  float labels = 0.0f;
  for (size_t r = 0; r < rows.size(); ++r) {
    const HeatmapRow& row = rows[r];
    if (row.specs.empty()) continue;
    const size_t per_line = heatmaps_per_line(row, width);
    widths[r] = heatmap_width(width, per_line);
    labels += (row.label.empty() ? 0.0f : font + spacing) + spacing;  // the row's label, the spacing after the row
    for (size_t first = 0; first < row.specs.size(); first += per_line) {
      Line line{r, {}};
      for (size_t i = first; i < std::min(first + per_line, row.specs.size()); ++i)
        line.sizers.emplace_back(row.specs[i], row.specs[i].values, 0, 0);
      lines.push_back(std::move(line));
    }
  }
  const float floor_height = 4.0f * font;
  auto height_at = [&](float factor) {
    float total = labels;
    for (const Line& line : lines) {
      const float box = std::max(floor_height, rows[line.row].max_height * factor);
      float tallest = 0.0f;
      for (const HeatmapSizer& sizer : line.sizers) tallest = std::max(tallest, sizer.height(widths[line.row], box));
      total += tallest;
    }
    return total;
  };
  if (height_at(1.0f) > region) {
    float low = 0.0f, high = 1.0f;  // height_at grows with the factor: bisect for height_at = region
    for (int i = 0; i < 24; ++i) (height_at(0.5f * (low + high)) > region ? high : low) = 0.5f * (low + high);
    for (HeatmapRow& row : rows) row.max_height = std::max(floor_height, row.max_height * low);
  }
  if (app.widgets.enabled()) {  // tests read the rows' labels
    std::string labels;
    for (const HeatmapRow& row : rows)
      if (!row.label.empty() && !row.specs.empty()) labels += (labels.empty() ? "" : " | ") + row.label;
    app.widgets.set_fact("heatmap.row_labels", labels);
  }
  for (HeatmapRow& row : rows) draw_row(app, std::move(row));
}

}  // namespace al::gui
