#pragma once
// The Training lab (labs/panel_lab_training.cpp): a tiny attention model
// (core/training) trained on a worker thread, so the window stays responsive,
// with pause / step / resume / reset; the window reads snapshots of its progress.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "training/training.hpp"

namespace al::gui {

struct AppState;

// What the window shows of a run; a new one is published after every step.
struct TrainingSnapshot {
  ToyTask task = ToyTask::PreviousToken;
  int steps = 0;          // done
  int target_steps = 0;   // the task's default run; the worker pauses there
  std::vector<float> losses;            // (steps): each step's training-batch loss
  std::vector<float> accuracies;        // held-out accuracy, every kAccuracyEvery steps (and at step 0)
  std::vector<int> accuracy_steps;      // the step of each accuracy
  TensorPtr weights;                    // (1, h, L, L): the held-out example's attention, as of `weights_step`
  int weights_step = -1;
  TensorPtr ideal;                      // (L, L): the task's ideal pattern for that example
  IdealShares shares;                   // how much of `weights` falls on the ideal keys
  std::vector<std::string> tokens;      // (L): the example's symbols
  std::shared_ptr<const Session> example;  // the learned layer on that example, as of `weights_step`
};

class TrainingRun {
 public:
  static constexpr int kAccuracyEvery = 25;  // steps between held-out evaluations (and heatmap updates)
  static constexpr int kDefaultPace = 150;   // steps per second: previous_token's 300 steps in 2 s

  TrainingRun(ToyTask task, Positions positions);
  ~TrainingRun();  // stops and joins the worker
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  void resume();   // trains until paused (or the task's default steps are done, then pauses)
  void pause();
  void step();     // one step, then paused
  bool running() const;
  // Steps per second while it runs: slow enough to watch a pattern form (a step
  // takes about a millisecond). Takes effect from the next step.
  void set_pace(int steps_per_second);
  std::shared_ptr<const TrainingSnapshot> snapshot() const;

 private:
  void work();
  void evaluate(TrainingSnapshot& next) const;  // held-out accuracy and attention, on the worker

  Trainer trainer_;
  std::vector<int> example_;  // the held-out example's symbols
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool running_ = false;
  int single_steps_ = 0;  // step() requests not yet done
  bool stepping_ = false;  // a step is being computed: it is published even if paused meanwhile
  int pace_ = kDefaultPace;
  bool quit_ = false;
  std::shared_ptr<const TrainingSnapshot> snapshot_;
  std::thread worker_;  // last: started once everything above exists
};

struct TrainingLabState {
  bool open = false;
  int task = 0;                        // ToyTask
  Positions positions = Positions::Learned;  // how the model knows where a token is
  std::unique_ptr<TrainingRun> run;    // made on the first start / step; reset drops it
  int pace = TrainingRun::kDefaultPace;  // steps per second
  int runs_started = 0;                // names each run's textures: a new run's step 0 is not the last one's
};

void draw_training_lab(AppState& app);  // labs/panel_lab_training.cpp

}  // namespace al::gui
