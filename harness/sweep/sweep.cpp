// sweep.cpp — the sweep loop: expand, launch, judge, append, report progress.
#include "harness/sweep/sweep.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "harness/sweep/capacity.h"
#include "harness/sweep/config.h"
#include "harness/sweep/line_appender.h"
#include "harness/results/machine_state.h"
#include "harness/sweep/out_lock.h"
#include "contract/modes.h"
#include "contract/option_paths.h"
#include "harness/sweep/progress.h"
#include "harness/sweep/resume.h"
#include "harness/results/results_file.h"
#include "harness/sweep/run_outcome.h"
#include "harness/common/subprocess.h"
#include "harness/results/sweep_line.h"
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

// A run whose point `at` names runs at that --link-dilation instead of the config's. Its point
// stays the config's (auto:TFLOPS resolved once is still the config's auto:TFLOPS point, one key
// from session to session); its line then carries the point's settings (sweep_line.h).
void fix_link_dilation(SweepRun& run, const std::map<Point, std::string>& at) {
  const auto f = at.find(run.point);
  if (f == at.end()) return;
  const std::string& flag = option("link_dilation").flag;
  const auto it = std::find(run.args.begin(), run.args.end(), flag);
  if (it == run.args.end() || it + 1 == run.args.end()) return;  // a mode that takes no link
  *(it + 1) = f->second;
}

// Whether the sweep may take priority `nice`: a higher priority than it has (a lower nice value,
// root only) is tried and put back, so it is refused before the results file is made, not after.
// A lower priority anyone may take.
void check_priority(int nice) {
  const int now = ::getpriority(PRIO_PROCESS, 0);
  if (nice >= now) return;
  set_priority(nice);
  ::setpriority(PRIO_PROCESS, 0, now);
}

// --out can be written, or its missing directories made: found out before any run, not after
// the first one.
void check_out_writable(const std::string& path) {
  try {
    check_writable_file_making_dirs(path);
  } catch (const ValueError& e) {
    throw OptionError("--out", e.what());
  }
}

std::string resolve_bin_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("DPSCALE_BIN_DIR"); env && *env) return env;
  return self_dir();
}

// Everything a sweep reads and checks before it changes anything: the config with the command
// line's overrides, its runs, the launch, the trainers and the results file.
struct SweepPlan {
  SweepConfig c;
  int repeats = 1;
  double timeout_s = 0;
  std::vector<SweepRun> runs;
  int dropped = 0;  // left out by --max-world-size
  std::string hash, mpi_version, bin_dir;
};

// Resolves o.launch and the default o.out_path. Throws InputError; changes nothing.
SweepPlan plan_sweep(SweepOptions& o) {
  SweepPlan p;
  p.c = load_config(o.config_path);
  SweepConfig& c = p.c;
  apply_overrides(c, o);
  p.repeats = o.repeats > 0 ? o.repeats : c.repeats;
  p.timeout_s = o.timeout_s.value_or(c.timeout_s);
  if (!(p.timeout_s > 0)) throw InputError("--timeout must be a positive number of seconds");

  for (SweepRun& run : expand(c, p.repeats)) {
    if (o.max_world_size > 0 && run.point.world_size > o.max_world_size) ++p.dropped;
    else if (!o.only || o.only(run)) p.runs.push_back(std::move(run));
  }
  for (SweepRun& run : p.runs) fix_link_dilation(run, o.link_dilation_at);

  resolve_launcher(o.launch);
  check_world_fit(p.runs, o.launch, online_cpus());
  check_placements_fit(p.runs, o.launch);
  check_priority(c.nice);

  p.mpi_version = o.launch.launcher == "mpirun" ? mpi_version_line(o.launch.mpirun) : "";
  o.launch.open_mpi = p.mpi_version.empty() || p.mpi_version.find("Open MPI") != std::string::npos ||
                      p.mpi_version.find("OpenRTE") != std::string::npos;
  o.launch.as_root = ::geteuid() == 0;
  p.bin_dir = resolve_bin_dir(o.bin_dir);
  if (!o.dry_run) {  // a dry run prints the command lines, trainers built or not
    std::set<std::string> exes;
    for (const SweepRun& run : p.runs) exes.insert(run.point.mode->executable);
    for (const std::string& e : exes) {
      const fs::path path = fs::path(p.bin_dir) / e;
      if (::access(path.c_str(), X_OK) != 0) {
        throw InputError("trainer " + path.string() + " not found or not executable (build it, or pass --bin-dir)");
      }
    }
  }

  // The results file: one this config may continue (resume.h), and a path that can be written.
  if (o.out_path.empty()) o.out_path = "results/" + c.name + "-" + utc_now("%Y%m%d-%H%M%S") + ".jsonl";
  p.hash = config_hash(c);
  const bool out_exists = fs::exists(o.out_path);
  if (out_exists && !o.resume) {
    throw InputError("--out " + o.out_path + " exists: pass --resume to continue it, or choose another file");
  }
  if (out_exists) check_resume_file(o.out_path, c.name, p.hash);
  check_out_writable(o.out_path);
  return p;
}

}  // namespace

void apply_overrides(SweepConfig& c, const SweepOptions& o) {
  if (!o.backend.empty()) c.backend = o.backend;
  if (o.nice) c.nice = *o.nice;
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

void check_sweep_inputs(SweepOptions o) { plan_sweep(o); }

int run_sweep(SweepOptions o) {
  const SweepPlan plan = plan_sweep(o);
  const SweepConfig& c = plan.c;
  const std::vector<SweepRun>& runs = plan.runs;
  const int repeats = plan.repeats;
  const double timeout_s = plan.timeout_s;
  const std::string& hash = plan.hash;
  const std::string& mpi_version = plan.mpi_version;
  if (plan.dropped) {
    std::cerr << "dpscale sweep: leaving out " << plan.dropped << " runs with more than " << o.max_world_size
              << " ranks (--max-world-size)\n";
  }
  // `program` is the trainer's path: the run starts it from the bin dir; its line records the
  // executable's name alone (the bin dir is a path of this machine, not a fact of the run).
  auto launch_of = [&](const SweepRun& run, const std::string& program) {
    const Point& p = run.point;
    return launch_argv(o.launch, program, p.mode, p.world_size, run.args, p.nodes, p.ranks_per_node);
  };
  auto argv_of = [&](const SweepRun& run) {
    return launch_of(run, (fs::path(plan.bin_dir) / run.point.mode->executable).string());
  };

  if (o.dry_run) {
    std::cerr << "# " << c.name << ": " << runs.size() << " runs\n";
    for (const SweepRun& run : runs) std::cout << quote_argv(argv_of(run)) << "\n";
    return 0;
  }

  if (fs::path(o.out_path).has_parent_path()) fs::create_directories(fs::path(o.out_path).parent_path());
  // One sweep per file, from before it is read until the last line is on disk (out_lock.h).
  const OutLock lock(o.out_path);
  std::set<std::string> done;
  if (fs::exists(o.out_path)) {
    if (!o.resume) {
      throw InputError("--out " + o.out_path + " exists: pass --resume to continue it, or choose another file");
    }
    // Judged again under the lock (another sweep may have appended since), and only then repaired.
    ResumeState r = check_resume_file(o.out_path, c.name, hash);
    if (const size_t cut = repair_for_resume(o.out_path)) {
      std::cerr << "dpscale sweep: " << o.out_path << ": removed a cut-off last line (" << cut
                << " bytes, left by an interrupted sweep)\n";
      r = check_resume_file(o.out_path, c.name, hash);  // the file as it now is: no warning for the cut line
    }
    for (const std::string& w : r.warnings) std::cerr << "dpscale sweep: warning: " << w << "\n";
    done = std::move(r.done);
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
  std::vector<SweepRun> pending;
  for (const SweepRun& run : runs) {
    if (!done.count(run.run_id(c.name))) pending.push_back(run);
  }
  const size_t n_skipped = runs.size() - pending.size();
  const std::shared_ptr<SweepSession> session = o.session ? o.session : std::make_shared<SweepSession>();
  const bool session_counts = session->progress.has_value();
  std::optional<Progress> own;
  if (!session_counts) {
    std::vector<double> weights;
    for (const SweepRun& run : pending) weights.push_back(model_weight(run.point.model));
    own.emplace(weights);
    std::cerr << "# dpscale sweep " << c.name << ": " << pending.size() << " runs (launcher " << o.launch.launcher
              << ") -> " << o.out_path;
    if (n_skipped) std::cerr << " (" << n_skipped << " already done there)";
    std::cerr << std::endl;
  }
  Progress& progress = session_counts ? *session->progress : *own;
  const size_t first = session_counts ? session->next : 0;  // this pass's first run in the count
  const std::string lead = session_counts && !o.progress_label.empty() ? o.progress_label + ": " : "";

  set_priority(c.nice);
  SignalGuard guard;
  const auto t0 = session_counts ? session->started : Clock::now();
  if (!session->watch) session->watch.emplace(o.probe_s, online_cpus(), c.nice, probe_gemm(c, o.probe_s));
  MachineWatch& watch = *session->watch;
  int n_ok = 0, n_failed = 0, n_reruns = 0;
  // A rerun that was disturbed again means the disturbance outlasts a run (a busy neighbour, not
  // a burst): further runs are not rerun until one runs undisturbed, so a persistently busy
  // machine costs one extra run, not one per run.
  bool persistent = false;
  for (size_t i = 0; i < pending.size(); ++i) {
    const SweepRun& run = pending[i];
    const Point& p = run.point;
    for (int attempt = 0;; ++attempt) {
      const auto attempt_t0 = Clock::now();
      const double elapsed = std::chrono::duration<double>(attempt_t0 - t0).count();
      std::cerr << progress.starting(first + i, lead + p.describe() + (repeats > 1 ? " #" + std::to_string(run.repeat + 1) : "") +
                                            (attempt ? " (rerun " + std::to_string(attempt) + ")" : ""),
                                     elapsed)
                << std::endl;
      RunInfo info;
      info.config = c.name;
      info.run_id = run.run_id(c.name);
      info.argv = launch_of(run, p.mode->executable);
      info.host = system["host"];
      info.git_version = build_version();
      info.start_time = utc_now();
      info.config_hash = hash;
      info.attempt = attempt;
      ProcessOptions po;
      po.timeout_s = timeout_s;
      po.on_spawn = [](int pid) { g_child_group = pid; };
      StateRecorder recorder = watch.before_run(attempt > 0);
      const ProcessResult r = run_process(argv_of(run), po);
      g_child_group = 0;
      info.duration_s = r.seconds;
      if (g_interrupts > 0) {
        std::cerr << "dpscale sweep: interrupted; nothing recorded for " << info.run_id << " (--resume continues from it)\n";
        return 130;
      }
      const RunOutcome outcome = judge_run(r, p, timeout_s);
      const MachineState state =
          watch.after_run(recorder, outcome.record ? outcome.record->run_delay_share : std::nullopt);
      nlohmann::ordered_json sys = system;
      if (outcome.record) sys["nccl_version"] = outcome.record->nccl_version;
      sys["state"] = to_json(state);
      // The whole line in one write, then fsync, before the next run starts: a kill can cut at most
      // this line short, never an earlier one.
      out.append(make_sweep_line(run.point, run.repeat, info, sys, outcome.record, outcome.reason).dump());
      // The time left counts what a run costs the sweep: the run and the probe after it.
      if (attempt == 0) progress.finished(first + i, std::chrono::duration<double>(Clock::now() - attempt_t0).count());
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
  if (session_counts) {  // the session says its own summary
    session->next += pending.size();
    return n_failed ? 1 : 0;
  }
  const double total = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cerr << "# " << c.name << ": " << n_ok << " ok, " << n_failed << " failed"
            << (n_skipped ? ", " + std::to_string(n_skipped) + " already done" : "")
            << (n_reruns ? ", " + std::to_string(n_reruns) + " rerun as disturbed" : "") << " in " << fmt_duration(total)
            << " -> " << o.out_path << std::endl;
  return n_failed ? 1 : 0;
}

}  // namespace dpscale
