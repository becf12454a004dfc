#include "state/training_lab.hpp"

#include <algorithm>

#include "numerics/attention.hpp"

namespace al::gui {

namespace {
TrainingConfig with_positions(TrainingConfig config, Positions positions) {
  config.positions = positions;
  return config;
}
}  // namespace

TrainingRun::TrainingRun(ToyTask task, Positions positions)
    : trainer_(with_positions(default_training(task), positions)), example_(trainer_.heldout_tokens(1)) {
  auto first = std::make_shared<TrainingSnapshot>();
  first->task = task;
  first->target_steps = trainer_.config().steps;
  first->ideal = make_tensor(toy_ideal_pattern(task, example_));
  evaluate(*first);  // the untrained head's pattern and accuracy, at step 0
  snapshot_ = std::move(first);
  worker_ = std::thread([this] { work(); });
}

TrainingRun::~TrainingRun() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void TrainingRun::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = true;
  }
  wake_.notify_all();
}

void TrainingRun::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  single_steps_ = 0;
}

void TrainingRun::step() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    ++single_steps_;
  }
  wake_.notify_all();
}

bool TrainingRun::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Paused only once a step under way is published: no step appears after "paused".
  return running_ || single_steps_ > 0 || stepping_;
}

std::shared_ptr<const TrainingSnapshot> TrainingRun::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_;
}

void TrainingRun::evaluate(TrainingSnapshot& next) const {
  next.accuracies.push_back(static_cast<float>(trainer_.heldout_accuracy()));
  next.accuracy_steps.push_back(trainer_.steps_done());
  Session example = trainer_.heldout_session(1);
  if (auto trace = compute(example)) {
    next.weights = (*trace)->stage_ptr(Stage::Weights);
    next.weights_step = trainer_.steps_done();
    if (next.ideal) next.shares = ideal_shares(*next.weights, *next.ideal);
  }
  next.tokens = example.tokens;
  next.example = std::make_shared<const Session>(std::move(example));
}

void TrainingRun::set_pace(int steps_per_second) {
  std::lock_guard<std::mutex> lock(mutex_);
  pace_ = std::max(1, steps_per_second);
}

void TrainingRun::work() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point due = Clock::now();  // when the next paced step may start
  for (;;) {
    std::shared_ptr<const TrainingSnapshot> current;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return quit_ || running_ || single_steps_ > 0; });
      if (quit_) return;
      if (single_steps_ > 0) {
        --single_steps_;
      } else {
        // Running: wait for the step's turn, unless paused or stopped meanwhile.
        if (wake_.wait_until(lock, due, [&] { return quit_ || !running_ || single_steps_ > 0; })) continue;
        due = std::max(due, Clock::now() - std::chrono::milliseconds(100)) +
              std::chrono::microseconds(1000000 / pace_);
      }
      current = snapshot_;
      stepping_ = true;
    }
    const double loss = trainer_.step();  // only this thread touches the trainer
    auto next = std::make_shared<TrainingSnapshot>(*current);
    next->steps = trainer_.steps_done();
    next->losses.push_back(static_cast<float>(loss));
    if (next->steps % kAccuracyEvery == 0 || next->steps == next->target_steps) evaluate(*next);
    std::lock_guard<std::mutex> lock(mutex_);
    if (next->steps == next->target_steps) running_ = false;  // the task's run is done: pause there
    snapshot_ = std::move(next);
    stepping_ = false;
  }
}

}  // namespace al::gui
