// run_diagnosis.cpp — gathering, the triad, the trace file and the record's diagnosis fields.
#include "trainers/diagnosis/run_diagnosis.h"

#include <algorithm>
#include <fstream>

#include "contract/allreduce_algo.h"
#include "core/errors.h"
#include "trainers/diagnosis/diagnosis.h"
#include "trainers/diagnosis/straggler.h"

namespace dpscale {

std::unique_ptr<Tracer> make_tracer(RankSetup& s) {
  if (s.opts.trace_path.empty()) return nullptr;
  return std::make_unique<Tracer>(parse_trace_steps(s.opts.trace_steps), s.model->layout(), s.model->grads(),
                                  s.device->make_stamp_clock());
}

namespace {

// Every rank's text on rank 0 (lengths differ: gathered, then padded to the longest).
std::vector<std::string> gather_text(World& world, const std::string& mine) {
  const uint64_t len = mine.size();
  const std::vector<uint64_t> lens = world.all_gather(len);
  const uint64_t longest = *std::max_element(lens.begin(), lens.end());
  std::string padded = mine;
  padded.resize(longest, ' ');
  const std::vector<unsigned char> all = world.gather_bytes_to_root(padded.data(), longest);
  std::vector<std::string> out;
  if (world.rank() != 0) return out;
  for (size_t r = 0; r < lens.size(); ++r) {
    out.emplace_back(reinterpret_cast<const char*>(all.data()) + r * longest, lens[r]);
  }
  return out;
}

void write_trace(const RankSetup& s, const std::vector<std::string>& per_rank, const TraceStraggler& straggler) {
  nlohmann::ordered_json meta{{"mode", mode_info(s.opts.mode).name},
                              {"model", s.spec.name},
                              {"world_size", s.world_size},
                              {"trace_steps", s.opts.trace_steps},
                              {"clock", s.device->backend() == Backend::cuda
                                            ? "host steady clock, µs since the ranks left the barrier before step 1; "
                                              "step, compute and comm spans are CUDA events mapped onto it"
                                            : "host steady clock, µs since the ranks left the barrier before step 1"}};
  std::ofstream out(s.opts.trace_path);
  out << Tracer::merge(per_rank, meta, straggler) << "\n";
  if (!out) throw InputError("--trace: cannot write '" + s.opts.trace_path + "'");
}

double per(double total, double n) { return n > 0 ? total / n : 0.0; }

// The contention fields: per rank per epoch, per rank per step, per epoch, and the run's share
// (the largest rank's run delay over the timed epochs' time: the step waits for its slowest rank).
void fill_contention(RunRecord& r, const DiagnosisData& d, const PerRankEpochs& epochs) {
  if (d.timings.empty() || !d.timings.front().contention_read) return;
  const double n_epochs = static_cast<double>(epochs.front().size());
  double total_time = 0.0, largest = 0.0;
  for (double e : r.epoch_times_s) total_time += e;
  for (size_t rank = 0; rank < epochs.size(); ++rank) {
    double delay = 0.0, switches = 0.0;
    for (const EpochStats& e : epochs[rank]) {
      delay += e.run_delay_s;
      switches += static_cast<double>(e.involuntary_switches);
    }
    r.per_rank_run_delay_s.push_back(per(delay, n_epochs));
    r.per_rank_involuntary_switches.push_back(per(switches, n_epochs));
    r.per_rank_step_run_delay_s.push_back(d.timings[rank].run_delay_med_s);
    largest = std::max(largest, delay);
  }
  for (size_t e = 0; e < r.epoch_times_s.size() && e < epochs.front().size(); ++e) {
    double most = 0.0;
    for (const std::vector<EpochStats>& rank : epochs) most = std::max(most, rank[e].run_delay_s);
    r.epoch_run_delay_share.push_back(per(most, r.epoch_times_s[e]));
  }
  r.run_delay_share = per(largest, total_time);
}

}  // namespace

DiagnosisData finish_diagnosis(RankSetup& s, GradSync& sync, Communicator* comm, World& world, StepProbe& probe,
                               Tracer* tracer) {
  DiagnosisData d;
  d.unit_bytes = probe.unit_bytes();
  d.unit_s = probe.unit_median_s();
  for (const std::vector<RankTiming>& t : world.gather_to_root(std::vector<RankTiming>{probe.totals()})) {
    d.timings.push_back(t.front());
  }
  if (tracer) d.trace_events = gather_text(world, tracer->events_text());
  if (comm && s.opts.triad > 0) d.triad = run_triad(s, sync, *comm, world, s.opts.triad);
  return d;
}

void fill_diagnosis(RunRecord& r, const DiagnosisData& d, const PerRankEpochs& epochs, const RankSetup& s) {
  const TrainOptions& o = s.opts;
  const ModeInfo& mode = mode_info(o.mode);
  const double n_epochs = static_cast<double>(epochs.front().size());
  const double steps = static_cast<double>(r.steps);
  const double k = static_cast<double>(epochs.size());
  r.loader_delay_ms = o.loader_delay_ms;
  r.prefetch = o.prefetch;
  r.inject_delay = o.inject_delay;

  DiagnosisInput in;
  in.data_parallel = mode.data_parallel;
  std::vector<RankMedians> medians;
  r.loader_s = 0.0;
  for (size_t rank = 0; rank < epochs.size(); ++rank) {
    double wait = 0.0;
    for (const EpochStats& e : epochs[rank]) wait += e.wait_s;
    const RankTiming& t = d.timings[rank];
    r.per_rank_compute_s.push_back(per(t.compute_s, n_epochs));
    r.per_rank_wait_s.push_back(per(wait, n_epochs));
    r.loader_s += per(t.loader_s, n_epochs) / k;
    in.ranks.push_back(RankStep{per(t.compute_s, steps), per(wait, steps), per(t.loader_s, steps)});
    // CPU time holds none of the compute thread's waiting: nothing of it to take off.
    medians.push_back(RankMedians{t.compute_med_s, t.loader_med_s, t.link_med_s,
                                  t.compute_is_cpu_time ? 0.0 : t.compute_delay_med_s});
    in.imbalance_compute.push_back(t.compute_med_s);
  }
  double total = 0.0;
  for (double e : r.epoch_times_s) total += e;
  in.step_s = per(total, steps);
  in.busy_s = r.comm_busy_s ? per(*r.comm_busy_s * n_epochs, steps) : 0.0;
  fill_contention(r, d, epochs);
  // The rank and cause come from the straggler rule alone; when the imbalance also bounds the
  // step, the bottleneck says `straggler` (or `contended`) of the same rank (both judge the same
  // medians).
  StragglerScan scan;
  if (mode.data_parallel) scan = find_straggler(medians, in.step_s);
  if (scan.contended) in.contended_rank = scan.contended->rank;
  const Diagnosis diag = diagnose(in);
  r.bottleneck = diag.bottleneck;
  r.diagnosis = diag.line;
  if (mode.data_parallel) {
    if (scan.found) {
      r.straggler_rank = scan.found->rank;
      r.straggler_cause = scan.found->cause;
    }
    if (scan.contended) {
      r.contended_rank = scan.contended->rank;
      r.contended_cause = scan.contended->cause;
    }
    r.diagnosis += "; " + describe(scan);
  }
  if (!o.trace_path.empty()) {
    TraceStraggler straggler;
    if (scan.found) straggler = {scan.found->rank, scan.found->cause, false};
    if (scan.contended) straggler = {scan.contended->rank, scan.contended->cause, true};
    write_trace(s, d.trace_events, straggler);
  }

  if (d.triad) {
    r.triad_steps = d.triad->steps;
    r.triad_step_s = d.triad->full_s;
    r.compute_only_step_s = d.triad->compute_only_s;
    r.comm_only_step_s = d.triad->comm_only_s;
    r.exposed_comm_step_s = d.triad->exposed_s();
    r.overlap_pct = d.triad->overlap_pct();
  }
  r.allreduce_unit_bytes = d.unit_bytes;
  // nccl-tests' bus bandwidth of each unit's all-reduce (contract/allreduce_algo.h says how).
  for (size_t i = 0; i < d.unit_s.size(); ++i) {
    r.bucket_busbw_gbps.push_back(
        allreduce_bandwidth(static_cast<size_t>(d.unit_bytes[i]), d.unit_s[i], static_cast<int>(k)).busbw_gbps);
  }
}

}  // namespace dpscale
