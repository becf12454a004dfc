#pragma once
// ImGui 1.86 reads keys as "down now" (io.KeysDown), not as events: a key pressed
// and released between two frames (a quick tap while a frame is slow: a large
// preset, a loaded machine) is never seen down, and the Enter that ends typing or
// the Ctrl+Z that undoes is lost; a second tap whose press comes before any frame
// saw the first one's release reads as the key held on. KeyTrickle passes key
// events to ImGui so that a frame sees every press and release, as ImGui 1.87's
// input queue does.
#include <deque>
#include <vector>

namespace al::gui {

class KeyTrickle {
 public:
  struct KeyEvent {
    int key, scancode, action, mods;  // as GLFW's key callback gives them
  };

  // A key event from GLFW: true to hand it to ImGui now, false when it waits
  // for a frame. Events keep their order: Ctrl+Z tapped in one go (xdotool lets
  // go of Ctrl before Z) still shows Ctrl down while Z is.
  bool accept(const KeyEvent& event);

  // Once a frame has been built: the waiting events it lets through, in order.
  std::vector<KeyEvent> end_frame();

 private:
  // A release waits while a press is unseen; a press waits when its key already
  // changed since the last frame.
  bool may_pass(const KeyEvent& event) const;
  void pass(const KeyEvent& event);

  std::deque<KeyEvent> waiting_;
  std::vector<int> changed_since_frame_;  // keys
  bool press_unseen_ = false;
};

}  // namespace al::gui
