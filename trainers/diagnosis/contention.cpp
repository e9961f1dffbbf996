// contention.cpp — reading run delay and involuntary switches from /proc (contention.h).
#include "trainers/diagnosis/contention.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace dpscale {

namespace {

// schedstat is "RUN_NS DELAY_NS SLICES\n". Reads it from offset 0 of `fd` (a /proc file is
// generated afresh by each read from its start, so one descriptor serves every step).
bool read_schedstat(int fd, uint64_t& run_ns, uint64_t& delay_ns) {
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  char* end = nullptr;
  run_ns = std::strtoull(buf, &end, 10);
  if (end == buf) return false;
  char* end2 = nullptr;
  delay_ns = std::strtoull(end, &end2, 10);
  return end2 != end;
}

std::string task_path(pid_t tid, const char* file) {
  return "/proc/self/task/" + std::to_string(tid) + "/" + file;
}

std::vector<pid_t> list_threads() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
  }
  ::closedir(d);
  return out;
}

int64_t process_nivcsw() {
  rusage u{};
  return ::getrusage(RUSAGE_SELF, &u) == 0 ? static_cast<int64_t>(u.ru_nivcsw) : 0;
}

}  // namespace

pid_t this_thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

std::optional<ThreadSched> read_thread_sched(pid_t tid) {
  const int fd = ::open(task_path(tid, "schedstat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uint64_t run_ns = 0, delay_ns = 0;
  const bool ok = read_schedstat(fd, run_ns, delay_ns);
  ::close(fd);
  if (!ok) return std::nullopt;
  ThreadSched t;
  t.run_s = 1e-9 * static_cast<double>(run_ns);
  t.run_delay_s = 1e-9 * static_cast<double>(delay_ns);
  FILE* f = std::fopen(task_path(tid, "status").c_str(), "r");
  if (!f) return std::nullopt;
  char line[256];
  bool found = false;
  while (std::fgets(line, sizeof line, f)) {
    static const char kKey[] = "nonvoluntary_ctxt_switches:";
    if (std::strncmp(line, kKey, sizeof kKey - 1) == 0) {
      t.involuntary_switches = std::strtoll(line + sizeof kKey - 1, nullptr, 10);
      found = true;
    }
  }
  std::fclose(f);
  if (!found) return std::nullopt;
  return t;
}

ThreadRunDelay::ThreadRunDelay()
    : fd_(::open(task_path(this_thread_id(), "schedstat").c_str(), O_RDONLY | O_CLOEXEC)) {}

ThreadRunDelay::~ThreadRunDelay() {
  if (fd_ >= 0) ::close(fd_);
}

double ThreadRunDelay::seconds() const {
  uint64_t run_ns = 0, delay_ns = 0;
  if (fd_ < 0 || !read_schedstat(fd_, run_ns, delay_ns)) return 0.0;
  return 1e-9 * static_cast<double>(delay_ns);
}

ContentionReader::ContentionReader() {
  refresh_threads();
  available_ = !threads_.empty();
  nivcsw_ = process_nivcsw();
}

ContentionReader::~ContentionReader() {
  for (const Thread& t : threads_) ::close(t.fd);
}

void ContentionReader::refresh_threads() {
  const std::vector<pid_t> now = list_threads();
  // Threads that have exited: their delay up to the last read stays counted.
  std::vector<Thread> kept;
  for (const Thread& t : threads_) {
    if (std::find(now.begin(), now.end(), t.tid) != now.end()) {
      kept.push_back(t);
    } else {
      ::close(t.fd);
    }
  }
  const bool first = threads_.empty();
  threads_ = std::move(kept);
  for (pid_t tid : now) {
    if (std::any_of(threads_.begin(), threads_.end(), [tid](const Thread& t) { return t.tid == tid; })) continue;
    const int fd = ::open(task_path(tid, "schedstat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // exited between the listing and the open
    uint64_t run_ns = 0, delay_ns = 0;
    if (!read_schedstat(fd, run_ns, delay_ns)) {
      ::close(fd);
      continue;
    }
    // At construction the counts start now; a thread born since the last refresh counts from
    // its birth, which came after the last read.
    threads_.push_back(Thread{tid, fd, first ? delay_ns : 0});
  }
}

Contention ContentionReader::read() {
  Contention c;
  uint64_t run_ns = 0, delay_ns = 0;
  for (Thread& t : threads_) {
    if (!read_schedstat(t.fd, run_ns, delay_ns)) continue;  // exited: dropped at the next refresh
    c.run_delay_s += 1e-9 * static_cast<double>(delay_ns - std::min(delay_ns, t.delay_ns));
    t.delay_ns = delay_ns;
  }
  const int64_t n = process_nivcsw();
  c.involuntary_switches = n - nivcsw_;
  nivcsw_ = n;
  return c;
}

}  // namespace dpscale
