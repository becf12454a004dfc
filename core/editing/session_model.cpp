#include "editing/session_model.hpp"

#include "editing/edits.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace al {

namespace {

// Per-cell work of the (B, h, Lq, Lk) stages besides the products (scale, mask,
// exp, normalise, dropout, each stored), in product flops: measured, these stages
// are bound by memory traffic, ~100 flops of a GEMM per cell.
constexpr double kFlopsPerScoreCell = 100;

// Undo history bound: a step holds only the tensors its edit replaced, but on
// big sessions each of those can be megabytes.
constexpr size_t kMaxUndoSteps = 100;

Index memory_limit_of(const ComputeOptions& options) {
  return options.memory_limit_bytes > 0 ? options.memory_limit_bytes : default_memory_limit();
}

// Decides with an already known trace size (the model estimates it once per change).
bool background_for(const Session& s, Index trace_bytes, Index memory_limit) {
  if (trace_bytes > memory_limit) return false;  // compute() refuses at once, without allocating
  return trace_bytes >= kSyncComputeMaxTraceBytes || estimate_compute_flops(s) >= kSyncComputeMaxFlops;
}

}  // namespace

double estimate_compute_flops(const Session& s) {
  const double batch = static_cast<double>(s.batch());
  const double len_q = static_cast<double>(s.len_q());
  const double len_kv = static_cast<double>(s.len_kv());
  const double d = static_cast<double>(s.config.d_model);
  const double heads = static_cast<double>(std::max<Index>(1, s.config.num_heads));
  // Q·Kᵀ and weights·V: 2·Lq·Lk·d_k multiply-adds each, over h heads of d_k = d/h.
  double flops = 4 * batch * len_q * len_kv * d;
  flops += kFlopsPerScoreCell * batch * heads * len_q * len_kv;
  // Projections: X·W_Q (d x d), and X_kv·W_K, X_kv·W_V (d x H_kv·d_k each).
  const double kv = static_cast<double>(kv_input_width(s.config));
  if (s.config.mode == InputMode::Projection) flops += 2 * batch * (len_q * d + 2 * len_kv * kv) * d;
  if (s.weights.w_o) flops += 2 * batch * len_q * d * d;
  return flops;
}

bool computes_in_background(const Session& s, Index memory_limit_bytes) {
  const Result<Index> bytes = estimate_trace_bytes(s);
  if (!bytes) return false;
  return background_for(s, *bytes, memory_limit_bytes > 0 ? memory_limit_bytes : default_memory_limit());
}

struct SessionModel::Impl {
  // One undo (or redo) step: the session to go back to, the label of the edit
  // that left it, and its content id (for modified()).
  struct Step {
    Session session;
    std::string label;
    std::uint64_t content = 0;
  };
  // A computation handed to the worker, with the trace to reuse stages from.
  struct Request {
    std::uint64_t id = 0;
    Session session;
    Session base_session;
    std::shared_ptr<const Trace> base_trace;
    std::optional<StageSet> keep;  // the UI thread's options.keep when posted
    StageSet peak_stages;          // and its options.peak_stages
  };
  struct Finished {
    std::uint64_t id;
    Session session;
    Result<std::shared_ptr<const Trace>> result;
  };

  explicit Impl(Session initial, ComputeOptions options_)
      : options(std::move(options_)), current(std::move(initial)) {
    // The model owns cancellation and progress; whatever the caller set is replaced.
    options.cancel = nullptr;
    options.progress = nullptr;
    // The views' head means and ranges come with the trace, computed on the
    // worker for big sessions, so the UI thread does not rescan (n, n) stages.
    options.summarize = true;
    recompute();
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      cancel = true;
    }
    wake_worker.notify_all();
    if (worker.joinable()) worker.join();
  }

  // --- UI thread ---------------------------------------------------------------

  ComputeOptions options;  // memory limit and kept stages for every computation (keep, peak_stages: UI thread only)
  Session current;
  std::uint64_t revision = 0;
  // Content ids: every new session content gets a fresh one; undo/redo restore
  // the old one, so going back to the saved content counts as unmodified.
  std::uint64_t content = 0, last_content = 0, saved_content = 0;
  std::vector<Step> undo_steps, redo_steps;
  std::string open_merge_key;  // merge_key of the last edit while its run is open

  std::shared_ptr<const Trace> trace;
  Session trace_session;  // the session `trace` was computed from
  std::optional<Error> error;
  std::uint64_t wanted = 0;  // id of the background request awaited (0 = none)
  std::uint64_t last_request = 0;

  // --- shared with the worker, under `mutex` ------------------------------------

  std::mutex mutex;
  std::condition_variable wake_worker, worker_idle;
  std::optional<Request> request;    // the newest request not yet started
  std::optional<Finished> finished;  // the last result not yet polled
  bool worker_busy = false;
  bool stopping = false;
  std::atomic<bool> cancel{false};  // read by compute() on the worker
  std::atomic<float> progress{0.0f};
  std::function<void()> on_finished;
  std::thread worker;

  void set_current(Session s, std::uint64_t content_id) {
    current = std::move(s);
    content = content_id;
    ++revision;
    recompute();
  }

  // Brings trace/error up to date with `current`: small sessions here and now,
  // big ones on the worker.
  void recompute() {
    // A session that fits whole again keeps every stage again.
    if (options.keep) {
      const Result<Index> whole = estimate_trace_bytes(current);
      if (whole && *whole <= memory_limit_of(options)) options.keep.reset();
    }
    const Result<Index> bytes = estimate_trace_bytes(current, options.keep);
    if (!bytes) {  // invalid: the last valid trace stays, with this error beside it
      drop_background();
      error = bytes.error();
      return;
    }
    if (background_for(current, *bytes, memory_limit_of(options))) {
      error.reset();
      post_background();
      return;
    }
    drop_background();
    install(current, compute(current, options, trace ? &trace_session : nullptr, trace));
  }

  void install(const Session& from, const Result<std::shared_ptr<const Trace>>& result) {
    if (result) {
      trace = *result;
      trace_session = from;
      error.reset();
    } else {
      error = result.error();
    }
  }

  void post_background() {
    wanted = ++last_request;
    progress = 0.0f;
    {
      std::lock_guard<std::mutex> lock(mutex);
      // Only the newest request matters: it replaces one not yet started and
      // cancels the one running (the worker clears the flag when it takes a request).
      request = Request{wanted, current, trace ? trace_session : Session{}, trace, options.keep, options.peak_stages};
      finished.reset();
      cancel = true;
      if (!worker.joinable()) worker = std::thread([this] { work(); });
    }
    wake_worker.notify_one();
  }

  // The current session no longer needs the background result.
  void drop_background() {
    if (wanted == 0) return;
    wanted = 0;
    std::lock_guard<std::mutex> lock(mutex);
    request.reset();
    finished.reset();
    cancel = true;
  }

  bool poll() {
    if (wanted == 0) return false;
    std::optional<Finished> done;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (finished && finished->id == wanted) done = std::move(finished);
      finished.reset();
    }
    if (!done) return false;
    wanted = 0;
    if (!done->result && done->result.error().code == ErrorCode::Cancelled) return false;
    install(done->session, done->result);
    return true;
  }

  void wait_idle() {
    {
      std::unique_lock<std::mutex> lock(mutex);
      worker_idle.wait(lock, [this] { return !request && !worker_busy; });
    }
    poll();
  }

  // --- worker thread -------------------------------------------------------------

  void work() {
    for (;;) {
      Request job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake_worker.wait(lock, [this] { return stopping || request; });
        if (stopping) return;
        job = std::move(*request);
        request.reset();
        cancel = false;
        worker_busy = true;
      }
      ComputeOptions job_options;
      job_options.memory_limit_bytes = options.memory_limit_bytes;  // never changes after construction
      job_options.summarize = options.summarize;
      job_options.peak_texels = options.peak_texels;  // never changes after construction
      job_options.peak_stages = job.peak_stages;
      job_options.keep = job.keep;
      job_options.cancel = &cancel;
      job_options.progress = [this](float fraction) { progress = fraction; };
      const Session* base_session = job.base_trace ? &job.base_session : nullptr;
      Result<std::shared_ptr<const Trace>> result =
          compute(job.session, job_options, base_session, job.base_trace);
      {
        std::lock_guard<std::mutex> lock(mutex);
        worker_busy = false;
        finished = Finished{job.id, std::move(job.session), std::move(result)};
        if (on_finished) on_finished();
      }
      worker_idle.notify_all();
    }
  }
};

SessionModel::SessionModel(Session initial, ComputeOptions options)
    : impl_(std::make_unique<Impl>(std::move(initial), std::move(options))) {}

SessionModel::~SessionModel() = default;

const Session& SessionModel::session() const { return impl_->current; }
std::shared_ptr<const Trace> SessionModel::trace() const { return impl_->trace; }
const Session& SessionModel::trace_session() const { return impl_->trace_session; }
const std::optional<Error>& SessionModel::error() const { return impl_->error; }
bool SessionModel::computing() const { return impl_->wanted != 0; }
void SessionModel::set_on_finished(std::function<void()> notify) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->on_finished = std::move(notify);
}
float SessionModel::progress() const { return impl_->progress; }
const std::optional<StageSet>& SessionModel::keep() const { return impl_->options.keep; }
Index SessionModel::memory_limit() const { return memory_limit_of(impl_->options); }

void SessionModel::set_keep(std::optional<StageSet> stages) {
  Impl& m = *impl_;
  m.options.keep = std::move(stages);
  ++m.revision;
  m.recompute();
}

void SessionModel::set_peak_stages(StageSet stages) { impl_->options.peak_stages = stages; }

void SessionModel::edit(Session next, std::string label, std::string merge_key) {
  Impl& m = *impl_;
  const bool merge = !merge_key.empty() && merge_key == m.open_merge_key && !m.undo_steps.empty();
  if (!merge) {
    m.undo_steps.push_back({m.current, std::move(label), m.content});
    if (m.undo_steps.size() > kMaxUndoSteps) m.undo_steps.erase(m.undo_steps.begin());
  }
  m.redo_steps.clear();
  m.open_merge_key = std::move(merge_key);
  m.set_current(std::move(next), ++m.last_content);
}

void SessionModel::end_merge() { impl_->open_merge_key.clear(); }

bool SessionModel::can_undo() const { return !impl_->undo_steps.empty(); }
bool SessionModel::can_redo() const { return !impl_->redo_steps.empty(); }

bool SessionModel::undo() {
  Impl& m = *impl_;
  if (m.undo_steps.empty()) return false;
  Impl::Step step = std::move(m.undo_steps.back());
  m.undo_steps.pop_back();
  m.redo_steps.push_back({m.current, step.label, m.content});
  m.open_merge_key.clear();
  m.set_current(std::move(step.session), step.content);
  return true;
}

bool SessionModel::redo() {
  Impl& m = *impl_;
  if (m.redo_steps.empty()) return false;
  Impl::Step step = std::move(m.redo_steps.back());
  m.redo_steps.pop_back();
  m.undo_steps.push_back({m.current, step.label, m.content});
  m.open_merge_key.clear();
  m.set_current(std::move(step.session), step.content);
  return true;
}

std::string SessionModel::undo_label() const {
  return impl_->undo_steps.empty() ? std::string() : impl_->undo_steps.back().label;
}

std::string SessionModel::redo_label() const {
  return impl_->redo_steps.empty() ? std::string() : impl_->redo_steps.back().label;
}

void SessionModel::reset(Session s) {
  Impl& m = *impl_;
  m.undo_steps.clear();
  m.redo_steps.clear();
  m.open_merge_key.clear();
  // Another document: the old trace must not stand in for it.
  m.trace.reset();
  m.trace_session = Session{};
  m.error.reset();
  m.options.keep.reset();  // the learner chooses again what to keep of another document
  m.set_current(std::move(s), ++m.last_content);
  m.saved_content = m.content;
}

bool SessionModel::poll() { return impl_->poll(); }
void SessionModel::wait_idle() { impl_->wait_idle(); }

std::uint64_t SessionModel::revision() const { return impl_->revision; }
bool SessionModel::modified() const { return impl_->content != impl_->saved_content; }
void SessionModel::mark_saved() { impl_->saved_content = impl_->content; }

}  // namespace al
