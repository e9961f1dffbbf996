// test_contention.cpp — run delay and involuntary switches read from a real process made to wait
// (trainers/diagnosis/contention.h): two threads spinning on one CPU (sched_setaffinity) for W
// seconds each wait about half of it for the CPU, and the reader sees that; one thread alone on
// that CPU (the negative control) waits far less. The machine may be busy with other work, so the
// checks are ones that hold under any load:
//   - a spinner is always running or runnable: its CPU time + run delay ≈ W;
//   - two spinners on one CPU ran at most W together, so together they waited at least W;
//   - with m other runnable tasks sharing the CPU fairly, one alone waits m/(m+1)·W and a pair
//     2(m+1)/(m+2)·W together: the pair waits at least 0.8 W more than one alone, at any m
//     (on an idle CPU the one alone waits about nothing).
//
// Run: ctest -R Contention --output-on-failure
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "trainers/diagnosis/contention.h"

namespace dpscale {
namespace {

constexpr double kWall = 0.6;  // seconds each phase spins

// A CPU this process may run on.
int some_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return 0;
}

struct Spun {
  pid_t tid = 0;
  ThreadSched before, after;
  double run_delay_s() const { return after.run_delay_s - before.run_delay_s; }
  double run_s() const { return after.run_s - before.run_s; }
  int64_t switches() const { return after.involuntary_switches - before.involuntary_switches; }
};

struct Phase {
  std::vector<Spun> threads;
  Contention process;  // the reader's read over the phase
  double wall_s = 0.0;
};

// `n` threads pinned to `cpu`, spinning for kWall seconds once all are pinned; each reads its own
// /proc files just before and just after its spin.
Phase spin_on_one_cpu(int n, int cpu) {
  Phase ph;
  ph.threads.resize(static_cast<size_t>(n));
  std::atomic<int> pinned{0}, spun{0};
  std::atomic<bool> go{false}, release{false};
  ContentionReader reader;
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) {
    ts.emplace_back([&, i] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
      Spun& me = ph.threads[static_cast<size_t>(i)];
      me.tid = this_thread_id();
      ++pinned;
      while (!go) std::this_thread::yield();
      me.before = read_thread_sched(me.tid).value();
      const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWall);
      while (std::chrono::steady_clock::now() < end) {
      }
      me.after = read_thread_sched(me.tid).value();
      ++spun;
      // Alive until the reader has read: an exited thread's files are gone.
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  while (pinned < n) std::this_thread::yield();
  reader.refresh_threads();  // the spinners, born after the reader: counted from their birth
  reader.read();             // ... up to now: the phase starts here
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  while (spun < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ph.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ph.process = reader.read();
  release = true;
  for (std::thread& t : ts) t.join();
  return ph;
}

TEST(Contention, SchedstatIsReadableHere) {
  // The kernel books a running thread's CPU time at ticks and switches: run a little, then sleep.
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  while (std::chrono::steady_clock::now() < end) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto me = read_thread_sched(this_thread_id());
  ASSERT_TRUE(me.has_value()) << "no /proc/self/task/TID/schedstat on this kernel";
  EXPECT_GT(me->run_s, 0.0);
  EXPECT_TRUE(ContentionReader().available());
  EXPECT_FALSE(read_thread_sched(0).has_value()) << "no thread 0";
}

TEST(Contention, TwoSpinnersOnOneCpuEachWaitAboutHalfTheTime) {
  const int cpu = some_cpu();
  const Phase pair = spin_on_one_cpu(2, cpu);
  const Phase alone = spin_on_one_cpu(1, cpu);
  const Spun& solo = alone.threads.front();
  for (const Spun& t : pair.threads) {
    // A spinner is always on the CPU or waiting for it: what the reader calls run delay is the rest.
    EXPECT_NEAR(t.run_s() + t.run_delay_s(), kWall, 0.1 * kWall) << "run " << t.run_s() << " delay " << t.run_delay_s();
    // Each waits for the other: about half the wall time, more on a busy machine.
    EXPECT_GT(t.run_delay_s(), 0.3 * kWall) << "tid " << t.tid;
    // Preempted while still runnable, again and again (a slice is a few ms).
    EXPECT_GE(t.switches(), 5);
  }
  // Two spinners share one CPU: together they ran at most the wall time, so they waited at least it.
  const double both = pair.threads[0].run_delay_s() + pair.threads[1].run_delay_s();
  EXPECT_GT(both, 0.9 * kWall);
  // Negative control: alone on that CPU it waits only for other processes.
  EXPECT_NEAR(solo.run_s() + solo.run_delay_s(), kWall, 0.1 * kWall);
  EXPECT_LT(solo.run_delay_s(), both - 0.5 * kWall) << "pair " << both << " alone " << solo.run_delay_s();

  // The process-wide reader sums every thread: at least the two spinners' delay (and what the
  // test's other threads waited, which a busy machine makes more than nothing); and at least
  // their involuntary switches (getrusage: every thread's).
  EXPECT_GE(pair.process.run_delay_s, 0.95 * both);
  EXPECT_GE(pair.process.involuntary_switches, pair.threads[0].switches() + pair.threads[1].switches());
  EXPECT_GE(alone.process.run_delay_s, 0.95 * solo.run_delay_s());
}

// A thread that exits between reads keeps what was read of it; the next refresh drops it, and a
// read after that counts only the live threads.
TEST(Contention, AThreadThatExitsIsDroppedAtTheRefresh) {
  ContentionReader reader;
  const int before = reader.threads();
  std::atomic<bool> started{false}, stop{false};
  std::thread t([&] {
    started = true;
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!started) std::this_thread::yield();
  reader.refresh_threads();
  EXPECT_EQ(reader.threads(), before + 1);
  stop = true;
  t.join();
  const Contention c = reader.read();  // the exited thread's read fails: skipped, no throw
  EXPECT_GE(c.run_delay_s, 0.0);
  reader.refresh_threads();
  EXPECT_EQ(reader.threads(), before);
}

}  // namespace
}  // namespace dpscale
