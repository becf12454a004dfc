#include "widgets/heatmap_rows.hpp"

#include <algorithm>

#include "widgets/heatmap_widget.hpp"

namespace al::gui {

namespace {

constexpr float kHeatmapGap = 1.2f;  // font units between heatmaps side by side

// The width of each of `per_line` heatmaps side by side in `available`.
float heatmap_width(float available, size_t per_line) {
  const float spacing = kHeatmapGap * ImGui::GetFontSize();
  return (available - spacing * static_cast<float>(per_line - 1)) / static_cast<float>(per_line);
}

// A row's heatmaps measured once a frame: each title's width with its enlarge button, and a
// sizer for each grid.
struct MeasuredRow {
  const HeatmapRow* row;
  std::vector<float> titles;
  std::vector<HeatmapSizer> sizers;
  explicit MeasuredRow(const HeatmapRow& r) : row(&r) {
    const float font = ImGui::GetFontSize();
    for (const HeatmapSpec& spec : r.specs) {
      titles.push_back(ImGui::CalcTextSize(spec.title.c_str()).x + 2.2f * font);
      sizers.emplace_back(spec, spec.values, 0, 0);
    }
  }
  size_t count() const { return titles.size(); }
  size_t lines(size_t per_line) const { return (count() + per_line - 1) / per_line; }

  // Whether `per_line` maps a line fit in `available`: each needs its title, and its token labels
  // with the colour bar the widget draws at least 7 font units wide (8 heads and their average
  // did not fit at 1280 px and were cut off behind a scrollbar). The last title of a line may
  // run on into the empty space after it: English's "… average over heads" had held the
  // largest preset's heads to 4 maps a line, about half the size of Chinese's 5.
  bool fits(size_t per_line, float available) const {
    const float font = ImGui::GetFontSize();
    const float spacing = kHeatmapGap * font;
    const float width = heatmap_width(available, per_line);
    for (size_t i = 0; i < count(); ++i) {
      const size_t column = i % per_line;
      const bool ends_line = column + 1 == per_line || i + 1 == count();
      const float room = ends_line ? available - static_cast<float>(column) * (width + spacing) : width;
      const float labels = sizers[i].geometry(width, row->max_height).row_label_width;
      if (titles[i] > room || (per_line > 1 && labels + 7.0f * font > width)) return false;
    }
    return true;
  }

  // The counts a line worth trying, fewest lines first: for each number of lines the fewest maps
  // a line that fill them (the widest maps), up to three such numbers; one a line if none fits.
  std::vector<size_t> choices(float available) const {
    std::vector<size_t> out;
    for (size_t lines = 1; lines <= count() && out.size() < 3; ++lines) {
      const size_t per_line = (count() + lines - 1) / lines;
      if (this->lines(per_line) == lines && fits(per_line, available)) out.push_back(per_line);
    }
    if (out.empty()) out.push_back(1);
    return out;
  }
};

// Lays a row's heatmaps out side by side, `per_line` a line.
void draw_row(AppState& app, HeatmapRow row, size_t per_line) {
  std::vector<HeatmapSpec>& specs = row.specs;
  const float max_height = row.max_height;
  const bool select_head_on_click = row.select_head_on_click;
  const Index head_group = row.head_group;
  if (specs.empty()) return;
  const float font = ImGui::GetFontSize();
  if (!row.label.empty()) ImGui::TextDisabled("%s", row.label.c_str());  // K and V go on under Q's label
  const float spacing = kHeatmapGap * font;
  const float available = ImGui::GetContentRegionAvail().x;
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
  const float width = ImGui::GetContentRegionAvail().x;
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float floor_height = 4.0f * font;
  std::vector<MeasuredRow> measured;
  float labels = 0.0f;  // the rows' labels and the spacing after each row
  for (const HeatmapRow& row : rows) {
    measured.emplace_back(row);
    if (!row.specs.empty()) labels += (row.label.empty() ? 0.0f : font + spacing) + spacing;
  }
  // Each row also needs its label, titles, column labels and colour bar: shrink the grids by
  // one factor so that every row, colour-bar numbers included, fits without scrolling where
  // it can; no grid goes under four font units. Each heatmap's height is the widget's own
  // (a guess of 6.5 font units a line for the rest once left the largest preset's bottom
  // fifth empty; one factor applied past a floored row overflowed).
  auto height_at = [&](const std::vector<size_t>& per_line, float factor) {
    float total = labels;
    for (size_t r = 0; r < rows.size(); ++r) {
      const float box = std::max(floor_height, rows[r].max_height * factor);
      const float map_width = heatmap_width(width, per_line[r]);
      for (size_t first = 0; first < measured[r].count(); first += per_line[r]) {
        float tallest = 0.0f;
        for (size_t i = first; i < std::min(first + per_line[r], measured[r].count()); ++i)
          tallest = std::max(tallest, measured[r].sizers[i].height(map_width, box));
        total += tallest;
      }
    }
    return total;
  };
  auto fitted_factor = [&](const std::vector<size_t>& per_line, int steps) {
    if (height_at(per_line, 1.0f) <= region) return 1.0f;
    float low = 0.0f, high = 1.0f;  // height_at grows with the factor: bisect for height_at = region
    for (int i = 0; i < steps; ++i) (height_at(per_line, 0.5f * (low + high)) > region ? high : low) = 0.5f * (low + high);
    return low;
  };
  // The grids' area on screen, in pixels, with every row shrunk by `factor`.
  auto grid_area = [&](const std::vector<size_t>& per_line, float factor) {
    float area = 0.0f;
    for (size_t r = 0; r < rows.size(); ++r) {
      const float box = std::max(floor_height, rows[r].max_height * factor);
      const float map_width = heatmap_width(width, per_line[r]);
      for (size_t i = 0; i < measured[r].count(); ++i) {
        const HeatmapSizer::Geometry g = measured[r].sizers[i].geometry(map_width, box);
        const MatrixView& values = rows[r].specs[i].values;
        area += g.cell * g.cell_width * static_cast<float>(values.rows * values.cols);
      }
    }
    return area;
  };
  // Of the rows' counts a line, the combination whose fitted grids cover the most of the panel,
  // the fewest lines on a tie: tall, thin Q, K and V heads of the largest preset go 8 a line
  // where 6 + 2 had left them a thumb wide and the step scrolling. Where no combination fits,
  // the one that scrolls least.
  std::vector<std::vector<size_t>> choices;
  size_t combinations = 1;
  for (const MeasuredRow& row : measured) {
    choices.push_back(row.choices(width));
    combinations *= choices.back().size();
  }
  for (size_t keep : {size_t{2}, size_t{1}}) {  // at most 81 combinations are tried a frame
    if (combinations <= 81) break;
    combinations = 1;
    for (std::vector<size_t>& c : choices) {
      c.resize(std::min(c.size(), keep));
      combinations *= c.size();
    }
  }
  std::vector<size_t> per_line(rows.size()), best;
  bool best_fits = false;
  float best_score = 0.0f;  // the area where it fits, else the height
  for (size_t n = 0; n < combinations; ++n) {
    for (size_t r = 0, rest = n; r < rows.size(); rest /= choices[r].size(), ++r)
      per_line[r] = choices[r][rest % choices[r].size()];
    const float factor = fitted_factor(per_line, 10);  // to 0.1 %: enough to compare
    const float height = height_at(per_line, factor);
    const bool fits = height <= region + 1.0f;
    const float score = fits ? grid_area(per_line, factor) : height;
    const bool better = best.empty() || (fits && !best_fits) ||
                        (fits == best_fits && (fits ? score > 1.01f * best_score : score < 0.99f * best_score));
    if (better) best = per_line, best_fits = fits, best_score = score;
  }
  if (const float best_factor = fitted_factor(best, 24); best_factor < 1.0f)
    for (HeatmapRow& row : rows) row.max_height = std::max(floor_height, row.max_height * best_factor);
  if (app.widgets.enabled()) {  // tests read the rows' labels
    std::string row_labels;
    for (const HeatmapRow& row : rows)
      if (!row.label.empty() && !row.specs.empty()) row_labels += (row_labels.empty() ? "" : " | ") + row.label;
    app.widgets.set_fact("heatmap.row_labels", row_labels);
  }
  for (size_t r = 0; r < rows.size(); ++r) draw_row(app, std::move(rows[r]), best[r]);
}

}  // namespace al::gui
