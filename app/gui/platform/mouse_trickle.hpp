#pragma once
// ImGui 1.86 reads the mouse as "where it is now, which buttons are down", polled
// once a frame, not as events. When a frame is slow (a large preset, a loaded
// machine) a press and the move after it, or a last move and the release, reach
// it between the same two frames: a stroke on the mask painter starts on the
// second cell and misses the first, a slider let go keeps the value before its
// last move, a pan loses its last stretch. MouseTrickle hands the pointer to
// ImGui so that each frame sees at most one button change, at the place it
// happened, and each turn of the wheel where the pointer was, as ImGui 1.87's
// input queue does; KeyTrickle does the same for keys.
#include <array>
#include <deque>

namespace al::gui {

class MouseTrickle {
 public:
  static constexpr int kButtons = 5;  // ImGuiMouseButton_COUNT
  struct Pointer {
    double x = 0.0, y = 0.0;
    std::array<bool, kButtons> down{};
    double wheel_x = 0.0, wheel_y = 0.0;  // this frame's turns only
  };

  // From GLFW's callbacks, in the order they came.
  void moved(double x, double y);
  void button(int button, bool pressed);
  void wheel(double dx, double dy);

  // Before a frame: the pointer this frame sees. Either a run of moves (only the
  // last counts) and the wheel turns right after it, or one button change: never a
  // move and a button change together, so a press is seen where it was made, a
  // release after the last move, and a turn of the wheel where the pointer was.
  const Pointer& next_frame();
  bool has_pointer() const { return has_position_; }  // any move seen yet
  bool waiting() const { return !events_.empty(); }    // more frames are needed

 private:
  struct Event {
    enum Kind { Move, Button, Wheel } kind;
    double x, y;  // a move's position, a wheel's turn
    int button;   // a button change's
    bool pressed;
  };
  std::deque<Event> events_;
  Pointer pointer_;
  bool has_position_ = false;
};

}  // namespace al::gui
