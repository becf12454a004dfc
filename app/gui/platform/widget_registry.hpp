#pragma once
// Where the named widgets are on screen, written as JSON when the app runs with
// --widgets-out, so tests that drive the real app with xdotool know where to click.
#include <imgui.h>

#include <string>
#include <utility>
#include <vector>

namespace al::gui {

class WidgetRegistry {
 public:
  // A new path gets this frame's content even when it equals what the old path got.
  void set_output(std::string path) {
    path_ = std::move(path);
    last_written_.clear();
  }
  bool enabled() const { return !path_.empty(); }

  void begin_frame();
  // A rectangle in window coordinates (pixels, origin top-left) and numbers
  // that help to address parts of it (rows, cols of a grid).
  void add(const std::string& name, ImVec2 min, ImVec2 max,
           const std::vector<std::pair<std::string, double>>& numbers = {});
  // The last ImGui item's rectangle.
  void add_last_item(const std::string& name);
  // Facts about the frame (current stage, language, revision ...).
  void set_fact(const std::string& name, const std::string& value);
  // Adds a line to a fact of this frame (the fact is made when there is none yet).
  void append_fact(const std::string& name, const std::string& line);
  // Writes the file if this frame's content differs from the last one written.
  void write();
  // Where `name` was drawn so far this frame (kept with or without --widgets-out,
  // so a lesson can point at a widget, and --frame-stats can read a heatmap's
  // numbers); false if it was not drawn yet.
  bool find(const std::string& name, ImVec2* min, ImVec2* max,
            std::vector<std::pair<std::string, double>>* numbers = nullptr) const;

 private:
  struct Rect {
    std::string name;
    ImVec2 min, max;
    std::vector<std::pair<std::string, double>> numbers;
  };
  std::string path_;
  std::vector<Rect> rects_;
  std::vector<std::string> entries_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::string last_written_;
};

}  // namespace al::gui
