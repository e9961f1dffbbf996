// proc_util.h — a running mpirun job seen from outside, through /proc: its ranks by
// OMPI_COMM_WORLD_RANK, whether a process lives, how much CPU it has used. For the tests that
// stop or kill one rank with a real signal (tests/trainers/test_dp_reliability.cpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <thread>
#include <vector>

#include "harness/common/subprocess.h"

namespace dpscale::test {

// True while `pid` exists and is not a zombie.
bool alive(pid_t pid);
// Waits up to `grace_s` for `pid` to be gone (or a zombie). Returns 0 once it is, else the state
// letter /proc gives it ('T' stopped, 'R', 'S', 'D'), for the message of a test that fails. A
// killed process takes a moment to unmap its memory and exit: the grace keeps a test from
// reading that moment as a process that outlived its job.
char still_there_after(pid_t pid, double grace_s);
// User + system CPU seconds `pid` has used so far (all its threads); -1 if it is gone.
double cpu_seconds(pid_t pid);

// `argv` (an mpirun line) run on a thread of its own, with a timeout. On destruction anything
// still running is ended (ranks SIGKILLed — SIGCONT first, a stopped rank included — and
// mpirun SIGTERMed) and the thread joined, so nothing a test started outlives it.
class MpiJob {
 public:
  MpiJob(std::vector<std::string> argv, double timeout_s);
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  // Waits (up to 30 s) until mpirun has `n` children whose name starts with `prefix`.
  bool find_ranks(int n, const std::string& prefix);
  // The pid of MPI rank `rank` among those found, or -1.
  pid_t rank_pid(int rank) const;
  // Waits for the job to end and returns its result.
  ProcessResult join();

 private:
  std::vector<std::string> argv_;
  ProcessResult result_;
  std::thread thread_;
  pid_t mpirun_ = -1;
  std::vector<std::pair<int, pid_t>> ranks_;  // (MPI rank, pid)
};

}  // namespace dpscale::test
