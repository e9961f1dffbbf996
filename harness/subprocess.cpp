// subprocess.cpp — fork/exec with pipes, poll(), and process-group kill on timeout.
#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dpscale {

namespace {

using Clock = std::chrono::steady_clock;

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

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
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout kills it and everything it started
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
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
          ::kill(-pid, SIGKILL);
          wait_ms = 100;
        } else {
          wait_ms = 100;
        }
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
  // Anything the child left behind in its group goes too (e.g. ranks of a killed mpirun).
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
