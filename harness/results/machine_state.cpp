// machine_state.cpp — /proc readings around a run, the disturbance rule, and the state as JSON.
#include "harness/results/machine_state.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/json_int.h"
#include "core/median.h"
#include "models/gemm/gemm_probe.h"

namespace dpscale {

namespace {

using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

double load_average_1min() {
  std::ifstream in("/proc/loadavg");
  double v = 0;
  return (in >> v) ? v : 0.0;
}

double mean_cpu_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  double sum = 0;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      sum += std::stod(line.substr(colon + 1));
      ++n;
    } catch (const std::exception&) {
    }
  }
  return n ? sum / n : 0.0;
}

StateRecorder::Cpu StateRecorder::read_cpu() {
  // The first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal guest guest_nice"
  // in clock ticks summed over CPUs. guest time is already inside user, so it is not added again.
  std::ifstream in("/proc/stat");
  std::string name;
  Cpu c;
  unsigned long long v[8] = {};
  if (!(in >> name) || name != "cpu") return c;
  for (auto& x : v) {
    if (!(in >> x)) break;
  }
  const unsigned long long user = v[0], nice = v[1], sys = v[2], idle = v[3], iowait = v[4], irq = v[5],
                           softirq = v[6], steal = v[7];
  c.busy = user + nice + sys + irq + softirq;
  c.total = c.busy + idle + iowait + steal;
  c.steal = steal;
  c.iowait = iowait;
  return c;
}

double StateRecorder::children_cpu_s() {
  // Reaped children (the run: mpirun and its ranks, which mpirun reaps) and this process itself.
  double s = 0;
  for (int who : {RUSAGE_CHILDREN, RUSAGE_SELF}) {
    rusage u{};
    if (::getrusage(who, &u) != 0) continue;
    s += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return s;
}

StateRecorder::StateRecorder(double probe_before_gflops)
    : load_before_(load_average_1min()),
      probe_before_(probe_before_gflops),
      cpu_before_(read_cpu()),
      children_before_(children_cpu_s()),
      wall_before_(now_s()) {}

MachineState StateRecorder::finish(double probe_after_gflops) {
  const Cpu after = read_cpu();
  const double wall = std::max(1e-3, now_s() - wall_before_);
  const double ours = children_cpu_s() - children_before_;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  MachineState s;
  s.load1_before = load_before_;
  s.load1_after = load_average_1min();
  const double total = static_cast<double>(after.total - cpu_before_.total);
  if (total > 0) {
    s.steal_pct = 100.0 * static_cast<double>(after.steal - cpu_before_.steal) / total;
    s.iowait_pct = 100.0 * static_cast<double>(after.iowait - cpu_before_.iowait) / total;
  }
  const double busy_s = static_cast<double>(after.busy - cpu_before_.busy) / tick;
  // Ticks are 10 ms: a short run's figure is rounded, never below zero.
  s.others_cpus = std::max(0.0, (busy_s - ours) / wall);
  s.cpu_mhz = mean_cpu_mhz();
  s.probe_before_gflops = probe_before_;
  s.probe_after_gflops = probe_after_gflops;
  return s;
}

std::optional<double> host_slowdown(const MachineState& s, double usual_gflops, const DisturbanceLimits& lim) {
  // One low probe is the probe's own scatter, or a disturbance that passed before or after the
  // run; a busy process beside the run explains low probes, and the run's own run delay says
  // whether its ranks paid for it.
  if (!(usual_gflops > 0) || !(s.probe_before_gflops > 0) || !(s.probe_after_gflops > 0) ||
      s.others_cpus > lim.others_cpus) {
    return std::nullopt;
  }
  const double drop = 1.0 - std::max(s.probe_before_gflops, s.probe_after_gflops) / usual_gflops;
  if (drop > lim.host_probe_drop) return drop;
  return std::nullopt;
}

std::optional<std::string> disturbance(const MachineState& s, std::optional<double> run_delay_share,
                                       double usual_gflops, const DisturbanceLimits& lim) {
  std::vector<std::string> why;
  if (run_delay_share) {
    if (*run_delay_share > lim.run_delay_share) why.push_back("run delay " + fixed(100 * *run_delay_share, 0) + "% of the epochs");
    if (s.steal_pct > lim.steal_pct) why.push_back("steal " + fixed(s.steal_pct, 0) + "%");
    if (const auto drop = host_slowdown(s, usual_gflops, lim)) {
      why.push_back("probe -" + fixed(100 * *drop, 0) + "% before and after, no other process busy");
    }
    if (why.empty()) return std::nullopt;
    // What the machine-state figures said, for the reader: not part of the verdict.
    std::string out;
    for (size_t i = 0; i < why.size(); ++i) out += (i ? ", " : "") + why[i];
    return out + " (others " + fixed(s.others_cpus, 2) + " CPU, load " +
           fixed(std::max(s.load1_before, s.load1_after), 1) + ")";
  }
  if (usual_gflops > 0) {
    const double worst = std::min(s.probe_before_gflops > 0 ? s.probe_before_gflops : usual_gflops,
                                  s.probe_after_gflops > 0 ? s.probe_after_gflops : usual_gflops);
    const double drop = 1.0 - worst / usual_gflops;
    if (drop > lim.probe_drop) why.push_back("probe -" + fixed(100 * drop, 0) + "%");
  }
  if (s.others_cpus > lim.others_cpus) why.push_back("others " + fixed(s.others_cpus, 2) + " CPU");
  if (s.steal_pct > lim.steal_pct) why.push_back("steal " + fixed(s.steal_pct, 0) + "%");
  if (why.empty()) return std::nullopt;
  why.push_back("load " + fixed(std::max(s.load1_before, s.load1_after), 1));
  std::string out;
  for (size_t i = 0; i < why.size(); ++i) out += (i ? ", " : "") + why[i];
  return out;
}

bool lost_alike(const MachineState& a, std::optional<double> a_delay, const MachineState& b,
                std::optional<double> b_delay, double usual_gflops, const DisturbanceLimits& lim) {
  if (!(lim.alike_run_delay > 0) || !a_delay || !b_delay) return false;
  if (host_slowdown(a, usual_gflops, lim) || host_slowdown(b, usual_gflops, lim)) return false;
  // A share of 1 or more: the ranks waited longer than the epochs took (threads waiting side by
  // side), past what the rule's reasoning covers.
  if (!(*a_delay < 1) || !(*b_delay < 1)) return false;
  if (a.steal_pct > lim.steal_pct || b.steal_pct > lim.steal_pct) return false;
  return std::fabs(*a_delay - *b_delay) <= lim.alike_run_delay * (1 - std::max(*a_delay, *b_delay));
}

double usual_probe(const std::vector<const MachineState*>& states) {
  std::vector<double> v;
  for (const MachineState* s : states) {
    for (double p : {s->probe_before_gflops, s->probe_after_gflops}) {
      if (p > 0) v.push_back(p);
    }
  }
  return median(v);
}

MachineWatch::MachineWatch(double probe_s, int cpus, int nice, std::string gemm)
    : probe_s_(probe_s), cpus_(cpus), nice_(nice), gemm_(std::move(gemm)) {
  last_ = probe();
}

double MachineWatch::probe() {
  if (probe_s_ <= 0) return 0.0;
  const double g = probe_gflops(probe_s_, cpus_, gemm_);
  probes_.push_back(g);
  return g;
}

StateRecorder MachineWatch::before_run(bool rerun) {
  if (rerun) last_ = probe();
  return StateRecorder(last_);
}

MachineState MachineWatch::after_run(StateRecorder& recorder, std::optional<double> run_delay_share) {
  last_ = probe();
  MachineState s = recorder.finish(last_);
  s.nice = nice_;
  s.disturbed = disturbance(s, run_delay_share, median(probes_));
  return s;
}

nlohmann::ordered_json to_json(const MachineState& s) {
  nlohmann::ordered_json j;
  j["load1_before"] = s.load1_before;
  j["load1_after"] = s.load1_after;
  j["steal_pct"] = s.steal_pct;
  j["iowait_pct"] = s.iowait_pct;
  j["others_cpus"] = s.others_cpus;
  j["cpu_mhz"] = s.cpu_mhz;
  j["nice"] = s.nice;
  j["probe_before_gflops"] = s.probe_before_gflops;
  j["probe_after_gflops"] = s.probe_after_gflops;
  j["disturbed"] = s.disturbed ? nlohmann::ordered_json(*s.disturbed) : nlohmann::ordered_json(nullptr);
  return j;
}

MachineState machine_state_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("'system.state' is not an object");
  MachineState s;
  auto num = [&](const char* name, double& out) {
    if (!j.contains(name)) throw std::runtime_error(std::string("'system.state' has no '") + name + "'");
    const auto& v = j.at(name);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      throw std::runtime_error(std::string("'system.state.") + name + "' is not a number >= 0");
    }
    out = v.get<double>();
  };
  num("load1_before", s.load1_before);
  num("load1_after", s.load1_after);
  num("steal_pct", s.steal_pct);
  num("iowait_pct", s.iowait_pct);
  num("others_cpus", s.others_cpus);
  num("cpu_mhz", s.cpu_mhz);
  if (j.contains("nice")) {
    const auto& v = j.at("nice");
    if (!json_integer_fits<int>(v) || v.get<int>() < -20 || v.get<int>() > 19) {
      throw std::runtime_error("'system.state.nice' is not an integer from -20 to 19");
    }
    s.nice = v.get<int>();
  }
  num("probe_before_gflops", s.probe_before_gflops);
  num("probe_after_gflops", s.probe_after_gflops);
  if (j.contains("disturbed") && !j.at("disturbed").is_null()) {
    if (!j.at("disturbed").is_string()) throw std::runtime_error("'system.state.disturbed' is not a string or null");
    s.disturbed = j.at("disturbed").get<std::string>();
  }
  return s;
}

}  // namespace dpscale
