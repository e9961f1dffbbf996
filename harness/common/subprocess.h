// subprocess.h — run a program from an argument vector (never a shell string), capture its
// stdout and stderr, and end it — with everything it started — if it outlives a timeout.
//
// Used by the sweep (each run is `mpirun ... train_*`, whose ranks are its children) and by the
// tests that check exit statuses and messages of the real executables.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dpscale {

struct ProcessResult {
  int exit_code = -1;     // the exit status when the process exited normally, else -1
  int term_signal = 0;    // the signal that ended it, else 0
  bool timed_out = false;
  bool spawn_failed = false;  // argv[0] could not be executed (exit_code is then 127)
  std::string out, err;
  double seconds = 0.0;
};

struct ProcessOptions {
  double timeout_s = 0.0;         // 0 = no limit
  double kill_grace_s = 3.0;      // after SIGTERM to its group, wait this long before SIGKILL
                                  // to it and all its descendants, whatever their group
  bool echo_stderr = false;       // also copy the child's stderr to ours as it arrives
  std::vector<std::string> env;   // extra "NAME=value" entries for the child
  std::string cwd;                // the child's working directory ("" = ours)
  // Called in the parent right after fork with the child's pid (= its process-group id), e.g. so
  // a signal handler can pass a Ctrl-C on to a group that the terminal no longer reaches.
  std::function<void(int pid)> on_spawn;
  // When the calling thread dies (even by SIGKILL), its run goes too: the child is a small guard
  // (subprocess.cpp) that kills its whole process group on PR_SET_PDEATHSIG. Open MPI's ranks
  // sit in groups of their own, but end themselves within seconds once mpirun is gone.
  bool die_with_parent = true;
};

// argv[0] is looked up in PATH. Never throws for a failing child; throws std::runtime_error
// only if pipes or fork themselves fail.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts = {});

// "a b 'c d'" — for logs and records only; never passed to a shell.
std::string quote_argv(const std::vector<std::string>& argv);

}  // namespace dpscale
