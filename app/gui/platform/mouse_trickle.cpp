#include "platform/mouse_trickle.hpp"

namespace al::gui {

void MouseTrickle::moved(double x, double y) { events_.push_back({Event::Move, x, y, 0, false}); }

void MouseTrickle::button(int button, bool pressed) {
  if (button >= 0 && button < kButtons) events_.push_back({Event::Button, 0.0, 0.0, button, pressed});
}

void MouseTrickle::wheel(double dx, double dy) { events_.push_back({Event::Wheel, dx, dy, 0, false}); }

const MouseTrickle::Pointer& MouseTrickle::next_frame() {
  pointer_.wheel_x = pointer_.wheel_y = 0.0;
  if (!events_.empty() && events_.front().kind == Event::Button) {
    pointer_.down[events_.front().button] = events_.front().pressed;
    events_.pop_front();
    return pointer_;
  }
  while (!events_.empty() && events_.front().kind == Event::Move) {
    pointer_.x = events_.front().x;
    pointer_.y = events_.front().y;
    has_position_ = true;
    events_.pop_front();
  }
  while (!events_.empty() && events_.front().kind == Event::Wheel) {
    pointer_.wheel_x += events_.front().x;
    pointer_.wheel_y += events_.front().y;
    events_.pop_front();
  }
  return pointer_;
}

}  // namespace al::gui
