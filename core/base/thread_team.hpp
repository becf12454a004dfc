#pragma once
// Helper threads that stay awake through one computation's passes.
//
// An OpenMP parallel region wakes its sleeping workers and puts them back to sleep at its
// end (OMP_WAIT_POLICY=passive, which the app needs: idle spinning threads starve its
// renderer). In our VMs each wake-up costs about 45 µs, and a trace runs three to four
// passes: 15 % of a trace at L = 64. A TeamScope wakes the helpers once, as a computation
// starts, so the wake-up overlaps the caller's planning and allocating; between passes they
// spin a bounded time instead of sleeping, and only while the scope lasts. While it lasts they
// may not run on the caller's CPU (where it has another), which the scheduler did not always see to.
#include <functional>

#include "base/tensor.hpp"

namespace al {

// Below this many multiply-adds a pass runs on the calling thread: waking a second
// thread costs more than the work at teaching sizes.
constexpr double kParallelFlops = 2e5;

class TeamScope {
 public:
  // Wakes the helpers when `wanted`, the caller's OpenMP thread count is above one and no
  // other thread's computation holds them; otherwise parallel_for uses OpenMP as before.
  // A scope inside another on the same thread changes nothing.
  explicit TeamScope(bool wanted);
  ~TeamScope();
  TeamScope(const TeamScope&) = delete;
  TeamScope& operator=(const TeamScope&) = delete;

 private:
  bool holds_team_ = false;
};

// Calls body(task, on_caller) once for each task in [0, count), in no set order, where
// on_caller is true on the calling thread (the one that may report progress). With
// `parallel` and at least two tasks they are shared with the awake helpers when the caller
// holds a TeamScope, and with an OpenMP team otherwise; calls from inside a task run on
// their thread alone. Tasks must not throw on other threads (as in OpenMP, that ends the
// process); an exception on the caller's thread propagates once the helpers are out.
void parallel_for(Index count, bool parallel, const std::function<void(Index task, bool on_caller)>& body);

// The threads parallel_for shares tasks among (OpenMP's thread count).
int parallel_threads();

}  // namespace al
