#include "platform/widget_registry.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "io/matrix_io.hpp"

namespace al::gui {

void WidgetRegistry::begin_frame() {
  entries_.clear();
  facts_.clear();
  rects_.clear();
}

void WidgetRegistry::add(const std::string& name, ImVec2 min, ImVec2 max,
                         const std::vector<std::pair<std::string, double>>& numbers) {
  rects_.push_back({name, min, max, numbers});
  if (!enabled()) return;
  nlohmann::json entry = {{"name", name}, {"x", min.x}, {"y", min.y},
                          {"w", max.x - min.x}, {"h", max.y - min.y}};
  for (const auto& [key, value] : numbers) entry[key] = value;
  entries_.push_back(entry.dump());
}

void WidgetRegistry::add_last_item(const std::string& name) {
  add(name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

bool WidgetRegistry::find(const std::string& name, ImVec2* min, ImVec2* max,
                          std::vector<std::pair<std::string, double>>* numbers) const {
  for (const Rect& rect : rects_)
    if (rect.name == name) {
      *min = rect.min;
      *max = rect.max;
      if (numbers) *numbers = rect.numbers;
      return true;
    }
  return false;
}

void WidgetRegistry::set_fact(const std::string& name, const std::string& value) {
  if (enabled()) facts_.emplace_back(name, value);
}

void WidgetRegistry::append_fact(const std::string& name, const std::string& line) {
  if (!enabled()) return;
  for (auto& [fact, value] : facts_)
    if (fact == name) {
      value += "\n" + line;
      return;
    }
  facts_.emplace_back(name, line);
}

void WidgetRegistry::write() {
  if (!enabled()) return;
  nlohmann::json out;
  out["widgets"] = nlohmann::json::object();
  for (const auto& text : entries_) {
    auto entry = nlohmann::json::parse(text);
    out["widgets"][entry["name"].get<std::string>()] = entry;
  }
  for (const auto& [name, value] : facts_) out[name] = value;
  std::string text = out.dump(1);
  if (text == last_written_) return;
  // Atomic, so a test polling the file never reads half of it.
  if (!write_file_atomic(path_, text)) last_written_ = text;
}

}  // namespace al::gui
