// sweep.h — `dpscale sweep CONFIG.json`: run every point of a config and append one line per
// finished run to a JSONL file, flushed at once, so an interrupted sweep loses nothing done.
// Runs go in rounds — repeat r of single, then of every data-parallel point — so a point's
// single and data-parallel runs sit side by side in time (`dpscale compare` pairs them). Each
// line records the machine's state around its run (machine_state.h); a run the machine
// disturbed is run again at once, up to disturbed_reruns times, the rerun replacing it (and
// while reruns keep being disturbed, later runs are not rerun until one runs undisturbed).
//
// A run that exits non-zero, is killed, prints no RESULTS_JSON line, or outlives its timeout
// (its whole process group is killed) is recorded with status "failed" and a reason, and the
// sweep goes on. --resume skips the run ids the file already holds as "ok". A Ctrl-C stops the
// current run's process group and the sweep, recording nothing for the interrupted run.
// Reliability: one sweep per --out (out_lock.h), each line fsync'ed before the next
// run (line_appender.h), --resume repairs a torn last line and refuses another config's file
// (config_hash in config.h), and a SIGKILLed sweep takes its run with it (subprocess.h's guard).
// Under Slurm (--launcher srun, the default inside an allocation) each run is a job step
// (launcher.h); the timeout's SIGTERM reaches srun, which cancels its step, and a step cancelled
// from outside (scancel JOB.STEP) ends srun non-zero: a failed run, recorded, that --resume reruns.
// Points that need more nodes or slots than the allocation or hostfile has are refused before
// anything runs (capacity.h).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/sweep/config.h"
#include "harness/sweep/launcher.h"
#include "harness/results/machine_state.h"
#include "harness/sweep/progress.h"

namespace dpscale {

// What the passes of one session share when it runs its sweep a run at a time (dpscale ab: a pass
// per run). The first pass makes what is missing.
struct SweepSession {
  // The machine watch, so that the probe after one run is the probe before the next and each run
  // is judged against the session's probes, as within one sweep.
  // (Which disturbed runs are rerun stays each pass's own: a pass of one run reruns it once when
  // the machine disturbed it, as `dpscale ab`'s verdicts were measured.)
  std::optional<MachineWatch> watch;
  // Set by a session that counts its own runs (dpscale ab plans its rounds): a pass's runs are
  // runs `next`, `next` + 1, ... of `progress`, their elapsed time counted from `started`, and the
  // pass prints no header or summary line of its own. Unset: each pass counts its own runs, as a
  // sweep does.
  std::optional<Progress> progress;
  size_t next = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

struct SweepOptions {
  std::string config_path;
  std::string out_path;                 // "" = results/<config>-<UTC timestamp>.jsonl
  bool resume = false;
  bool dry_run = false;                 // print the commands, run nothing
  int repeats = 0;                      // 0 = the config's "repeats"
  std::optional<double> timeout_s;      // overrides the config's "timeout_s"
  std::string backend;                  // overrides the config's "backend" when set
  int max_world_size = 0;               // > 0: leave out points with more ranks
  std::string bin_dir;                  // trainers; "" = $DPSCALE_BIN_DIR, else next to dpscale
  LaunchOptions launch;                 // open_mpi / as_root are detected by run_sweep; launcher "" = auto
  // The machine's state around each run (machine_state.h): the GEMM probe's length between runs
  // (0: no probe), and how often a run the machine disturbed is run again at once.
  double probe_s = 0.5;
  int disturbed_reruns = 1;
  // The scheduling priority (nice value, -20..19) the sweep, its probe and every run take,
  // overriding the config's "nice": a negative one (root only) gives the runs the CPU before a
  // neighbour at the default 0.
  std::optional<int> nice;
  // When set, only the runs it accepts (compare --rerun: the rounds of undecided points; ab: one
  // round per pass).
  std::function<bool(const SweepRun&)> only;
  // Per point as the config makes it, a --link-dilation F that replaces the config's (dpscale ab
  // fixes one F for both builds' runs of a whole session: harness/ab/ab_dilation.h).
  std::map<Point, std::string> link_dilation_at;
  // The session this sweep is a pass of; null: the sweep is a session of its own.
  std::shared_ptr<SweepSession> session;
  // What leads each progress line of a session that counts its runs (dpscale ab: the build).
  std::string progress_label;
};

// The command line's --backend and --nice over the config's, as every sweep applies them.
void apply_overrides(SweepConfig& c, const SweepOptions& o);

// Sets this process's scheduling priority to `nice` for good (a sweep sets its config's before
// its probe and runs, which inherit it). Throws InputError where it may not be set.
void set_priority(int nice);

// Returns the exit status: 0 all runs ok, 1 some failed, 130 interrupted. Throws InputError
// (exit 2) for a bad config, missing trainers, or an --out that exists without --resume.
int run_sweep(SweepOptions o);

// The checks run_sweep makes before it changes anything (config, runs against the machine,
// launcher, trainers, --out and what --resume may continue), on their own: `dpscale compare
// --rerun` makes them before its first verdict, so a config that cannot add rounds to NEW is
// refused at once. Throws InputError; changes nothing.
void check_sweep_inputs(SweepOptions o);

}  // namespace dpscale
