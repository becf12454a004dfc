#pragma once
// The backward pass of a session whose trace is computed off the UI thread too
// (computes_in_background): too long to run inside a frame, so it runs on a thread
// of its own. The latest request wins: one asked for while another runs waits for
// it and replaces any older waiting one, and a result names the trace and the loss
// it is for, so the view can drop one that arrives after they changed.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/error.hpp"
#include "model/session.hpp"
#include "model/trace.hpp"
#include "numerics/backward.hpp"

namespace al::gui {

class GradientWorker {
 public:
  struct Job {
    Session session;
    std::shared_ptr<const Trace> trace;
    Tensor upstream;       // dL/d(output), the output's shape
    std::string settings;  // the loss it is for (GradientView::settings)
  };
  struct Done {
    std::shared_ptr<const Trace> trace;
    std::string settings;
    Result<Gradients> gradients;
  };

  GradientWorker();
  ~GradientWorker();  // waits for the backward pass under way
  GradientWorker(const GradientWorker&) = delete;
  GradientWorker& operator=(const GradientWorker&) = delete;

  void request(Job job);
  std::optional<Done> take();  // the latest finished result, once
  bool busy() const;           // a request waits or runs, or its result is not taken yet

 private:
  void work();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Job> next_;
  std::optional<Done> done_;
  bool running_ = false;
  bool quit_ = false;
  std::thread worker_;  // last: started once everything above exists
};

}  // namespace al::gui
