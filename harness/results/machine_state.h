// machine_state.h — the state of the machine around one run, and whether it was fit to judge.
//
// A shared machine slows some runs and not others; a regression gate that cannot tell a slow
// build from a busy neighbour either misses losses or cries wolf. So every run of a sweep carries
// (in its line's `system.state`):
//   load1_before/after  /proc/loadavg's 1-minute figure
//   steal_pct           time the hypervisor gave to other guests, of all CPUs' time during the run
//   iowait_pct          time CPUs sat idle waiting for I/O, the same way
//   others_cpus         CPUs' worth of time used during the run by processes other than the run
//                       and the sweep: /proc/stat's busy time minus the run's own (getrusage of
//                       the reaped children), over the run's wall time. A busy loop beside the
//                       sweep reads ~1.0, an idle machine ~0.0x.
//   cpu_mhz             /proc/cpuinfo's mean "cpu MHz" at the end (a host's frequency change)
//   nice                the sweep's scheduling priority (sweep.h). Even at nice -20 a neighbour
//                       at the default priority that takes only the CPU time the run leaves
//                       idle still slows it (each wake-up from a wait finds the neighbour on the
//                       CPU and its caches cold: naive's speedup fell 5-11% beside one busy loop,
//                       experiments/gate/data/priority-only/), so others_cpus is judged at any priority
//   probe_before/after  a GEMM probe (~0.5 s, one single-threaded sgemm loop per CPU at once, at
//                       the runs' priority, in the runs' GEMM library: models/gemm/gemm_probe.h):
//                       the slowest CPU's GFLOP/s. Against the machine's
//                       usual figure (the median probe of the files compared, same machine), it
//                       shows CPUs taken by processes of equal priority and time stolen by the host.
// disturbance() turns a run into a reason it is not fit to judge (or none): the sweep reruns such
// a run, and `dpscale compare` leaves it out of its samples. A run is judged by what its own ranks
// lost — the record's run_delay_share, the largest rank's time runnable but waiting for a CPU as
// a share of the epochs' time (trainers/diagnosis/contention.h) — and by steal, which the guest's
// run delay cannot see; not by what other processes used. A neighbour that takes only the CPU the
// run leaves idle costs it nothing; one that holds the CPU when a rank wakes shows as run delay,
// at any priority. One slowdown neither shows: the host running the whole VM slower (its
// frequency, its memory bandwidth, time it takes without counting it as steal). That shows in the
// probe alone, on both sides of the run while no other process was busy, and it counts too. The
// figures above stay recorded; records without a run delay (older lines) are judged by them, as
// before.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dpscale {

struct MachineState {
  double load1_before = 0, load1_after = 0;
  double steal_pct = 0, iowait_pct = 0;
  double others_cpus = 0;
  double cpu_mhz = 0;
  int nice = 0;
  double probe_before_gflops = 0, probe_after_gflops = 0;
  std::optional<std::string> disturbed;  // the sweep's verdict when it ran (null: fit)
};

// The limits past which a run counts as disturbed. Measured: docs/regression-gate.md.
struct DisturbanceLimits {
  double run_delay_share = 0.15;  // the largest rank's run delay / the epochs' time
  double steal_pct = 5.0;
  // The host slowing the machine: the better of the probes before and after the run below
  // (1 - this) x the usual figure while other processes used at most `others_cpus`. Of the
  // committed A/B runs one had both probes 20% low, and it was 33% slower than its pair
  // (docs/ab.md, "The host slows the machine").
  double host_probe_drop = 0.20;
  // Records with no run delay (older lines) only:
  double probe_drop = 0.30;   // slowest CPU's probe below (1 - this) x the usual figure
  // CPUs' worth of other processes' time during the run (also the host rule's "no other
  // process busy" above)
  double others_cpus = 0.25;
  // Two runs judged against each other (a ratio of their throughputs) that were both disturbed
  // by their ranks' run delay alone still judge when their shares s_a, s_b are within this
  // times (1 - max(s_a, s_b)) of each other (lost_alike). 0: never (`dpscale compare`);
  // `dpscale ab` sets half its minimum effect.
  double alike_run_delay = 0;
};

// Why the run was not fit to judge: `run_delay_share` from its record (nullopt: an older record,
// judged by the state's probe and others_cpus), the probe against `usual_gflops` (0: not
// judged). E.g. "run delay 23% of the epochs (others 0.97 CPU, load 2.9)", "probe -31% before
// and after, no other process busy (others 0.00 CPU, load 1.3)" or, for an older record, "probe
// -31%, others 0.97 CPU, load 2.9"; nullopt when it was fit.
std::optional<std::string> disturbance(const MachineState& s, std::optional<double> run_delay_share,
                                       double usual_gflops, const DisturbanceLimits& lim = DisturbanceLimits{});

// How far the host slowed the machine around the run, when it did (DisturbanceLimits::
// host_probe_drop): the better of its two probes' drop below `usual_gflops` (0: not judged).
std::optional<double> host_slowdown(const MachineState& s, double usual_gflops, const DisturbanceLimits& lim);

// Whether two disturbed runs lost alike: each record carries its run delay share, below 1,
// neither run lost time to steal beyond the limit nor to the host (host_slowdown against
// `usual_gflops`: the guest's run delay cannot see either), and
// |s_b - s_a| <= lim.alike_run_delay * (1 - max(s_a, s_b)). Why the contention then moves the
// ratio of the two runs by at most lim.alike_run_delay: docs/regression-gate.md, "A pair whose
// halves lost alike".
bool lost_alike(const MachineState& a, std::optional<double> a_delay, const MachineState& b,
                std::optional<double> b_delay, double usual_gflops, const DisturbanceLimits& lim);

// The usual probe of a set of states: the median of their before and after probes (0 if none).
// A median, not the best: this machine's idle probe scatters by 20% from second to second.
double usual_probe(const std::vector<const MachineState*>& states);

// Measures around one run: construct before it starts, call finish() after it was reaped.
class StateRecorder {
 public:
  explicit StateRecorder(double probe_before_gflops);
  MachineState finish(double probe_after_gflops);

 private:
  struct Cpu {
    unsigned long long busy = 0, total = 0, steal = 0, iowait = 0;
  };
  static Cpu read_cpu();
  static double children_cpu_s();
  double load_before_;
  double probe_before_;
  Cpu cpu_before_;
  double children_before_;
  double wall_before_;
};

// The sweep's view of the machine from run to run: the probe after one run is the probe before
// the next (a rerun probes afresh: the probe after the disturbed run saw the disturbance's tail),
// and each run is judged against the median of the probes so far.
class MachineWatch {
 public:
  // Probes once: the first run's before. `gemm` is the GEMM library the probe runs (a name of
  // models/gemm/gemm_library.h, auto already resolved).
  MachineWatch(double probe_s, int cpus, int nice, std::string gemm);
  StateRecorder before_run(bool rerun);
  // Probes, then closes the state's window (it runs to the end of that probe: a run of a few
  // ticks alone would read one stray tick of another process as a busy CPU; the probe's own
  // threads are this process's, so they are not counted as others') and judges it with the
  // run's `run_delay_share` (its record's; nullopt: none).
  MachineState after_run(StateRecorder& recorder, std::optional<double> run_delay_share);

 private:
  double probe();
  double probe_s_;
  int cpus_, nice_;
  std::string gemm_;
  double last_ = 0;
  std::vector<double> probes_;
};

double load_average_1min();  // 0 when /proc/loadavg cannot be read
double mean_cpu_mhz();       // 0 when /proc/cpuinfo has no "cpu MHz"

nlohmann::ordered_json to_json(const MachineState& s);
// Throws std::runtime_error naming the field when `j` is not a state object.
MachineState machine_state_from_json(const nlohmann::json& j);

}  // namespace dpscale
