// out_lock.h — one sweep at a time per results file: an exclusive flock(2) on `<out>.lock`.
//
// Two sweeps appending to one --out would each run every point (12 lines for 6 runs) and time
// them while sharing the cores. The second sweep is refused at once, with a line naming the
// holder's pid, rather than made to wait: a sweep can run for hours, a command blocked that long
// looks hung, and a queued sweep would then measure on a machine the first had just heated and
// filled — the user should decide when to run it. The lock is the kernel's: it goes with the
// holder's last file descriptor, so a SIGKILLed sweep leaves no stale lock to clean up.
#pragma once

#include <string>

namespace dpscale {

class OutLock {
 public:
  // Takes the lock for results file `out_path` (its directory must exist). Throws InputError
  // "--out X is in use by another dpscale sweep (pid N; lock X.lock)" when another process holds it.
  explicit OutLock(const std::string& out_path);
  ~OutLock();  // removes the lock file, then releases the lock
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace dpscale
