// Helpers shared by the labs of labs_state.hpp: window opening,
// tensor views and a small line plot drawn with the draw list (no ImPlot).
#include <algorithm>
#include <cmath>

#include "panels/panels.hpp"
#include "widgets/floating_window.hpp"

namespace al::gui {

namespace {

// A lab window's width and height: never wider or taller than the screen, its text wraps at its edge.
ImVec2 lab_window_size(ImVec2 size_in_fonts) {
  const float font = ImGui::GetFontSize();
  const ImVec2 work = ImGui::GetMainViewport()->WorkSize;
  return ImVec2(std::min(size_in_fonts.x * font, work.x - 5.0f * font), std::min(size_in_fonts.y * font, work.y - 3.0f * font));
}

}  // namespace

float lab_text_width(ImVec2 size_in_fonts) {
  return lab_window_size(size_in_fonts).x - 2.0f * ImGui::GetStyle().WindowPadding.x;
}

void open_if_asked(const AppState& app, const char* id, bool* open) {
  if (app.frame == 0 && std::count(app.options.open_windows.begin(), app.options.open_windows.end(), id))
    *open = true;
}

bool begin_lab_window(AppState& app, const char* id, const char* title_key, bool* open,
                      ImVec2 size_in_fonts, bool* visible, bool over_editors, bool fit_height, bool restore_size) {
  open_if_asked(app, id, open);
  if (!*open) return false;
  const float font = ImGui::GetFontSize();
  if (over_editors) {
    place_over_editors(size_in_fonts.y, 0.0f, true);
  } else {
    // A window fitted to its text gets no size of ours: given one, it would show at that size for a frame.
    if (!fit_height || restore_size)
      ImGui::SetNextWindowSize(lab_window_size(size_in_fonts), restore_size ? ImGuiCond_Always : ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowPos(ImVec2(4.0f * font, 2.5f * font), ImGuiCond_FirstUseEver);
  }
  *visible = ImGui::Begin((std::string(app.tr(title_key)) + "###lab_" + id).c_str(), open,
                          fit_height ? ImGuiWindowFlags_AlwaysAutoResize : ImGuiWindowFlags_None);
  ImVec2 min = ImGui::GetWindowPos();
  app.widgets.add(std::string("lab.") + id, min,
                  ImVec2(min.x + ImGui::GetWindowWidth(), min.y + ImGui::GetWindowHeight()));
  return true;
}

MatrixView lab_view(std::shared_ptr<const void> owner, const Tensor& tensor, std::string key) {
  MatrixView view;
  view.owner = std::move(owner);
  view.data = tensor.data.data();
  view.rows = tensor.rows();
  view.cols = tensor.cols();
  view.row_stride = view.cols;
  view.key = std::move(key);
  return view;
}

void lab_plot(const char* id, const char* title, const std::vector<std::string>& x_labels,
              const std::vector<PlotSeries>& series, bool log2_y, ImVec2 size) {
  ImGui::PushID(id);
  const float font = ImGui::GetFontSize();
  ImGui::TextUnformatted(title);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("plot", size);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 frame = ImGui::GetColorU32(ImGuiCol_FrameBg);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  draw->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), frame);

  auto transform = [&](double v) { return log2_y ? std::log2(std::max(v, 1e-300)) : v; };
  double low = 0, high = 0;
  bool any = false;
  for (const auto& s : series)
    for (double v : *s.values) {
      if (!std::isfinite(v) || (log2_y && v <= 0)) continue;
      const double t = transform(v);
      low = any ? std::min(low, t) : t;
      high = any ? std::max(high, t) : t;
      any = true;
    }
  if (!log2_y) low = std::min(low, 0.0);
  if (high - low < 1e-12) high = low + 1;
  // Room for the y labels on the left and the x labels below.
  const float left = origin.x + 3.2f * font, right = origin.x + size.x - 0.5f * font;
  const float top = origin.y + 0.5f * font, bottom = origin.y + size.y - 1.4f * font;
  auto label_of = [&](double t) { return lab_number(log2_y ? std::exp2(t) : t); };
  draw->AddText(ImVec2(origin.x + 0.2f * font, top - 0.4f * font), text, label_of(high).c_str());
  draw->AddText(ImVec2(origin.x + 0.2f * font, bottom - 0.8f * font), text, label_of(low).c_str());
  draw->AddLine(ImVec2(left, bottom), ImVec2(right, bottom), text);
  draw->AddLine(ImVec2(left, top), ImVec2(left, bottom), text);
  const size_t count = x_labels.size();
  auto x_at = [&](size_t i) {
    return count <= 1 ? left : left + (right - left) * static_cast<float>(i) / static_cast<float>(count - 1);
  };
  // Every other x label when they would crowd.
  const size_t stride = count > 6 && (right - left) / static_cast<float>(count) < 2.2f * font ? 2 : 1;
  for (size_t i = 0; i < count; i += stride) {
    const float w = ImGui::CalcTextSize(x_labels[i].c_str()).x;
    draw->AddText(ImVec2(std::min(x_at(i) - 0.5f * w, right - w), bottom + 0.15f * font), text,
                  x_labels[i].c_str());
  }
  for (const auto& s : series) {
    ImVec2 previous;
    bool has_previous = false;
    for (size_t i = 0; i < std::min(count, s.values->size()); ++i) {
      const double v = (*s.values)[i];
      if (!std::isfinite(v) || (log2_y && v <= 0)) {
        has_previous = false;
        continue;
      }
      const float y = bottom - (bottom - top) * static_cast<float>((transform(v) - low) / (high - low));
      const ImVec2 point(x_at(i), y);
      if (has_previous) draw->AddLine(previous, point, s.colour, 0.15f * font);
      draw->AddCircleFilled(point, 0.2f * font, s.colour);
      previous = point;
      has_previous = true;
    }
  }
  ImGui::PopID();
}

}  // namespace al::gui
