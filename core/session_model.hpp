#pragma once
// The app's session model: the current session, its last valid trace, undo/redo
// and background computation. No GUI dependency: tested headless.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "attention.hpp"

namespace al {

class SessionModel {
 public:
  explicit SessionModel(Session initial, ComputeOptions options = {});
  ~SessionModel();
  SessionModel(const SessionModel&) = delete;
  SessionModel& operator=(const SessionModel&) = delete;

  const Session& session() const;
  // The trace of the last *valid* session; stays on screen while an invalid
  // edit is shown with its error, or while a newer one is being computed.
  std::shared_ptr<const Trace> trace() const;
  // Why the current session has no trace of its own (null when it does).
  const std::optional<Error>& error() const;
  bool computing() const;
  float progress() const;  // of the background computation, 0..1

  // Replaces the session with an edited copy: one undo step, except that
  // consecutive edits with the same non-empty merge_key (a drag) merge into one.
  void edit(Session next, std::string label, std::string merge_key = {});
  bool can_undo() const;
  bool can_redo() const;
  bool undo();
  bool redo();
  std::string undo_label() const;
  std::string redo_label() const;

  // A new document (open, new): clears the history.
  void reset(Session s);

  // Once per frame: picks up a finished background computation. True when the
  // trace or error changed.
  bool poll();
  void wait_idle();  // blocks until nothing is pending (tests, screenshots)

  std::uint64_t revision() const;  // bumps on every edit, undo, redo
  bool modified() const;           // changed since mark_saved()
  void mark_saved();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace al
