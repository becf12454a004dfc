#include "platform/mouse_trickle.hpp"

namespace al::gui {

void MouseTrickle::moved(double x, double y) { events_.push_back({false, x, y, 0, false}); }

void MouseTrickle::button(int button, bool pressed) {
  if (button >= 0 && button < kButtons) events_.push_back({true, 0.0, 0.0, button, pressed});
}

const MouseTrickle::Pointer& MouseTrickle::next_frame() {
  if (!events_.empty() && events_.front().is_button) {
    pointer_.down[events_.front().button] = events_.front().pressed;
    events_.pop_front();
    return pointer_;
  }
  while (!events_.empty() && !events_.front().is_button) {
    pointer_.x = events_.front().x;
    pointer_.y = events_.front().y;
    has_position_ = true;
    events_.pop_front();
  }
  return pointer_;
}

}  // namespace al::gui
