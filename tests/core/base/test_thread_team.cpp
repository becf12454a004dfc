// The thread team (base/thread_team): every task runs exactly once, progress's thread is
// the caller's, a second thread really joins inside a scope and is kept off the caller's CPU,
// and nesting, exceptions and a second computation on another thread fall back safely.
#include <doctest/doctest.h>
#include <omp.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/thread_team.hpp"

namespace {

using al::Index;

// Runs parallel_for and returns how often each task ran, checking that on_caller is true
// exactly on the calling thread.
std::vector<int> runs_per_task(Index count, bool parallel) {
  std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
  const auto caller = std::this_thread::get_id();
  std::atomic<int> wrong_caller{0};
  al::parallel_for(count, parallel, [&](Index task, bool on_caller) {
    runs[static_cast<size_t>(task)]++;
    if (on_caller != (std::this_thread::get_id() == caller)) wrong_caller++;
  });
  CHECK(wrong_caller.load() == 0);
  std::vector<int> out;
  for (auto& r : runs) out.push_back(r.load());
  return out;
}

// True when a thread other than the caller ran one of two tasks that each wait (up to 10 s)
// for the other to start: only possible with a second thread taking part.
bool second_thread_joins() {
  std::atomic<int> started{0};
  std::mutex m;
  std::set<std::thread::id> threads;
  al::parallel_for(2, true, [&](Index, bool) {
    {
      std::lock_guard<std::mutex> lock(m);
      threads.insert(std::this_thread::get_id());
    }
    ++started;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  });
  return threads.size() == 2;
}

}  // namespace

TEST_CASE("parallel_for runs every task exactly once, with or without a team scope") {
  for (bool scoped : {false, true}) {
    const al::TeamScope team(scoped);
    for (bool parallel : {false, true})
      for (Index count : {0, 1, 2, 3, 17, 1000}) {
        CAPTURE(scoped);
        CAPTURE(parallel);
        CAPTURE(count);
        CHECK(runs_per_task(count, parallel) == std::vector<int>(static_cast<size_t>(count), 1));
      }
  }
}

TEST_CASE("inside a team scope a second thread takes tasks, pass after pass") {
  if (omp_get_max_threads() < 2) return;  // OMP_NUM_THREADS=1: nothing to share
  const al::TeamScope team(true);
  for (int pass = 0; pass < 5; ++pass) CHECK(second_thread_joins());
  // A pause longer than the helpers' spin: they sleep, and the next pass wakes them.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(second_thread_joins());
}

TEST_CASE("inside a team scope the helpers may not run on the caller's CPU, where there is another") {
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (omp_get_max_threads() < 2 || CPU_COUNT(&allowed) < 2) return;  // nowhere else to go
  {
    const al::TeamScope start(true);  // the helpers exist, started with every CPU this thread has
    CHECK(second_thread_joins());
  }
  // The caller stays on one CPU for the test, so that "its CPU" is one CPU.
  const int callers_cpu = sched_getcpu();
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(callers_cpu, &only);
  REQUIRE(sched_setaffinity(0, sizeof only, &only) == 0);
  struct Restore {
    cpu_set_t cpus;
    ~Restore() { sched_setaffinity(0, sizeof cpus, &cpus); }
  } restore{allowed};

  const al::TeamScope team(true);
  std::atomic<bool> helper_ran{false};
  bool helper_may_use_callers_cpu = true;
  int helper_ran_on = -1;
  al::parallel_for(2, true, [&](Index, bool on_caller) {
    if (!on_caller) {
      cpu_set_t its;
      sched_getaffinity(0, sizeof its, &its);
      helper_may_use_callers_cpu = CPU_ISSET(callers_cpu, &its);
      helper_ran_on = sched_getcpu();
      helper_ran = true;
      return;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!helper_ran.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  });
  REQUIRE(helper_ran.load());
  CHECK_FALSE(helper_may_use_callers_cpu);
  CHECK(helper_ran_on != callers_cpu);
}

TEST_CASE("without a scope, or with a scope not wanted, the passes still run on two threads (OpenMP)") {
  if (omp_get_max_threads() < 2) return;
  CHECK(second_thread_joins());
  const al::TeamScope unwanted(false);
  CHECK(second_thread_joins());
}

TEST_CASE("a parallel_for inside a task runs on that task's thread, every inner task once") {
  const al::TeamScope team(true);
  std::vector<std::atomic<int>> runs(8 * 8);
  std::atomic<int> moved{0};
  al::parallel_for(8, true, [&](Index outer, bool) {
    const auto here = std::this_thread::get_id();
    al::parallel_for(8, true, [&](Index inner, bool) {
      runs[static_cast<size_t>(outer * 8 + inner)]++;
      if (std::this_thread::get_id() != here) moved++;
    });
  });
  CHECK(moved.load() == 0);
  for (auto& r : runs) CHECK(r.load() == 1);
}

TEST_CASE("a scope inside a scope keeps the team, and the team serves again once it is closed") {
  {
    const al::TeamScope outer(true);
    {
      const al::TeamScope inner(true);
      CHECK(runs_per_task(100, true) == std::vector<int>(100, 1));
    }
    CHECK(runs_per_task(100, true) == std::vector<int>(100, 1));  // the inner scope's end left it open
  }
  const al::TeamScope again(true);
  CHECK(runs_per_task(100, true) == std::vector<int>(100, 1));
  if (omp_get_max_threads() >= 2) CHECK(second_thread_joins());
}

TEST_CASE("an exception thrown by a task on the calling thread propagates, and the team still works") {
  if (omp_get_max_threads() < 2) return;  // no team: OpenMP, where a throwing task ends the process
  const al::TeamScope team(true);
  // A helper's task waits for the caller's, so the caller surely runs one, even when the
  // helper is quicker to take tasks.
  std::atomic<bool> caller_ran{false};
  CHECK_THROWS_AS(al::parallel_for(50, true,
                                   [&](Index, bool on_caller) {
                                     if (on_caller) {
                                       caller_ran = true;
                                       throw std::runtime_error("task failed");
                                     }
                                     const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                                     while (!caller_ran.load() && std::chrono::steady_clock::now() < until)
                                       std::this_thread::yield();
                                   }),
                  std::runtime_error);
  CHECK(runs_per_task(100, true) == std::vector<int>(100, 1));
  CHECK(second_thread_joins());
}

TEST_CASE("two computations at once: one holds the team, the other runs on OpenMP, both complete") {
  std::atomic<int> failures{0};
  auto computation = [&] {
    for (int round = 0; round < 50; ++round) {
      const al::TeamScope team(true);
      std::vector<std::atomic<int>> runs(257);
      al::parallel_for(257, true, [&](Index task, bool) { runs[static_cast<size_t>(task)]++; });
      for (auto& r : runs)
        if (r.load() != 1) failures++;
    }
  };
  std::thread first(computation), second(computation);
  first.join();
  second.join();
  CHECK(failures.load() == 0);
}
