// The recovery file and the autosave policy (see recovery.hpp).
#include "editing/recovery.hpp"

#include <filesystem>
#include <utility>
#include <nlohmann/json.hpp>

#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "io/settings.hpp"

namespace al {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using std::chrono::system_clock;

constexpr const char* kRecoveryFormat = "attention-lab/recovery";
constexpr int kRecoveryVersion = 1;

Error unreadable(const std::string& path, const std::string& why) {
  return make_error(ErrorCode::ParseError, "the recovery file '" + path + "' cannot be restored: " + why,
                    {{"path", path}});
}

}  // namespace

Result<std::string> recovery_path() {
  auto dir = user_dir(UserDir::State);
  if (!dir) return dir.error();
  return (fs::path(*dir) / "recovery.json").string();
}

std::optional<Error> write_recovery_file(const std::string& path, const Session& session,
                                         const std::string& original_path, system_clock::time_point now) {
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty())
    if (auto error = make_dirs(folder.string())) return error;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  // The session text is embedded as it is, so the session writer's exact float
  // form (and NaN/-0) survives unchanged.
  std::string text = "{\"format\": \"" + std::string(kRecoveryFormat) + "\", \"version\": " +
                     std::to_string(kRecoveryVersion) + ",\n\"original_path\": " +
                     json(original_path).dump(-1, ' ', false, json::error_handler_t::replace) +
                     ",\n\"saved_at_unix_ms\": " + std::to_string(ms) + ",\n\"session\": " +
                     session_to_json(session) + "}\n";
  return write_file_atomic(path, text);
}

Result<std::optional<Recovery>> read_recovery_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<Recovery>();
  auto text = read_file(path);
  if (!text) return text.error();
  const json root = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return unreadable(path, "it is not valid JSON (cut short by a crash?)");
  auto format = root.find("format"), version = root.find("version");
  if (format == root.end() || *format != kRecoveryFormat) return unreadable(path, "it is not a recovery file");
  if (version == root.end() || *version != kRecoveryVersion)
    return unreadable(path, "it was written by a different version of Attention Lab");
  auto original = root.find("original_path"), saved_at = root.find("saved_at_unix_ms"),
       session = root.find("session");
  if (original == root.end() || !original->is_string() || saved_at == root.end() ||
      !saved_at->is_number_integer() || session == root.end())
    return unreadable(path, "'original_path', 'saved_at_unix_ms' or 'session' is missing");
  // Saved sessions hold every matrix inline, so no folder is needed to resolve files.
  auto loaded = parse_session_json_for_editing(session->dump(), "", "recovery file '" + path + "'");
  if (!loaded) return loaded.error();
  Recovery r{std::move(loaded->session), std::move(loaded->unfit), original->get<std::string>(),
             system_clock::time_point(std::chrono::milliseconds(saved_at->get<std::int64_t>()))};
  return std::optional<Recovery>(std::move(r));
}

std::optional<Error> write_recovery(const Session& session, const std::string& original_path,
                                    system_clock::time_point now) {
  auto path = recovery_path();
  if (!path) return path.error();
  return write_recovery_file(*path, session, original_path, now);
}

Result<std::optional<Recovery>> read_recovery() {
  auto path = recovery_path();
  if (!path) return path.error();
  return read_recovery_file(*path);
}

std::optional<Error> clear_recovery_file(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec)
    return make_error(ErrorCode::IoError, "cannot remove the recovery file '" + path + "': " + ec.message(),
                      {{"path", path}});
  return std::nullopt;
}

std::optional<Error> clear_recovery() {
  auto path = recovery_path();
  if (!path) return path.error();
  return clear_recovery_file(*path);
}

AutosaveWriter::AutosaveWriter(std::string path) : path_(std::move(path)), thread_([this] { run(); }) {}

AutosaveWriter::~AutosaveWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void AutosaveWriter::submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_ = std::move(job);  // replaces an older waiting job
  }
  changed_.notify_all();
}

void AutosaveWriter::submit_write(Session snapshot, std::string original_path, std::uint64_t revision) {
  submit(Job{revision, std::move(snapshot), std::move(original_path)});
}

void AutosaveWriter::submit_clear(std::uint64_t revision) { submit(Job{revision, std::nullopt, {}}); }

std::vector<AutosaveWriter::Finished> AutosaveWriter::take_finished() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(finished_, {});
}

bool AutosaveWriter::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !working_ && !waiting_;
}

void AutosaveWriter::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !working_ && !waiting_; });
}

void AutosaveWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return waiting_ || stopping_; });
    if (!waiting_) return;  // stopping, nothing left to write
    Job job = std::move(*waiting_);
    waiting_.reset();
    working_ = true;
    lock.unlock();

    Finished done{job.revision, !job.session, std::nullopt};
    Result<std::string> path = path_.empty() ? recovery_path() : Result<std::string>(path_);
    if (!path) {
      done.error = path.error();
    } else if (job.session) {
      done.error = write_recovery_file(*path, *job.session, job.original_path, system_clock::now());
    } else {
      done.error = clear_recovery_file(*path);
    }

    lock.lock();
    working_ = false;
    finished_.push_back(std::move(done));
    changed_.notify_all();
  }
}

AutosaveTimer::AutosaveTimer(std::uint64_t initial_revision, Clock::duration quiet, Clock::duration max_wait)
    : quiet_(quiet), max_wait_(max_wait), seen_(initial_revision), saved_(initial_revision) {}

bool AutosaveTimer::should_save(std::uint64_t revision, Clock::time_point now) {
  if (revision != seen_) {
    seen_ = revision;
    last_change_ = now;
    if (!pending_since_) pending_since_ = now;
  }
  if (!pending()) {
    pending_since_.reset();
    return false;
  }
  if (last_attempt_ && now - *last_attempt_ < quiet_) return false;  // the last write failed: wait a bit
  const bool quiet = now - last_change_ >= quiet_;
  const bool overdue = now - *pending_since_ >= max_wait_;
  if (!quiet && !overdue) return false;
  last_attempt_ = now;
  return true;
}

void AutosaveTimer::mark_saved(std::uint64_t revision) {
  saved_ = revision;
  last_attempt_.reset();
  // Edits made while the write was under way are still pending, from their time.
  if (pending()) pending_since_ = last_change_;
  else pending_since_.reset();
}

void AutosaveTimer::reset(std::uint64_t revision) {
  seen_ = saved_ = revision;
  pending_since_.reset();
  last_attempt_.reset();
}

}  // namespace al
