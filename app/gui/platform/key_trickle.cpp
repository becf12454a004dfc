#include "platform/key_trickle.hpp"

#include <GLFW/glfw3.h>

#include <algorithm>

namespace al::gui {

bool KeyTrickle::may_pass(const KeyEvent& event) const {
  if (event.action == GLFW_RELEASE) return !press_unseen_;
  return std::find(changed_since_frame_.begin(), changed_since_frame_.end(), event.key) ==
         changed_since_frame_.end();
}

void KeyTrickle::pass(const KeyEvent& event) {
  changed_since_frame_.push_back(event.key);
  if (event.action == GLFW_PRESS) press_unseen_ = true;
}

bool KeyTrickle::accept(const KeyEvent& event) {
  if (event.action != GLFW_PRESS && event.action != GLFW_RELEASE) return true;  // repeats: ImGui 1.86 ignores them
  if (waiting_.empty() && may_pass(event)) {
    pass(event);
    return true;
  }
  waiting_.push_back(event);
  return false;
}

std::vector<KeyTrickle::KeyEvent> KeyTrickle::end_frame() {
  changed_since_frame_.clear();
  press_unseen_ = false;
  std::vector<KeyEvent> passed;
  while (!waiting_.empty() && may_pass(waiting_.front())) {
    pass(waiting_.front());
    passed.push_back(waiting_.front());
    waiting_.pop_front();
  }
  return passed;
}

}  // namespace al::gui
