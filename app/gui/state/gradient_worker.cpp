#include "state/gradient_worker.hpp"

namespace al::gui {

GradientWorker::GradientWorker() : worker_([this] { work(); }) {}

GradientWorker::~GradientWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
    next_.reset();
  }
  wake_.notify_all();
  worker_.join();
}

void GradientWorker::request(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    next_ = std::move(job);
  }
  wake_.notify_all();
}

std::optional<GradientWorker::Done> GradientWorker::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<Done> done = std::move(done_);
  done_.reset();
  return done;
}

bool GradientWorker::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ || next_.has_value() || done_.has_value();
}

void GradientWorker::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return quit_ || next_.has_value(); });
    if (quit_) return;
    Job job = std::move(*next_);
    next_.reset();
    running_ = true;
    lock.unlock();
    Result<Gradients> gradients = backward(job.session, *job.trace, job.upstream);
    lock.lock();
    running_ = false;
    done_ = Done{std::move(job.trace), std::move(job.settings), std::move(gradients)};
  }
}

}  // namespace al::gui
