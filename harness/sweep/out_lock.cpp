// out_lock.cpp — the sidecar flock of a sweep's results file (see out_lock.h).
//
// The lock file is removed on release so results/ does not fill with them. Removing a file that
// others may be opening needs the usual check: a process that opened the old file just before it
// was unlinked can still lock that (now nameless) file, so after locking, the holder checks that
// the path still names the file it locked, and starts again if not.
#include "harness/sweep/out_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/errors.h"

namespace dpscale {

namespace {

// The pid the holder wrote into the lock file; "unknown" if it has not written it yet.
std::string holder_pid(int fd) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0 && buf[n - 1] == '\n') return std::string(buf, static_cast<size_t>(n - 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "unknown";
}

// Test hook, inert unless DPSCALE_TEST_OUT_LOCK_GAP names a file: on the first attempt only,
// between opening the lock file and locking it, create that file and wait (at most 60 s) until
// it is removed. tests/harness/test_sweep.cpp holds a sweep there while the previous holder
// removes and releases the lock file and another sweep takes a new one: the interleaving the
// inode check below exists for, which otherwise needs a lucky schedule to happen.
void test_gap_after_open() {
  const char* gate = std::getenv("DPSCALE_TEST_OUT_LOCK_GAP");
  if (gate == nullptr || *gate == '\0') return;
  const int g = ::open(gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (g >= 0) ::close(g);
  struct stat st {};
  for (int i = 0; i < 6000 && ::stat(gate, &st) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

OutLock::OutLock(const std::string& out_path) : path_(out_path + ".lock") {
  for (bool first = true;; first = false) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError("--out " + out_path + ": cannot create the lock file " + path_ + ": " + std::strerror(errno));
    if (first) test_gap_after_open();
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string pid = err == EWOULDBLOCK ? holder_pid(fd) : "";
      ::close(fd);
      if (err == EWOULDBLOCK) {
        throw InputError("--out " + out_path + " is in use by another dpscale sweep (pid " + pid + "; lock " + path_ +
                         "): wait for it to finish, or choose another --out");
      }
      throw InputError("--out " + out_path + ": cannot lock " + path_ + ": " + std::strerror(err));
    }
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      fd_ = fd;
      break;
    }
    ::close(fd);  // the previous holder removed it as we locked it: lock the new one
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // Only the message to a second sweep loses its pid; the lock itself holds.
  }
}

OutLock::~OutLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace dpscale
