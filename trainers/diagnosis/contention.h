// contention.h — how long this process's threads were runnable but not running: the time the
// machine's other work (or this job's own other ranks) took from a rank.
//
//   run delay              /proc/self/task/TID/schedstat, second field (ns): time the thread sat
//                          on a run queue, ready, waiting for a CPU (sched_info; no sysctl needed)
//   involuntary switches   times the thread was preempted while it could still run: per thread
//                          /proc/self/task/TID/status `nonvoluntary_ctxt_switches`; for the
//                          whole process getrusage(RUSAGE_SELF).ru_nivcsw, the same sum (and the
//                          threads that have exited) in one system call
//
// A busy neighbour shows here as it does to the rank: a rank whose neighbour holds the CPU when
// its all-reduce completes waits before it runs again, whatever the neighbour's CPU use says about
// the machine. Time a hypervisor steals is not in it (the guest thinks the thread ran).
//
// ContentionReader::read() is the per-step read: one pread of each thread's schedstat on
// descriptors opened once, and one getrusage (about 1 µs per thread and 0.3 µs; a status read is
// about 10 µs per thread: bench/bench_contention.cpp, docs/diagnosis.md). The thread list is
// refreshed by refresh_threads(), once an epoch; a thread born in between is counted from its
// birth when it is first seen, one that has exited keeps what was read of it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace dpscale {

struct Contention {
  double run_delay_s = 0.0;
  int64_t involuntary_switches = 0;
};

// One thread's totals since it started, from its own /proc files; nullopt when the thread is
// gone or its files cannot be read (no schedstat: a kernel without CONFIG_SCHED_INFO).
struct ThreadSched {
  double run_s = 0.0;        // schedstat's first field: time on a CPU
  double run_delay_s = 0.0;  // its second: time runnable, waiting for a CPU
  int64_t involuntary_switches = 0;  // status: nonvoluntary_ctxt_switches
};
std::optional<ThreadSched> read_thread_sched(pid_t tid);

// This thread's id (gettid).
pid_t this_thread_id();

// One thread's run delay through a descriptor opened once: the compute thread reads its own at
// the start and the end of each step's compute (a thread that reads is running, so every wait
// it had is booked: the kernel books a wait when the thread gets the CPU back).
class ThreadRunDelay {
 public:
  ThreadRunDelay();  // the calling thread
  ~ThreadRunDelay();
  ThreadRunDelay(const ThreadRunDelay&) = delete;
  ThreadRunDelay& operator=(const ThreadRunDelay&) = delete;
  double seconds() const;  // its run delay since it started; 0 where unreadable

 private:
  int fd_ = -1;
};

class ContentionReader {
 public:
  // Opens every thread's schedstat; the counts start from now.
  ContentionReader();
  ~ContentionReader();
  ContentionReader(const ContentionReader&) = delete;
  ContentionReader& operator=(const ContentionReader&) = delete;

  // What the process's threads lost since the last read (or construction).
  Contention read();
  // Opens the files of threads born since the last refresh (their delay since birth is counted at
  // the next read) and closes those of threads that have exited.
  void refresh_threads();
  // False where /proc gives no schedstat: every read is then zero.
  bool available() const { return available_; }
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  struct Thread {
    pid_t tid;
    int fd;
    uint64_t delay_ns;  // at the last read
  };
  std::vector<Thread> threads_;
  int64_t nivcsw_ = 0;
  bool available_ = false;
};

}  // namespace dpscale
