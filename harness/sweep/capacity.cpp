// capacity.cpp — nodes and slots from a hostfile or a Slurm allocation, and the fit of each point.
#include "harness/sweep/capacity.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "core/errors.h"

namespace dpscale {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int whole(const std::string& text, const std::string& what) {
  try {
    return static_cast<int>(parse_whole(text, 1, kUnbounded - 1));
  } catch (const ValueError& e) {
    throw InputError(what + " '" + text + "' " + e.what());
  }
}

std::string slots_text(int s) { return s >= kUnbounded ? "unbounded" : std::to_string(s); }

// A hostfile line's first word: a host name or address, optionally user@host. Anything else
// (a stray sentence, a pasted command) Open MPI reads as a host it then fails to reach, or as
// a parse error found only when a run starts.
void check_host_word(const std::string& host, const std::string& where) {
  const std::string name = host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1);
  const bool ok = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") ==
                                       std::string::npos;
  if (!ok || name.front() == '-' || name.front() == '.') {
    throw InputError(where + "'" + host + "' is not a host name");
  }
}

// The per-host keys of Open MPI's hostfile grammar (orte/util/hostfile).
bool known_hostfile_key(const std::string& key) {
  for (const char* k : {"slots", "max_slots", "max-slots", "count", "cpu", "port", "user", "username", "user_name",
                        "boards", "sockets", "sockets_per_board", "cores", "cores_per_socket"}) {
    if (key == k) return true;
  }
  return false;
}

}  // namespace

NodeCapacity hostfile_capacity(const std::string& text, const std::string& path) {
  std::vector<std::string> order;
  std::map<std::string, int> slots;
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string where = path + ":" + std::to_string(no) + ": ";
    // "slots = 4" is Open MPI's too: one word per KEY=VALUE.
    for (size_t eq; (eq = line.find(" =")) != std::string::npos || (eq = line.find("= ")) != std::string::npos;) {
      line.erase(line[eq] == ' ' ? eq : eq + 1, 1);
    }
    std::istringstream words(line);
    std::string host, word;
    if (!(words >> host)) continue;
    check_host_word(host, where);
    int n = kUnbounded;
    while (words >> word) {
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq == std::string::npos ? word.size() : eq);
      if (eq == std::string::npos || eq + 1 == word.size() || !known_hostfile_key(key)) {
        throw InputError(where + "'" + word + "' is not KEY=VALUE with a key Open MPI knows (slots=N, max_slots=N, ...)");
      }
      const std::string value = word.substr(eq + 1);
      if (key == "slots" || key == "max_slots" || key == "max-slots" || key == "count" || key == "cpu") {
        const int v = whole(value, where + key + "=");
        if (n == kUnbounded && key != "cpu") n = v;
      } else if (key != "user" && key != "username" && key != "user_name") {
        whole(value, where + key + "=");
      }
    }
    if (!slots.count(host)) order.push_back(host);
    slots[host] = std::min<long long>(kUnbounded, static_cast<long long>(slots[host]) + n);
  }
  if (order.empty()) throw InputError(path + ": names no host");
  NodeCapacity c;
  std::string hosts;
  for (const std::string& h : order) {
    c.slots.push_back(slots[h]);
    hosts += (hosts.empty() ? "" : ", ") + h + ": " + slots_text(slots[h]) + " slots";
  }
  c.where = "hostfile " + path + " (" + (hosts.empty() ? "no hosts" : hosts) + ")";
  return c;
}

NodeCapacity slurm_capacity(const std::string& job_id, const std::string& nodelist, const std::string& num_nodes,
                            const std::string& cpus_per_node) {
  NodeCapacity c;
  c.where = "the Slurm allocation (job " + job_id + ": " + (nodelist.empty() ? "?" : nodelist) + ", CPUs per node " +
            (cpus_per_node.empty() ? "?" : cpus_per_node) + ")";
  const int n = whole(num_nodes, "SLURM_JOB_NUM_NODES");
  // "4(x2),2": each comma-separated item is CPUS or CPUS(xCOUNT).
  std::istringstream items(cpus_per_node);
  std::string item;
  while (std::getline(items, item, ',')) {
    int count = 1;
    if (auto paren = item.find("(x"); paren != std::string::npos && item.back() == ')') {
      count = whole(item.substr(paren + 2, item.size() - paren - 3), "SLURM_JOB_CPUS_PER_NODE");
      item.resize(paren);
    }
    const int cpus = whole(item, "SLURM_JOB_CPUS_PER_NODE");
    for (int i = 0; i < count && static_cast<int>(c.slots.size()) < n; ++i) c.slots.push_back(cpus);
  }
  if (cpus_per_node.empty()) c.slots.assign(static_cast<size_t>(n), kUnbounded);
  if (static_cast<int>(c.slots.size()) != n) {
    throw InputError("SLURM_JOB_CPUS_PER_NODE '" + cpus_per_node + "' does not name " + std::to_string(n) + " nodes");
  }
  return c;
}

void check_capacity(const std::vector<SweepRun>& runs, const NodeCapacity& cap) {
  std::vector<int> desc = cap.slots;
  std::sort(desc.begin(), desc.end(), std::greater<>());
  long long total = 0;
  for (int s : desc) total = std::min<long long>(kUnbounded, total + s);
  for (const SweepRun& run : runs) {
    const Point& p = run.point;
    const int ranks = p.mode->data_parallel ? p.world_size : 1;
    if (p.nodes > 0) {
      const int have = static_cast<int>(desc.size());
      if (p.nodes > have) {
        throw InputError(p.describe() + " needs " + std::to_string(p.nodes) + " nodes; " + cap.where + " has " +
                         std::to_string(have));
      }
      // The N nodes with the most slots: the N-th of them bounds R.
      if (desc[static_cast<size_t>(p.nodes - 1)] < p.ranks_per_node) {
        throw InputError(p.describe() + " needs " + std::to_string(p.nodes) + " nodes with " +
                         std::to_string(p.ranks_per_node) + " slots each; " + cap.where + " has not");
      }
    } else if (ranks > total) {
      throw InputError(p.describe() + " needs " + std::to_string(ranks) + " slots; " + cap.where + " has " +
                       std::to_string(total));
    }
  }
}

void check_placements_fit(const std::vector<SweepRun>& runs, const LaunchOptions& launch) {
  if (launch.launcher == "srun") {
    check_capacity(runs, slurm_capacity(env("SLURM_JOB_ID"), env("SLURM_JOB_NODELIST"),
                                        env("SLURM_JOB_NUM_NODES").empty() ? env("SLURM_NNODES") : env("SLURM_JOB_NUM_NODES"),
                                        env("SLURM_JOB_CPUS_PER_NODE")));
    return;
  }
  if (launch.launcher == "mpirun" && !launch.hostfile.empty()) {
    std::ifstream in(launch.hostfile);
    if (!in) throw InputError("--hostfile " + launch.hostfile + ": cannot read it");
    std::stringstream ss;
    ss << in.rdbuf();
    check_capacity(runs, hostfile_capacity(ss.str(), launch.hostfile));
    return;
  }
  for (const SweepRun& run : runs) {
    const Point& p = run.point;
    if (p.nodes == 0) continue;
    if (launch.launcher == "none") {
      throw InputError(p.describe() + ": --launcher none starts one process per run and places no ranks; "
                       "use --launcher mpirun or srun");
    }
    if (p.nodes > 1) {
      throw InputError(p.describe() + " needs " + std::to_string(p.nodes) +
                       " nodes; mpirun without --hostfile has this machine only (pass --hostfile, or run under Slurm)");
    }
  }
}

}  // namespace dpscale
