#include "base/thread_team.hpp"

#include <omp.h>
#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace al {

namespace {

using Clock = std::chrono::steady_clock;
using Body = std::function<void(Index, bool)>;

// How long an awake helper waits for the next pass, spinning, before it sleeps again:
// longer than the serial stretches between a trace's passes at learners' sizes (tens of
// µs), short enough that no helper holds a core through a long serial one.
constexpr auto kSpinBudget = std::chrono::microseconds(200);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// What this thread is to the team: it holds a scope; it is inside a task (its own
// parallel_for calls then run serially, as nested OpenMP regions do); it is a helper.
thread_local bool holds_team = false;
thread_local bool in_task = false;
thread_local bool is_helper = false;

class Team {
 public:
  // Never destroyed: its detached helpers may still be asleep in it when the process exits.
  static Team& instance() {
    static Team* team = new Team;
    return *team;
  }

  // Takes the team for the calling thread and wakes `threads` - 1 helpers, or returns false.
  bool open(int threads) {
    if (!owner_.try_lock()) return false;
    try {
      for (; helpers_ < threads - 1; ++helpers_) std::thread([this] { serve(); }).detach();
    } catch (const std::system_error&) {  // no thread to start: run with those there are
    }
    if (helpers_ == 0) {
      owner_.unlock();
      return false;
    }
    seats_for_job_ = threads - 1;
    keep_helpers_off_callers_cpu();
    awake_.store(true);
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      ++signal_;
    }
    wake_.notify_all();
    return true;
  }

  void close() {
    awake_.store(false);
    owner_.unlock();
  }

  // On the owner's thread: runs the job with whichever helpers join, and returns when
  // every task has finished.
  void run(Index count, const Body& body) {
    // The job's fields change only here, while none is posted and no helper is inside.
    keep_helpers_off_callers_cpu();
    body_ = &body;
    count_ = count;
    next_.store(0);
    seats_.store(seats_for_job_);
    posted_.store(++last_job_);
    // A helper that stopped spinning sleeps; it counted itself before it last looked at posted_.
    if (sleepers_.load() > 0) {
      {
        std::lock_guard<std::mutex> lock(sleep_mutex_);
        ++signal_;
      }
      wake_.notify_all();
    }
    struct Retire {  // also when a task throws: no helper may be left inside the job
      Team& team;
      ~Retire() {
        team.next_.store(team.count_);
        team.posted_.store(0);
        while (team.inside_.load() != 0) relax();
      }
    } retire{*this};
    in_task = true;
    struct Leave {
      ~Leave() { in_task = false; }
    } leave;
    for (Index task; (task = next_.fetch_add(1)) < count;) body(task, true);
  }

 private:
  // Woken by the owner, a helper could be put on the owner's own CPU with the other one idle:
  // after a busy stretch (a session loading on both cores) the scheduler's search for an idle
  // CPU gave up, in about half of our fresh processes, and the two threads took turns on one
  // core for milliseconds until the load balancer parted them (docs/performance.md). So while
  // the owner computes, the helpers may run anywhere but on its CPU. A system call per helper
  // only when the owner's CPU changes; none where there is nowhere else to go.
  void keep_helpers_off_callers_cpu() {
#ifdef __linux__
    const int cpu = sched_getcpu();
    if (helpers_kept_off_.exchange(cpu) == cpu) return;
    std::lock_guard<std::mutex> lock(helpers_cpus_mutex_);
    for (const HelperCpus& helper : helpers_cpus_) {
      cpu_set_t cpus = helper.allowed;
      if (cpu >= 0 && CPU_ISSET(cpu, &cpus) && CPU_COUNT(&cpus) > 1) CPU_CLR(cpu, &cpus);
      sched_setaffinity(helper.id, sizeof cpus, &cpus);
    }
#endif
  }

  bool job_to_join(std::uint64_t done) const {
    const std::uint64_t job = posted_.load();
    return job != 0 && job != done;
  }

  void join(std::uint64_t job) {
    inside_.fetch_add(1);
    // posted_ is read again after counting ourselves in: the owner clears it before it
    // waits for inside_ to reach 0, so a job still posted here cannot change under us.
    if (posted_.load() == job && seats_.fetch_sub(1) > 0)
      for (Index task; (task = next_.fetch_add(1)) < count_;) (*body_)(task, false);
    inside_.fetch_sub(1);
  }

  void serve() {
    is_helper = in_task = true;
#ifdef __linux__
    HelperCpus me{gettid(), {}};
    if (sched_getaffinity(0, sizeof me.allowed, &me.allowed) == 0) {
      std::lock_guard<std::mutex> lock(helpers_cpus_mutex_);
      helpers_cpus_.push_back(me);
      helpers_kept_off_.store(-2);  // a new helper: set every helper's CPUs again at the next chance
    }
#endif
    std::uint64_t seen_signal = 0, done = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return signal_ != seen_signal || job_to_join(done); });
        sleepers_.fetch_sub(1);
        seen_signal = signal_;
      }
      // Awake: join each posted job while the scope lasts, until none comes for kSpinBudget.
      auto idle_since = Clock::now();
      for (unsigned spins = 1;; ++spins) {
        const std::uint64_t job = posted_.load();
        if (job != 0 && job != done) {
          join(job);
          done = job;
          idle_since = Clock::now();
          continue;
        }
        if (!awake_.load(std::memory_order_relaxed)) break;
        if (spins % 64 == 0 && Clock::now() - idle_since > kSpinBudget) break;
        relax();
      }
    }
  }

  std::mutex owner_;  // held by the thread whose scope has the team
  int helpers_ = 0;   // started so far; only the owner starts more
  int seats_for_job_ = 0;
  std::atomic<bool> awake_{false};  // a scope is open: helpers spin between jobs
#ifdef __linux__
  struct HelperCpus {
    pid_t id;
    cpu_set_t allowed;  // the CPUs it was started with
  };
  std::mutex helpers_cpus_mutex_;
  std::vector<HelperCpus> helpers_cpus_;
  std::atomic<int> helpers_kept_off_{-2};  // the CPU the helpers were last kept off (-1: none)
#endif

  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::uint64_t signal_ = 0;  // bumped, under sleep_mutex_, to wake sleeping helpers
  std::atomic<int> sleepers_{0};

  // The current job (sequentially consistent atomics: a helper counts itself in inside_
  // and then reads posted_; the owner clears posted_ and then reads inside_).
  const Body* body_ = nullptr;
  Index count_ = 0;
  std::atomic<Index> next_{0};
  std::atomic<int> seats_{0};             // helpers that may still join
  std::atomic<std::uint64_t> posted_{0};  // the job's number, 0 while none may be joined
  std::atomic<int> inside_{0};            // helpers between joining and leaving
  std::uint64_t last_job_ = 0;
};

}  // namespace

TeamScope::TeamScope(bool wanted) {
  if (!wanted || holds_team || in_task) return;
  const int threads = omp_get_max_threads();
  holds_team_ = threads > 1 && Team::instance().open(threads);
  holds_team = holds_team_;
}

TeamScope::~TeamScope() {
  if (!holds_team_) return;
  holds_team = false;
  Team::instance().close();
}

int parallel_threads() { return omp_get_max_threads(); }

void parallel_for(Index count, bool parallel, const Body& body) {
  if (!parallel || count < 2 || in_task) {
    for (Index task = 0; task < count; ++task) body(task, !is_helper);
  } else if (holds_team) {
    Team::instance().run(count, body);
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (Index task = 0; task < count; ++task) body(task, omp_get_thread_num() == 0);
  }
}

}  // namespace al
