// The recovery file (round trip, XDG location, corrupt files) and the autosave policy.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>
#include <fstream>

#include "numerics/attention.hpp"
#include "editing/edits.hpp"
#include "editing/recovery.hpp"
#include "io/session_io.hpp"
#include "user_dirs_fixture.hpp"

using namespace al;
using al::testing::ScopedEnv;
using al::testing::TempDir;
using namespace std::chrono_literals;

namespace {

bool same_bits(const TensorPtr& a, const TensorPtr& b) {
  if (!a || !b) return !a && !b;
  if (a->shape != b->shape) return false;
  for (Index i = 0; i < a->size(); ++i) {
    const float x = a->data[size_t(i)], y = b->data[size_t(i)];
    if (!(std::isnan(x) && std::isnan(y)) && std::memcmp(&x, &y, 4) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("recovery: write, read back exactly, clear; folders are created under XDG_STATE_HOME") {
  TempDir dir;
  ScopedEnv state("XDG_STATE_HOME", dir / "state");
  const std::string path = dir / "state/attention-lab/recovery.json";
  CHECK(*recovery_path() == path);

  auto nothing = read_recovery();
  REQUIRE(nothing.ok());
  CHECK_FALSE(nothing->has_value());
  CHECK_FALSE(clear_recovery());  // nothing to clear is fine

  // An edited preset with values a text format could lose: NaN, -0, a tiny float.
  Session s = *load_preset("default");
  s = with_cell(s, InputId::X, 0, std::nanf(""));
  s = with_cell(s, InputId::X, 7, -0.0f);  // was 0.5 (a cell holding +0 would stay +0)
  REQUIRE(std::signbit(s.x->data[7]));
  s = with_cell(s, InputId::WQ, 2, 1.17549435e-38f);
  s = with_causal(s, true);
  const auto when = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  REQUIRE_FALSE(write_recovery(s, "/home/learner/my session.json", when));
  CHECK(std::filesystem::is_regular_file(path));

  auto back = read_recovery();
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  const Recovery& r = **back;
  CHECK(r.original_path == "/home/learner/my session.json");
  CHECK(r.saved_at == when);
  CHECK(session_to_json(r.session) == session_to_json(s));
  CHECK(same_bits(r.session.x, s.x));
  CHECK(std::signbit(r.session.x->data[7]));
  CHECK(r.session.config.mask.causal);

  REQUIRE_FALSE(clear_recovery());
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(read_recovery()->has_value());
}

TEST_CASE("recovery: a corrupt or foreign file is an error to show, not a crash") {
  TempDir dir;
  const std::string path = dir / "recovery.json";
  Session s = *load_preset("seed-003-example");
  REQUIRE_FALSE(write_recovery_file(path, s, "", std::chrono::system_clock::now()));
  std::string full;
  {
    std::ifstream in(path);
    full.assign(std::istreambuf_iterator<char>(in), {});
  }
  SUBCASE("cut short") {
    std::ofstream(path) << full.substr(0, full.size() / 2);
    auto r = read_recovery_file(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("cannot be restored") != std::string::npos);
  }
  SUBCASE("another version") {
    std::string text = full;
    text.replace(text.find("\"version\": 1"), 12, "\"version\": 9");
    std::ofstream(path) << text;
    auto r = read_recovery_file(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("different version") != std::string::npos);
  }
}

// The learner may have been in the middle of fixing sizes when the app died:
// such a session is restored as it is, with its error, as the editor had it.
TEST_CASE("recovery: a session whose sizes do not fit comes back as it was, with its error") {
  TempDir dir;
  const std::string path = dir / "recovery.json";
  const Session base = *load_preset("default");  // projection, d_model 8, 2 heads
  REQUIRE(base.config.d_model % 3 != 0);
  const auto when = std::chrono::system_clock::now();

  SUBCASE("heads not dividing d_model") {
    Session unfit = base;
    unfit.config.num_heads = 3;
    unfit = with_cell(unfit, InputId::X, 1, 42.0f);
    REQUIRE(validate(unfit));
    REQUIRE_FALSE(write_recovery_file(path, unfit, "/work/a.json", when));
    auto r = read_recovery_file(path);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    const Recovery& recovery = **r;
    CHECK(recovery.session.config.num_heads == 3);
    CHECK(recovery.session.x->data[1] == 42.0f);
    CHECK(recovery.original_path == "/work/a.json");
    REQUIRE(recovery.unfit);
    CHECK(recovery.unfit->code == ErrorCode::HeadsDoNotDivide);
    CHECK(recovery.unfit->message.find("recovery file") != std::string::npos);
    CHECK(session_to_json(recovery.session) == session_to_json(unfit));
  }
  SUBCASE("a custom mask one key short") {
    const Index len_q = base.x->dim(1), len_k = base.x->dim(1);
    Session unfit = base;
    unfit.config.mask.custom = make_tensor(Tensor({len_q, len_k - 1}, 1.0f));  // (Lq, Lk - 1)
    REQUIRE(validate(unfit));
    REQUIRE_FALSE(write_recovery_file(path, unfit, "", when));
    auto r = read_recovery_file(path);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    const Recovery& recovery = **r;
    REQUIRE(recovery.session.config.mask.custom);
    CHECK(recovery.session.config.mask.custom->shape == std::vector<Index>{len_q, len_k - 1});
    REQUIRE(recovery.unfit);
    CHECK(recovery.unfit->code == ErrorCode::MaskShapeMismatch);
  }
  SUBCASE("a session that fits has no error") {
    REQUIRE_FALSE(write_recovery_file(path, base, "", when));
    auto r = read_recovery_file(path);
    REQUIRE(r.ok());
    CHECK_FALSE((*r)->unfit);
  }
  SUBCASE("anything else wrong with the session inside is still an error") {
    REQUIRE_FALSE(write_recovery_file(path, base, "", when));
    std::string text;
    {
      std::ifstream in(path);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    text.replace(text.find("\"num_heads\""), 11, "\"num_hedas\"");
    std::ofstream(path) << text;
    auto r = read_recovery_file(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("num_hedas") != std::string::npos);
  }
}

TEST_CASE("recovery: an unwritable state folder is an error") {
  // A file where the folder should be (permissions would not stop root).
  TempDir dir;
  std::ofstream(dir / "state") << "a file, not a folder";
  ScopedEnv state("XDG_STATE_HOME", dir / "state");
  auto error = write_recovery(*load_preset("default"), "");
  REQUIRE(error);
  CHECK(error->code == ErrorCode::IoError);
  CHECK(error->message.find("cannot create the folder") != std::string::npos);
}

TEST_CASE("AutosaveTimer: saves a few seconds after the last change, once per burst") {
  using Clock = AutosaveTimer::Clock;
  const Clock::time_point t0{};
  AutosaveTimer timer(5, 3s, 30s);
  // Frames without changes never save.
  for (int frame = 0; frame < 600; ++frame) CHECK_FALSE(timer.should_save(5, t0 + frame * 16ms));
  CHECK_FALSE(timer.pending());

  // A drag: revisions 6..20, one every 100 ms, then quiet.
  const Clock::time_point start = t0 + 10s;
  for (int i = 0; i < 15; ++i) CHECK_FALSE(timer.should_save(6 + i, start + i * 100ms));
  const Clock::time_point last = start + 1400ms;
  CHECK(timer.pending());
  CHECK_FALSE(timer.should_save(20, last + 2999ms));
  CHECK(timer.should_save(20, last + 3s));
  timer.mark_saved(20);
  CHECK_FALSE(timer.pending());
  CHECK_FALSE(timer.should_save(20, last + 4s));
  CHECK_FALSE(timer.should_save(20, last + 60s));
}

TEST_CASE("AutosaveTimer: a long run of edits still saves every max_wait; a failed write retries after quiet") {
  using Clock = AutosaveTimer::Clock;
  const Clock::time_point t0{};
  AutosaveTimer timer(0, 3s, 30s);
  std::uint64_t rev = 0;
  std::vector<int> saved_at;
  // An edit every second for 95 s: never 3 s of quiet, so only max_wait triggers,
  // 30 s after the first edit not yet on disk (1 s, then 32 s, then 63 s).
  for (int s = 1; s <= 95; ++s) {
    ++rev;
    if (timer.should_save(rev, t0 + s * 1s)) {
      saved_at.push_back(s);
      timer.mark_saved(rev);
    }
  }
  CHECK(saved_at == std::vector<int>{31, 62, 93});

  // The write fails (caller does not mark_saved): no retry every frame, one after `quiet`.
  AutosaveTimer failing(0, 3s, 30s);
  CHECK_FALSE(failing.should_save(1, t0));
  CHECK(failing.should_save(1, t0 + 3s));
  CHECK_FALSE(failing.should_save(1, t0 + 3s + 16ms));
  CHECK_FALSE(failing.should_save(1, t0 + 5s));
  CHECK(failing.should_save(1, t0 + 6s));

  // An edit while a background write of revision 1 is under way stays pending.
  failing.should_save(2, t0 + 6500ms);
  failing.mark_saved(1);
  CHECK(failing.pending());
  CHECK_FALSE(failing.should_save(2, t0 + 9s));
  CHECK(failing.should_save(2, t0 + 9500ms));

  // reset (a file opened or saved): nothing pending.
  failing.reset(7);
  CHECK_FALSE(failing.pending());
  CHECK_FALSE(failing.should_save(7, t0 + 100s));
}

TEST_CASE("AutosaveWriter: writes on its own thread; the newest waiting snapshot wins; joins on destruction") {
  TempDir dir;
  const std::string path = dir / "state/recovery.json";
  // Each write of this file stops 1 s between its complete temporary file and the rename.
  ScopedEnv pause("ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME", path);
  ScopedEnv seconds("ATTENTION_LAB_TEST_PAUSE_SECONDS", "1");
  using Clock = std::chrono::steady_clock;
  const Session base = *load_preset("default");
  auto edited = [&](float value) { return with_cell(base, InputId::X, 0, value); };
  auto x00_on_disk = [&] {
    auto r = read_recovery_file(path);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    return (**r).session.x->data[0];
  };

  SUBCASE("submitting never waits for the disk; the waiting job is replaced by a newer one") {
    AutosaveWriter writer(path);
    const auto start = Clock::now();
    writer.submit_write(edited(1.0f), "/a.json", 1);
    std::this_thread::sleep_for(200ms);  // revision 1 is now under way, paused before its rename
    writer.submit_write(edited(2.0f), "/a.json", 2);
    writer.submit_write(edited(3.0f), "/a.json", 3);  // replaces 2, which is never written
    CHECK(Clock::now() - start < 500ms);               // nothing above waited for the 1 s pause
    CHECK_FALSE(writer.idle());
    writer.wait_idle();
    CHECK(Clock::now() - start >= 2s);  // two writes, each paused 1 s
    const auto finished = writer.take_finished();
    REQUIRE(finished.size() == 2);
    CHECK(finished[0].revision == 1);
    CHECK(finished[1].revision == 3);
    CHECK_FALSE(finished[0].error);
    CHECK_FALSE(finished[1].error);
    CHECK(x00_on_disk() == 3.0f);
    CHECK(writer.take_finished().empty());
  }
  SUBCASE("a clear after a write removes the file once that write is done") {
    AutosaveWriter writer(path);
    writer.submit_write(edited(4.0f), "", 1);
    std::this_thread::sleep_for(200ms);
    writer.submit_clear(1);
    writer.wait_idle();
    CHECK_FALSE(std::filesystem::exists(path));
    const auto finished = writer.take_finished();
    REQUIRE(finished.size() == 2);
    CHECK(finished[1].cleared);
  }
  SUBCASE("destruction finishes the job under way and the waiting one") {
    {
      AutosaveWriter writer(path);
      writer.submit_write(edited(5.0f), "", 1);
      std::this_thread::sleep_for(200ms);
      writer.submit_write(edited(6.0f), "", 2);
    }
    CHECK(x00_on_disk() == 6.0f);
  }
  SUBCASE("a failed write is reported with its error") {
    std::ofstream(dir / "blocked") << "a file where the folder should be";
    AutosaveWriter writer(dir / "blocked/recovery.json");
    writer.submit_write(base, "", 7);
    writer.wait_idle();
    const auto finished = writer.take_finished();
    REQUIRE(finished.size() == 1);
    CHECK(finished[0].revision == 7);
    REQUIRE(finished[0].error);
    CHECK(finished[0].error->code == ErrorCode::IoError);
  }
}

TEST_CASE("killed in the middle of saving: the previous session file and the recovery file stay whole") {
  TempDir dir;
  const std::string session_path = dir / "work.json", recovery = dir / "state/recovery.json";
  const Session before = *load_preset("default");
  // About a megabyte of JSON, so that a kill often lands inside a write.
  const Session edited = with_sizes(*load_preset("default"), 2, 128, 128, 128);
  const std::string before_text = session_to_json(before), edited_text = session_to_json(edited);
  REQUIRE_FALSE(save_session_file(session_path, before));
  REQUIRE_FALSE(write_recovery_file(recovery, before, session_path, std::chrono::system_clock::now()));

  auto is_edited = [&](const Result<std::optional<Recovery>>& r) {
    return r.ok() && r->has_value() && session_to_json((*r)->session) == edited_text;
  };
  // Kills at several moments; the last one only once the edits have reached the
  // recovery file (readers never see a half-written one meanwhile).
  for (int kill_after_ms : {3, 11, 29, 57, -1}) {
    CAPTURE(kill_after_ms);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // the "app": saves and autosaves over and over until killed
      for (;;) {
        (void)save_session_file(session_path, edited);
        (void)write_recovery_file(recovery, edited, session_path, std::chrono::system_clock::now());
      }
    }
    if (kill_after_ms >= 0) {
      ::usleep(static_cast<useconds_t>(kill_after_ms) * 1000);
    } else {
      for (int waited_ms = 0; waited_ms < 60000 && !is_edited(read_recovery_file(recovery)); waited_ms += 5)
        ::usleep(5000);
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));

    auto saved = load_session_file(session_path);
    REQUIRE(saved.ok());
    const std::string saved_text = session_to_json(*saved);
    CHECK((saved_text == before_text || saved_text == edited_text));
    auto restored = read_recovery_file(recovery);
    REQUIRE(restored.ok());
    REQUIRE(restored->has_value());
    const std::string restored_text = session_to_json((*restored)->session);
    CHECK((restored_text == before_text || restored_text == edited_text));
    if (kill_after_ms < 0) {
      CHECK(restored_text == edited_text);  // the crash lost no edit the autosave had written
      CHECK((*restored)->original_path == session_path);
    }
  }
}
