// subprocess.cpp — fork/exec with pipes, poll(), and on timeout a kill of the child with all
// its descendants.
//
// Why more than a process group: Open MPI's mpirun puts every rank in a process group of its
// own, so signalling mpirun's group reaches mpirun alone. If mpirun does not end its ranks in
// time, they would live on (and keep our pipes open). So the SIGKILL escalation walks the
// child's descendants (parent links in /proc) and kills each of them, group by group.
// (A new session per child would have been simpler to kill, but mpirun as a session leader
// made /proc reads of the job stall for minutes on this kernel; process groups do not.)
#include "harness/common/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>
#include <stdexcept>

extern char** environ;

namespace dpscale {

namespace {

using Clock = std::chrono::steady_clock;

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

// Sends `sig` to `root`'s process group and to every descendant of `root` and their groups
// (parent links from /proc/<pid>/stat, field 4; taken before any signal, so that processes
// orphaned by the kill are still found).
void kill_tree(pid_t root, int sig) {
  std::multimap<long, std::pair<long, long>> children;  // ppid -> (pid, pgrp)
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end != '\0') continue;
      std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
      std::string stat;
      if (!std::getline(in, stat)) continue;
      const auto close_paren = stat.rfind(')');  // the command name may contain spaces
      if (close_paren == std::string::npos) continue;
      std::istringstream fields(stat.substr(close_paren + 1));
      std::string state;
      long ppid = 0, pgrp = 0;
      if (fields >> state >> ppid >> pgrp) children.emplace(ppid, std::make_pair(pid, pgrp));
    }
    ::closedir(proc);
  }
  std::vector<std::pair<long, long>> found;
  std::vector<long> todo = {root};
  while (!todo.empty()) {
    const long p = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      found.push_back(it->second);
      todo.push_back(it->second.first);
    }
  }
  ::kill(-root, sig);
  for (auto [pid, pgrp] : found) {
    if (pgrp == pid) ::kill(static_cast<pid_t>(-pgrp), sig);  // a group leader: all of its group
    ::kill(static_cast<pid_t>(pid), sig);
  }
}

// --- The guard: a run that dies with whoever started it ---------------------------------------
//
// PR_SET_PDEATHSIG reaches one process, the one that asked, and is not inherited: set on the
// program itself it would end mpirun (or a trainer) but not what that program started in its
// process group. So the forked child stays behind as a guard, the leader of the run's process
// group: it asks for kGuardSignal when our thread dies, then forks and execs the program, waits
// for it, and exits as it did (same status, same signal). On kGuardSignal it kills its whole group,
// itself included. Signals sent to the group (SIGTERM at a timeout, a Ctrl-C passed on) reach the
// program too; the guard catches and otherwise ignores them, so the status reported is the
// program's. Everything here runs between fork and exec of a possibly multithreaded process, so
// only async-signal-safe calls.
constexpr int kGuardSignal = SIGUSR2;

void guard_on_parent_death(int) { ::kill(0, SIGKILL); }
void guard_on_group_signal(int) {}

[[noreturn]] void guard_then_exec(pid_t parent, char* const* args, char* const* envp) {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = guard_on_parent_death;
  ::sigaction(kGuardSignal, &sa, nullptr);
  ::prctl(PR_SET_PDEATHSIG, kGuardSignal);
  if (::getppid() != parent) ::kill(0, SIGKILL);  // died before prctl took effect
  sa.sa_handler = guard_on_group_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);

  const pid_t program = ::fork();
  if (program == 0) {
    ::execvpe(args[0], args, envp);  // caught signals return to their defaults here
    const char* msg = "exec failed: ";
    (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
    (void)!::write(STDERR_FILENO, args[0], std::strlen(args[0]));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  if (program < 0) ::_exit(126);
  int status = 0;
  while (::waitpid(program, &status, 0) < 0) {
    if (errno != EINTR) ::_exit(126);
  }
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  // Mirror the program's death: the same signal, with its default action and no core file.
  const int sig = WTERMSIG(status);
  struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  sa.sa_handler = SIG_DFL;
  ::sigaction(sig, &sa, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  ::kill(::getpid(), sig);
  ::_exit(128 + sig);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) set_cloexec(fd);

  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) env_storage.emplace_back(*e);
  env_storage.insert(env_storage.end(), opts.env.begin(), opts.env.end());
  std::vector<char*> envp, args;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  const auto start = Clock::now();
  const pid_t self = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout ends it and everything it started
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    if (!opts.cwd.empty() && ::chdir(opts.cwd.c_str()) != 0) {
      const char* msg = "cannot enter the working directory\n";
      (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
      ::_exit(127);
    }
    if (opts.die_with_parent) guard_then_exec(self, args.data(), envp.data());
    ::execvpe(args[0], args.data(), envp.data());
    const char* msg = "exec failed: ";
    (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
    (void)!::write(STDERR_FILENO, args[0], std::strlen(args[0]));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, to win the race with an early kill
  if (opts.on_spawn) opts.on_spawn(static_cast<int>(pid));
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ProcessResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool term_sent = false;
  Clock::time_point term_time;
  char buf[65536];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (opts.timeout_s > 0) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (!term_sent && elapsed >= opts.timeout_s) {
        r.timed_out = true;
        ::kill(-pid, SIGTERM);
        term_sent = true;
        term_time = Clock::now();
      }
      if (term_sent) {
        if (std::chrono::duration<double>(Clock::now() - term_time).count() >= opts.kill_grace_s) {
          kill_tree(pid, SIGKILL);
        }
        wait_ms = 100;
      } else {
        wait_ms = static_cast<int>((opts.timeout_s - elapsed) * 1000.0) + 1;
      }
    }
    const int n = ::poll(fds, 2, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(got));
        if (i == 1 && opts.echo_stderr) (void)!::write(STDERR_FILENO, buf, static_cast<size_t>(got));
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Anything left behind in the child's group goes too (its descendants were killed above).
  if (r.timed_out) ::kill(-pid, SIGKILL);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    r.spawn_failed = r.exit_code == 127 && r.err.rfind("exec failed: ", 0) == 0;
  } else if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

std::string quote_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    if (!a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

}  // namespace dpscale
