#pragma once
// Autosave for crash recovery: the app writes the session it is editing to
// $XDG_STATE_HOME/attention-lab/recovery.json (else ~/.local/state/...) a few
// seconds after each change; the next start offers to restore it; a save to
// the real file or a clean exit clears it.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "model/session.hpp"

namespace al {

struct Recovery {
  Session session;
  // Sizes that do not fit together (heads not dividing d_model, a mask of the
  // wrong shape): the learner was in the middle of fixing them; restored as
  // they are, with this error shown, as opening such a session file does.
  std::optional<Error> unfit;
  std::string original_path;  // the file being edited; empty for a preset or a new session
  std::chrono::system_clock::time_point saved_at;
};

// user_dir(UserDir::State) + "/recovery.json".
Result<std::string> recovery_path();

// Writes atomically (write_file_atomic), creating the folder. The session's
// tensors are immutable and shared, so a copy of the Session can be written
// from a background thread while the app keeps editing.
std::optional<Error> write_recovery(const Session& session, const std::string& original_path,
                                    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());
// No file: an empty optional. A file that cannot be read back (corrupt, from a
// newer version): an error to show; the caller decides whether to clear it.
Result<std::optional<Recovery>> read_recovery();
// Removes the file; no file is not an error.
std::optional<Error> clear_recovery();

// The same at an explicit path (tests, tools).
std::optional<Error> write_recovery_file(const std::string& path, const Session& session,
                                         const std::string& original_path,
                                         std::chrono::system_clock::time_point now);
Result<std::optional<Recovery>> read_recovery_file(const std::string& path);
std::optional<Error> clear_recovery_file(const std::string& path);

// When to autosave, given the session model's revision each frame: once the
// edits have paused for `quiet` (a drag or a burst of typing saves once, after
// it ends), and at least every `max_wait` during a long run of edits. A failed
// write is retried after `quiet`, not every frame. Deciding *whether* there is
// anything to keep (model.modified()) stays with the caller: when the session
// is unmodified it clears the recovery file instead.
//
//   if (!model.modified()) { clear once; timer.reset(model.revision()); }
//   else if (timer.should_save(model.revision(), Clock::now()))
//     if (!write_recovery(...)) timer.mark_saved(revision written);
class AutosaveTimer {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AutosaveTimer(std::uint64_t initial_revision, Clock::duration quiet = std::chrono::seconds(3),
                         Clock::duration max_wait = std::chrono::seconds(30));

  // True when the caller should write `revision` now.
  bool should_save(std::uint64_t revision, Clock::time_point now);
  // `revision` is on disk (it may be older than the latest one seen).
  void mark_saved(std::uint64_t revision);
  // Nothing to save at `revision` (a file was opened, saved or the recovery cleared).
  void reset(std::uint64_t revision);
  bool pending() const { return seen_ != saved_; }

 private:
  Clock::duration quiet_, max_wait_;
  std::uint64_t seen_, saved_;
  Clock::time_point last_change_{};
  std::optional<Clock::time_point> pending_since_;  // first change not on disk
  std::optional<Clock::time_point> last_attempt_;
};

// Writes (or clears) the recovery file on its own thread, so a slow or stuck
// disk never stalls the frames. One job at a time; a job submitted while one is
// under way waits, and a newer job replaces a waiting one (only the newest
// state matters). The session is a snapshot: its tensors are immutable and
// shared, so copying it is cheap and serialising it there is safe.
class AutosaveWriter {
 public:
  struct Finished {
    std::uint64_t revision = 0;
    bool cleared = false;        // a clear job, not a write
    std::optional<Error> error;
  };
  // `path` empty: recovery_path() at each job.
  explicit AutosaveWriter(std::string path = {});
  // Finishes the job under way and the waiting one, then joins the thread.
  ~AutosaveWriter();
  AutosaveWriter(const AutosaveWriter&) = delete;
  AutosaveWriter& operator=(const AutosaveWriter&) = delete;

  void submit_write(Session snapshot, std::string original_path, std::uint64_t revision);
  // Removes the file after any write submitted before (so a late write cannot bring it back).
  void submit_clear(std::uint64_t revision);
  // Jobs done since the last call, oldest first.
  std::vector<Finished> take_finished();
  bool idle() const;
  void wait_idle();

 private:
  struct Job {
    std::uint64_t revision = 0;
    std::optional<Session> session;  // none: clear
    std::string original_path;
  };
  void submit(Job job);
  void run();

  std::string path_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Job> waiting_;
  bool working_ = false, stopping_ = false;
  std::vector<Finished> finished_;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace al
