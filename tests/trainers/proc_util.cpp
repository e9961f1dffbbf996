// proc_util.cpp — see proc_util.h. Processes are found by pid and parent, never by name alone.
#include "proc_util.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "dp_support.h"

namespace dpscale::test {

namespace {

struct Stat {
  pid_t ppid = 0;
  std::string comm;
  char state = '?';
  double cpu_s = 0.0;
};

std::optional<Stat> stat_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return std::nullopt;
  // pid (comm) state ppid ...; comm may hold spaces or parentheses: split at the last ')'.
  const size_t open = s.find('('), close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  Stat st;
  st.comm = s.substr(open + 1, close - open - 1);
  std::istringstream rest(s.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string x; rest >> x;) fields.push_back(x);
  if (fields.size() < 13) return std::nullopt;
  st.state = fields[0][0];
  st.ppid = static_cast<pid_t>(std::stol(fields[1]));
  // Fields 14 and 15 of stat (utime, stime) in clock ticks: here 11 and 12 after the state.
  st.cpu_s = static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return st;
}

std::vector<std::pair<pid_t, Stat>> children_of(pid_t parent) {
  std::vector<std::pair<pid_t, Stat>> kids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stoi(name));
    if (auto st = stat_of(pid); st && st->ppid == parent) kids.emplace_back(pid, *st);
  }
  return kids;
}

int mpi_rank_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string key = "OMPI_COMM_WORLD_RANK=";
  for (size_t pos = 0; pos < all.size();) {
    const size_t end = all.find('\0', pos);
    const std::string var = all.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (var.rfind(key, 0) == 0) return std::stoi(var.substr(key.size()));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return -1;
}

}  // namespace

bool alive(pid_t pid) {
  const auto st = stat_of(pid);
  return st && st->state != 'Z';
}

char still_there_after(pid_t pid, double grace_s) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  for (;;) {
    const auto st = stat_of(pid);
    if (!st || st->state == 'Z') return 0;
    if (std::chrono::steady_clock::now() >= give_up) return st->state;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

double cpu_seconds(pid_t pid) {
  const auto st = stat_of(pid);
  return st ? st->cpu_s : -1.0;
}

MpiJob::MpiJob(std::vector<std::string> argv, double timeout_s) : argv_(std::move(argv)) {
  thread_ = std::thread([this, timeout_s] { result_ = run(argv_, timeout_s); });
}

MpiJob::~MpiJob() {
  if (!thread_.joinable()) return;
  for (const auto& [rank, pid] : ranks_) {
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
  }
  if (mpirun_ > 0) ::kill(mpirun_, SIGTERM);
  thread_.join();
}

bool MpiJob::find_ranks(int n, const std::string& prefix) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks_.clear();
    for (const auto& [pid, st] : children_of(::getpid())) {
      mpirun_ = pid;
      for (const auto& [rpid, rst] : children_of(pid)) {
        if (rst.comm.rfind(prefix, 0) == 0) ranks_.emplace_back(mpi_rank_of(rpid), rpid);
      }
    }
    if (static_cast<int>(ranks_.size()) == n) return true;
  }
  return false;
}

pid_t MpiJob::rank_pid(int rank) const {
  for (const auto& [r, pid] : ranks_) {
    if (r == rank) return pid;
  }
  return -1;
}

ProcessResult MpiJob::join() {
  thread_.join();
  return result_;
}

}  // namespace dpscale::test
