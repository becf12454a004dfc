#pragma once
// The app's session model: the current session, its last valid trace, undo/redo
// and background computation. No GUI dependency: tested headless.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "numerics/attention.hpp"

namespace al {

// Compute policy. A session below both limits is computed inside edit(), undo(),
// redo() and reset(), so the app shows the result in the same frame; a larger
// one on the model's worker thread, and then shows up frames later. Measured on
// the 2-core build machine (OMP_WAIT_POLICY=passive, load 2, --frame-stats at
// 1600x1000): n = 512, d_model 512, 8 heads (1.8e9 flops as
// estimate_compute_flops counts them, a 30 MiB trace) recomputes after an edit of
// X in 12 ms; inside the frame 42 edits/s show, 23 ms after each edit, against
// 28/s and 33 ms on the worker, whose result waits for the renderer's frames.
// n = 1024 (a 108 MiB trace) takes 40-75 ms and goes to the worker. The byte limit
// guards the cost of allocating and writing the (B, h, Lq, Lk) stages.
constexpr double kSyncComputeMaxFlops = 2e9;
constexpr Index kSyncComputeMaxTraceBytes = Index{32} << 20;

// Cost of one full computation of the session in flop-equivalents: the matrix
// products plus, per cell of the (B, h, Lq, Lk) stages, the memory traffic and
// exp that cost about 100 product flops each; an estimate.
double estimate_compute_flops(const Session& s);
// True when the model would compute this session on its worker thread. Invalid
// sessions and sessions over the memory limit (0 = default_memory_limit()) are
// not: their error is known at once, without allocating.
bool computes_in_background(const Session& s, Index memory_limit_bytes = 0);

class SessionModel {
 public:
  explicit SessionModel(Session initial, ComputeOptions options = {});
  ~SessionModel();
  SessionModel(const SessionModel&) = delete;
  SessionModel& operator=(const SessionModel&) = delete;

  const Session& session() const;
  // The trace of the last *valid* session; stays on screen while an invalid
  // edit is shown with its error, or while a newer one is being computed. Null
  // before the first valid computation (and after reset() until it is computed).
  std::shared_ptr<const Trace> trace() const;
  // The session trace() was computed from: it may be older than session(), so
  // draw labels and sizes of the trace from this one (or from trace()->dims).
  const Session& trace_session() const;
  // Why the current session has no trace of its own (null when it does).
  const std::optional<Error>& error() const;
  bool computing() const;
  float progress() const;  // of the background computation, 0..1

  // The (B, h, Lq, Lk) stages computations keep (ComputeOptions::keep); unset keeps
  // every stage, as the model starts. A session whose whole trace is over the memory
  // limit fails with TooLarge; keeping only what the view shows lets it compute.
  const std::optional<StageSet>& keep() const;
  // Recomputes the current session keeping only `stages` (not an undo step; bumps
  // revision()). Unset, or any session whose whole trace fits the memory limit (now
  // or after a later edit), keeps every stage again.
  void set_keep(std::optional<StageSet> stages);
  Index memory_limit() const;  // bytes: the options' limit or default_memory_limit()
  // The stages whose summaries the next computations also reduce for the heatmaps
  // (ComputeOptions::peak_stages): those the view shows. Recomputes nothing.
  void set_peak_stages(StageSet stages);

  // Replaces the session with an edited copy: one undo step, except that
  // consecutive edits with the same non-empty merge_key (a drag) merge into one.
  void edit(Session next, std::string label, std::string merge_key = {});
  // Closes the current merge run (mouse released, focus left a cell), so the
  // next edit with the same merge_key starts a new undo step.
  void end_merge();
  bool can_undo() const;
  bool can_redo() const;
  bool undo();
  bool redo();
  std::string undo_label() const;
  std::string redo_label() const;

  // A new document (open, new): clears the history and keeps every stage again.
  void reset(Session s);

  // Once per frame: picks up a finished background computation. True when the
  // trace or error changed.
  bool poll();
  void wait_idle();  // blocks until nothing is pending (tests, screenshots)
  // Called on the worker thread, under the model's lock, as soon as a background
  // computation has finished: lets a UI that sleeps while it waits wake at once
  // (glfwPostEmptyEvent) instead of polling. It must not call into the model.
  // Null turns it off; after that returns, it is never called again.
  void set_on_finished(std::function<void()> notify);

  std::uint64_t revision() const;  // bumps on every edit, undo, redo, reset
  // Changed since mark_saved() (or reset()); undoing back to the saved state
  // counts as unchanged.
  bool modified() const;
  void mark_saved();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace al
