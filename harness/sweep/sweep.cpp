// sweep.cpp — the sweep loop: expand, launch, judge, append, report progress.
#include "harness/sweep/sweep.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "harness/sweep/capacity.h"
#include "harness/sweep/config.h"
#include "harness/sweep/line_appender.h"
#include "harness/sweep/machine_state.h"
#include "harness/sweep/out_lock.h"
#include "contract/modes.h"
#include "harness/sweep/progress.h"
#include "harness/sweep/results_file.h"
#include "harness/sweep/run_outcome.h"
#include "harness/common/subprocess.h"
#include "harness/sweep/sweep_line.h"
#include "harness/sweep/system_info.h"
#include "harness/common/table.h"
#include "harness/sweep/world_fit.h"
#include "contract/record.h"
#include "models/gemm/gemm_choice.h"
#include "models/gemm/gemm_probe.h"


namespace dpscale {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Signal state. The run's process group is not in the terminal's foreground group (run_process
// gives it its own, so a timeout can kill it whole), so a Ctrl-C reaches only us: the handler
// passes it on. These two are the only process-wide state, and only a signal handler needs them.
volatile sig_atomic_t g_child_group = 0;
volatile sig_atomic_t g_interrupts = 0;

void on_signal(int) {
  g_interrupts = g_interrupts + 1;
  if (g_child_group > 0) ::kill(-g_child_group, g_interrupts > 1 ? SIGKILL : SIGTERM);
}

struct SignalGuard {
  struct sigaction old_int {}, old_term {};
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
    g_interrupts = 0;
    g_child_group = 0;
  }
  ~SignalGuard() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

// --resume continues a file only with the config that made it: same name (run ids are keyed on
// it) and the same config_hash (how every point is run). Lines of older sweeps carry no hash and
// cannot be checked: one warning says so.
void check_resumable(const ResultsFile& f, const std::string& name, const std::string& hash) {
  int unhashed = 0;
  for (const SweepEntry& e : f.entries) {
    if (e.run.config.empty()) continue;  // a bare trainer record: no sweep made it
    const std::string where = f.path + ":" + std::to_string(e.line_no);
    if (e.run.config != name) {
      throw InputError("--resume: " + where + " was made by config '" + e.run.config + "', not '" + name +
                       "': choose another --out");
    }
    if (e.run.config_hash.empty()) {
      ++unhashed;
    } else if (e.run.config_hash != hash) {
      throw InputError("--resume: " + where + " was made with other options, link or backend (config hash " +
                       e.run.config_hash + ", now " + hash + "): choose another --out, or restore the config");
    }
  }
  if (unhashed) {
    std::cerr << "dpscale sweep: warning: " << f.path << ": " << unhashed
              << " lines carry no config hash (an older dpscale); cannot check they match this config\n";
  }
}

// The config's "nice" for the whole sweep: the probe's threads and every run inherit it.
void set_priority(int nice) {
  if (nice == 0 || ::getpriority(PRIO_PROCESS, 0) == nice) return;
  errno = 0;
  if (::setpriority(PRIO_PROCESS, 0, nice) != 0) {
    throw InputError("nice " + std::to_string(nice) + ": cannot set the sweep's priority (" + std::strerror(errno) +
                     (nice < 0 ? "; a negative nice value needs root" : "") + ")");
  }
}

void print_outcome(const RunOutcome& outcome, double seconds, const MachineState& state) {
  if (outcome.record) {
    std::cerr << "      ok in " << fmt_fixed(seconds, 1) << "s: avg epoch " << fmt_fixed(outcome.record->avg_epoch_s, 4)
              << "s, " << fmt_thousands(outcome.record->throughput_samples_per_s) << " samples/s"
              << (state.disturbed ? "; disturbed: " + *state.disturbed : "") << "\n";
  } else {
    std::cerr << "      FAILED in " << fmt_fixed(seconds, 1) << "s: " << outcome.reason << "\n";
  }
}

// The GEMM library of the machine probe: the config's --gemm when it names one library for every
// run, else (auto, or swept) --gemm auto's choice on the probe's own GEMM.
std::string probe_gemm(const SweepConfig& c, double probe_s) {
  if (probe_s <= 0) return "openblas";  // no probe runs
  for (const TrainerArg& a : c.options) {
    if (a.option->key == "gemm" && a.value != "auto") return a.value;
  }
  return choose_gemm({probe_shape()}, 1).library;
}

std::string resolve_bin_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("DPSCALE_BIN_DIR"); env && *env) return env;
  return self_dir();
}

}  // namespace

int run_sweep(SweepOptions o) {
  SweepConfig c = load_config(o.config_path);
  if (!o.backend.empty()) c.backend = o.backend;
  if (o.nice) c.nice = *o.nice;
  const int repeats = o.repeats > 0 ? o.repeats : c.repeats;
  const double timeout_s = o.timeout_s.value_or(c.timeout_s);
  if (!(timeout_s > 0)) throw InputError("--timeout must be a positive number of seconds");

  std::vector<SweepPoint> runs;
  int dropped = 0;
  for (const SweepPoint& p : expand(c, repeats)) {
    if (o.max_world_size > 0 && p.world_size > o.max_world_size) ++dropped;
    else if (!o.only || o.only(p)) runs.push_back(p);
  }
  if (dropped) {
    std::cerr << "dpscale sweep: leaving out " << dropped << " runs with more than " << o.max_world_size
              << " ranks (--max-world-size)\n";
  }

  resolve_launcher(o.launch);
  check_world_fit(runs, o.launch, online_cpus());
  check_placements_fit(runs, o.launch);

  const std::string mpi_version = o.launch.launcher == "mpirun" ? mpi_version_line(o.launch.mpirun) : "";
  o.launch.open_mpi = mpi_version.empty() || mpi_version.find("Open MPI") != std::string::npos ||
                      mpi_version.find("OpenRTE") != std::string::npos;
  o.launch.as_root = ::geteuid() == 0;
  const std::string bin_dir = resolve_bin_dir(o.bin_dir);
  // `program` is the trainer's path: the run starts it from the bin dir; its line records the
  // executable's name alone (the bin dir is a path of this machine, not a fact of the run).
  auto launch_of = [&](const SweepPoint& p, const std::string& program) {
    return launch_argv(o.launch, program, p.mode, p.world_size, trainer_args(c, p), p.nodes, p.ranks_per_node);
  };
  auto argv_of = [&](const SweepPoint& p) {
    return launch_of(p, (fs::path(bin_dir) / mode_named(p.mode).executable).string());
  };

  if (o.dry_run) {
    std::cerr << "# " << c.name << ": " << runs.size() << " runs\n";
    for (const SweepPoint& p : runs) std::cout << quote_argv(argv_of(p)) << "\n";
    return 0;
  }

  std::set<std::string> exes;
  for (const SweepPoint& p : runs) exes.insert(mode_named(p.mode).executable);
  for (const std::string& e : exes) {
    const fs::path path = fs::path(bin_dir) / e;
    if (::access(path.c_str(), X_OK) != 0) {
      throw InputError("trainer " + path.string() + " not found or not executable (build it, or pass --bin-dir)");
    }
  }

  if (o.out_path.empty()) o.out_path = "results/" + c.name + "-" + utc_now("%Y%m%d-%H%M%S") + ".jsonl";
  if (fs::path(o.out_path).has_parent_path()) fs::create_directories(fs::path(o.out_path).parent_path());
  // One sweep per file, from before it is read until the last line is on disk (out_lock.h).
  const OutLock lock(o.out_path);
  const std::string hash = config_hash(c);
  std::set<std::string> done;
  if (fs::exists(o.out_path)) {
    if (!o.resume) {
      throw InputError("--out " + o.out_path + " exists: pass --resume to continue it, or choose another file");
    }
    if (const size_t cut = repair_torn_tail(o.out_path)) {
      std::cerr << "dpscale sweep: " << o.out_path << ": removed a cut-off last line (" << cut
                << " bytes, left by an interrupted sweep)\n";
    }
    const ResultsFile f = read_results(o.out_path);
    for (const std::string& w : f.warnings) std::cerr << "dpscale sweep: warning: " << w << "\n";
    check_resumable(f, c.name, hash);
    for (const SweepEntry& e : f.entries) {
      if (e.ok && !e.run.run_id.empty()) done.insert(e.run.run_id);
    }
  }
  const bool newline_first = ends_mid_line(o.out_path);
  LineAppender out(o.out_path);
  if (newline_first) out.append("");  // never glue a record onto a cut-off line

  SystemQuery q;
  q.mpi_version = mpi_version;
  q.link = c.link;
  q.link_dilation = c.link_dilation;
  nlohmann::ordered_json system = describe_system(q);

  // --resume: what the file already holds as ok is not run again.
  std::vector<SweepPoint> pending;
  for (const SweepPoint& p : runs) {
    if (!done.count(p.run_id(c.name))) pending.push_back(p);
  }
  const size_t n_skipped = runs.size() - pending.size();
  std::vector<double> weights;
  for (const SweepPoint& p : pending) weights.push_back(model_weight(p.model));
  Progress progress(weights);
  std::cerr << "# dpscale sweep " << c.name << ": " << pending.size() << " runs (launcher " << o.launch.launcher
            << ") -> " << o.out_path;
  if (n_skipped) std::cerr << " (" << n_skipped << " already done there)";
  std::cerr << std::endl;

  set_priority(c.nice);
  SignalGuard guard;
  const auto t0 = Clock::now();
  MachineWatch watch(o.probe_s, online_cpus(), c.nice, probe_gemm(c, o.probe_s));
  int n_ok = 0, n_failed = 0, n_reruns = 0;
  // A rerun that was disturbed again means the disturbance outlasts a run (a busy neighbour, not
  // a burst): further runs are not rerun until one runs undisturbed, so a persistently busy
  // machine costs one extra run, not one per run.
  bool persistent = false;
  for (size_t i = 0; i < pending.size(); ++i) {
    const SweepPoint& p = pending[i];
    for (int attempt = 0;; ++attempt) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
      std::cerr << progress.starting(i, p.describe() + (repeats > 1 ? " #" + std::to_string(p.repeat + 1) : "") +
                                            (attempt ? " (rerun " + std::to_string(attempt) + ")" : ""),
                                     elapsed)
                << std::endl;
      RunInfo info;
      info.config = c.name;
      info.run_id = p.run_id(c.name);
      info.argv = launch_of(p, mode_named(p.mode).executable);
      info.host = system["host"];
      info.git_version = build_version();
      info.start_time = utc_now();
      info.config_hash = hash;
      info.attempt = attempt;
      ProcessOptions po;
      po.timeout_s = timeout_s;
      po.on_spawn = [](int pid) { g_child_group = pid; };
      StateRecorder recorder = watch.before_run(attempt > 0);
      const ProcessResult r = run_process(argv_of(p), po);
      g_child_group = 0;
      info.duration_s = r.seconds;
      if (g_interrupts > 0) {
        std::cerr << "dpscale sweep: interrupted; nothing recorded for " << info.run_id << " (--resume continues from it)\n";
        return 130;
      }
      const MachineState state = watch.after_run(recorder);
      const RunOutcome outcome = judge_run(r, p, timeout_s);
      nlohmann::ordered_json sys = system;
      if (outcome.record) sys["nccl_version"] = outcome.record->nccl_version;
      sys["state"] = to_json(state);
      // The whole line in one write, then fsync, before the next run starts: a kill can cut at most
      // this line short, never an earlier one.
      out.append(make_sweep_line(p, info, sys, outcome.record, outcome.reason).dump());
      if (attempt == 0) progress.finished(i, r.seconds);
      print_outcome(outcome, r.seconds, state);
      if (outcome.record && !state.disturbed) persistent = false;
      if (outcome.record && state.disturbed && attempt > 0) persistent = true;
      if (outcome.record && state.disturbed && attempt < o.disturbed_reruns && !persistent) {
        ++n_reruns;
        continue;
      }
      ++(outcome.record ? n_ok : n_failed);
      break;
    }
  }
  const double total = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cerr << "# " << c.name << ": " << n_ok << " ok, " << n_failed << " failed"
            << (n_skipped ? ", " + std::to_string(n_skipped) + " already done" : "")
            << (n_reruns ? ", " + std::to_string(n_reruns) + " rerun as disturbed" : "") << " in " << fmt_duration(total)
            << " -> " << o.out_path << std::endl;
  return n_failed ? 1 : 0;
}

}  // namespace dpscale
