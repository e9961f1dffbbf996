// machine_fit.cpp — the machine terms fitted from one sweep file (formulas in machine_fit.h).
#include "machine_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "calibration.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "core/median.h"
#include "harness/results/machine_state.h"
#include "harness/results/results_file.h"
#include "predict_table.h"

namespace dpscale::predict {

namespace {

SyncSetup sync_of(const RunRecord& r) {
  SyncSetup sync;
  sync.mode = parse_dp_mode(r.mode);
  // The record's tensor count (a transformer has no widths); older MLP records only their widths.
  const int n_tensors = r.tensor_count > 0 ? static_cast<int>(r.tensor_count) : 2 * (static_cast<int>(r.widths.size()) - 1);
  sync.fused = sync.mode == Mode::naive && r.allreduce_calls_per_step == 1 && n_tensors > 1;
  if (r.bucket_cap_mb) sync.bucket_cap_mb = *r.bucket_cap_mb;
  if (r.first_bucket_mb) sync.first_bucket_mb = *r.first_bucket_mb;
  if (r.accum_steps) sync.accum_steps = *r.accum_steps;
  if (r.grad_comm) sync.grad_format = parse_grad_format(*r.grad_comm);
  if (sync.mode == Mode::sharded) {
    sync.shard_stage = r.shard_stage;
    if (r.prefetch_units) sync.prefetch_units = *r.prefetch_units;
  }
  return sync;
}

// The link the run emulated, as the model sees it. A record keeps one tier (link_alpha_us,
// link_gbps), so a hierarchical run is modelled as the ring over that link.
CommModel comm_of(const RunRecord& r) {
  CommModel comm;
  const auto& names = allreduce_algo_names();
  if (std::find(names.begin(), names.end(), r.allreduce) != names.end()) comm.algo = parse_allreduce_algo(r.allreduce);
  if (comm.algo == AllreduceAlgo::hier) comm.algo = AllreduceAlgo::ring;
  if (r.link != "none" && r.link_alpha_us && r.link_gbps) {
    comm.link = LinkModel{r.link, *r.link_alpha_us, *r.link_gbps, r.link_dilation};
  }
  return comm;
}

int ranks_per_node(const RunRecord& r) { return std::max(1, r.world_size / std::max(1, r.n_nodes)); }

}  // namespace

EpochPrediction predict_recorded(const SingleRun& single, const RunRecord& r, const MachineTerms& terms) {
  return predict_epoch(single, Workload{r.n_samples, r.global_batch, r.seq_len}, sync_of(r), comm_of(r), r.world_size, terms,
                       ranks_per_node(r));
}

double fixed_step_of(const FixedStepSample& x) {
  const double k = x.world_size;
  return (x.compute_step - x.t1_step / k) / (1 - 1 / k);
}

void fit_fixed_step(const std::vector<FixedStepSample>& samples, MachineTerms& terms) {
  terms.fixed_step_s = terms.fixed_step_s_per_param = 0;
  if (samples.empty()) return;
  double n = 0, sp = 0, spp = 0, sf = 0, spf = 0;
  for (const FixedStepSample& x : samples) {
    const double phi = fixed_step_of(x);
    n += 1, sp += x.params, spp += x.params * x.params, sf += phi, spf += x.params * phi;
  }
  const double det = n * spp - sp * sp;
  if (det > 1e-9 * n * spp) {  // two or more sizes: the line φ0 + φ1·P
    terms.fixed_step_s = (spp * sf - sp * spf) / det;
    terms.fixed_step_s_per_param = (n * spf - sp * sf) / det;
  } else {
    terms.fixed_step_s = sf / n;
  }
  if (terms.fixed_step_s_per_param < 0) {  // a cost falling with size is noise: the mean alone
    terms.fixed_step_s_per_param = 0;
    terms.fixed_step_s = sf / n;
  }
  if (terms.fixed_step_s < 0) {  // through the origin
    terms.fixed_step_s = 0;
    terms.fixed_step_s_per_param = std::max(0.0, spf / spp);
  }
}

Calibration calibrate(const std::string& path, const std::vector<Mode>& fit_modes) {
  const ResultsFile f = read_results(path);
  refuse_gpu_shared(f, "dpscale predict");
  Calibration c;
  c.path = path;
  auto where = [&](const SweepEntry& e) { return path + ":" + std::to_string(e.line_no); };
  int machine_line = 0;
  for (const SweepEntry& e : f.entries) {
    if (!e.machine.known) continue;
    if (!c.machine.known) {
      c.machine = e.machine;
      machine_line = e.line_no;
    } else if (!(e.machine == c.machine)) {
      throw InputError(where(e) + ": measured on " + e.machine.describe() + ", but line " + std::to_string(machine_line) +
                       " on " + c.machine.describe() + "; calibrate from one machine's runs");
    }
  }
  auto fit_mode = [&](ModeRef m) {
    // The terms are fitted on the DDP modes' all-reduces; the sharded mode is predicted with
    // them, held out (its reduce-scatters and all-gathers take the same α, β, o and σ).
    if (!m->data_parallel || m == Mode::sharded) return false;
    return fit_modes.empty() || std::find(fit_modes.begin(), fit_modes.end(), m.id()) != fit_modes.end();
  };
  for (const SweepEntry& e : f.entries) {
    if (e.point.world_size > 1 && fit_mode(e.point.mode) && (c.fit_k == 0 || e.point.world_size < c.fit_k)) {
      c.fit_k = e.point.world_size;
    }
  }
  if (c.fit_k == 0) throw InputError(path + ": no data-parallel run " + (fit_modes.empty() ? "" : "of the --fit-modes ") + "to calibrate from");
  std::vector<const SweepEntry*> fit;
  std::vector<const SweepEntry*> single_runs;
  std::string first_disturbed;
  for (const SweepEntry& e : f.entries) {
    const bool single = !e.point.mode->data_parallel;
    if (!single && !(e.point.world_size == c.fit_k && fit_mode(e.point.mode))) continue;
    if (!e.ok) {
      throw InputError(where(e) + ": run " + e.run.run_id + " failed (" + e.reason +
                       "); rerun it (dpscale sweep --resume) before calibrating from this file");
    }
    if (e.state && e.state->disturbed) {  // left out, and said so: noise is not a term of the machine
      c.left_out.push_back(e.run.run_id + " (disturbed: " + *e.state->disturbed + ")");
      if (first_disturbed.empty()) first_disturbed = where(e) + ": run " + e.run.run_id + " was disturbed (" + *e.state->disturbed + ")";
      continue;
    }
    if (single) {
      single_runs.push_back(&e);
    } else if (e.record->accum_steps.value_or(1) != 1) {
      throw InputError(where(e) + ": run " + e.run.run_id +
                       " accumulates gradients; calibrate from runs with --accum-steps 1 (one all-reduce per step)");
    } else {
      fit.push_back(&e);
    }
  }
  if (single_runs.empty() && !first_disturbed.empty()) {
    throw InputError(first_disturbed + ", and so was every single-device run; calibrate from runs on a quiet machine");
  }
  if (single_runs.empty()) throw InputError(path + ": no single-device run to calibrate compute from (the sweep needs mode 'single')");
  if (fit.empty()) {
    throw InputError(first_disturbed + ", and so was every data-parallel run at K = " + std::to_string(c.fit_k) +
                     "; calibrate from runs on a quiet machine");
  }
  // T1 per model: the median of its undisturbed single-device runs.
  std::map<std::string, std::vector<double>> epochs;
  for (const SweepEntry* e : single_runs) {
    const RunRecord& r = *e->record;
    const ModelSpec spec = model_of_record(r);
    if (!epochs.count(single_key(spec))) c.singles.push_back(SingleRun{spec, 0, r.n_samples, r.global_batch});
    epochs[single_key(spec)].push_back(r.avg_epoch_s);
  }
  for (SingleRun& s : c.singles) {
    s.epoch_s = median(epochs[single_key(s.spec)]);
  }
  // Each data-parallel run starts from the single run of its own point (beside), as the gate pairs.
  const std::set<const SweepEntry*> kept_singles(single_runs.begin(), single_runs.end());
  c.single_at = singles_by_point(f, [&](const SweepEntry& e) { return kept_singles.count(&e) > 0; });

  const RunRecord& first = *fit.front()->record;
  c.terms.threads = first.threads;
  c.terms.cores = first.backend == "cpu" && c.machine.known ? c.machine.cpu_count : 0;

  // Per run: the quantities of one step.
  struct Step {
    const RunRecord* r;
    const SingleRun* s;
    double t_c, oversub, compute, busy;
  };
  std::vector<Step> naive, overlapped;
  std::set<Point> keys;
  for (const SweepEntry* e : fit) {
    const RunRecord& r = *e->record;
    const auto s = c.single_at.find(e->point.beside(Mode::single, 1));
    if (s == c.single_at.end()) {
      throw InputError(where(*e) + ": " + e->point.describe() + " has no single-device run of its point (" +
                       e->point.beside(Mode::single, 1).describe() + ") to calibrate from");
    }
    const double steps = static_cast<double>(std::max<int64_t>(1, r.steps_per_epoch));
    Step st{&r, &s->second, step_compute_1(s->second, Workload{r.n_samples, r.global_batch, r.seq_len}) / r.world_size,
            c.terms.oversubscription(ranks_per_node(r)), r.compute_s / steps,
            r.comm_busy_s.value_or(r.comm_s.value_or(0)) / steps};
    (e->point.mode == Mode::naive ? naive : overlapped).push_back(st);
    if (keys.insert(e->point).second) c.fitted.push_back(e->point);
  }

  // φ, from naive's compute.
  std::vector<double> over, sig;
  std::vector<FixedStepSample> fixed;
  for (const Step& st : naive) {
    fixed.push_back({static_cast<double>(st.s->spec.n_params()), st.r->world_size, st.t_c * st.r->world_size,
                     st.compute / st.oversub});
  }
  fit_fixed_step(fixed, c.terms);
  // o, from the all-reduces' measured busy time against their modelled time.
  auto overhead_of = [](const Step& st) {
    const SyncSetup sync = sync_of(*st.r);
    const CommModel comm = comm_of(*st.r);
    const int k = st.r->world_size;
    const StepTimes m = simulate_step(launches(st.s->spec, sync, st.compute), st.compute,
                                      [&](int64_t n) { return comm.seconds(static_cast<size_t>(n), k); });
    return m.calls > 0 ? (st.busy - m.busy) / m.calls : 0.0;
  };
  for (const Step& st : naive.empty() ? overlapped : naive) over.push_back(overhead_of(st));
  if (!over.empty()) c.terms.call_overhead_s = std::max(0.0, median(over));
  // σ, from the overlapped runs' compute beyond φ and their launches, per MiB their all-reduces moved inside backward.
  for (const Step& st : overlapped) {
    const SyncSetup sync = sync_of(*st.r);
    const CommModel comm = comm_of(*st.r);
    const int k = st.r->world_size;
    const std::vector<Launch> ls = launches(st.s->spec, sync, st.compute);
    const StepTimes m = simulate_step(ls, st.compute, [&](int64_t n) {
      return comm.seconds(static_cast<size_t>(n), k) + c.terms.call_overhead_s;
    });
    double moved = 0;
    int inside = 0;
    for (size_t j = 0; j < ls.size(); ++j) {
      if (ls[j].at < st.compute) ++inside;
      if (m.starts[j] < st.compute) moved += ring_moved_mib(static_cast<double>(ls[j].nbytes), k);
    }
    // What is left after the fixed step and the launches made inside backward is contention.
    const double t_c0 = c.terms.compute_at(st.t_c * k, static_cast<double>(st.s->spec.n_params()), k, st.oversub);
    if (moved > 0) sig.push_back((st.compute - t_c0 - c.terms.call_overhead_s * inside) / (st.oversub * moved));
  }
  if (!sig.empty()) c.terms.contention_s_per_mib = std::max(0.0, median(sig));

  auto count = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? " run" : " runs"); };
  const std::string phi_from =
      fixed.empty() ? "no naive run at K = " + std::to_string(c.fit_k) + ": assumed 0" : count(fixed.size(), "naive");
  c.fits.push_back({"φ0 fixed step", "ms per step", 1e3 * c.terms.fixed_step_s, static_cast<int>(fixed.size()), phi_from});
  c.fits.push_back({"φ1 fixed step per parameter", "ns per step per parameter", 1e9 * c.terms.fixed_step_s_per_param,
                    static_cast<int>(fixed.size()), phi_from});
  c.fits.push_back({"σ contention", "ms per MiB moved during backward", 1e3 * c.terms.contention_s_per_mib,
                    static_cast<int>(sig.size()),
                    sig.empty() ? "no overlapped run at K = " + std::to_string(c.fit_k) + ": assumed 0"
                                : count(sig.size(), "overlapped")});
  c.fits.push_back({"o call overhead", "µs per all-reduce", 1e6 * c.terms.call_overhead_s, static_cast<int>(over.size()),
                    count(over.size(), naive.empty() ? "overlapped" : "naive")});
  c.fits.push_back({"C cores", "CPUs", static_cast<double>(c.terms.cores), 0,
                    c.terms.cores > 0 ? "the runs' machine (" + c.machine.describe() + "), " + std::to_string(c.terms.threads) +
                                            " BLAS thread(s) per rank"
                                      : "not modelled (CUDA backend: one rank per device)"});
  return c;
}

RunsToCheck runs_to_check(const std::string& path, const std::optional<Calibration>& calibration,
                          const std::string& hint) {
  RunsToCheck in;
  in.file = read_results(path);
  refuse_gpu_shared(in.file, "dpscale predict");
  in.singles = calibration ? calibration->single_at : singles_by_point(in.file);
  if (in.singles.empty() && !calibration) {
    throw InputError(path + ": no successful single-device run to calibrate compute from");
  }
  if (calibration) {
    for (const SingleRun& s : calibration->singles) in.calibrated_models[s.spec.key()] = s;
  }
  if (calibration) in.terms = calibration->terms;
  for (const SweepEntry& e : in.file.entries) {
    if (calibration && calibration->machine.known && e.machine.known && !(e.machine == calibration->machine)) {
      throw InputError(path + ":" + std::to_string(e.line_no) + ": measured on " + e.machine.describe() +
                       ", but the calibration " + calibration->path + " on " + calibration->machine.describe() + hint);
    }
  }
  return in;
}

const SingleRun* RunsToCheck::single_for(const Point& p) const {
  if (const auto s = singles.find(p.beside(Mode::single, 1)); s != singles.end()) return &s->second;
  if (const auto m = calibrated_models.find(p.model); m != calibrated_models.end()) return &m->second;
  return nullptr;
}

std::string describe_fits(const Calibration& c) {
  std::ostringstream out;
  out << "Calibrated from " << c.path << " at K = " << c.fit_k << " (fitted points, never validated:";
  for (size_t i = 0; i < c.fitted.size(); ++i) out << (i ? "; " : " ") << c.fitted[i].describe();
  out << "):\n";
  for (const TermFit& t : c.fits) out << "- " << t.name << ": " << sig4(t.value) << " " << t.unit << " (" << t.from << ")\n";
  for (const std::string& x : c.left_out) out << "- left out: " << x << "\n";
  return out.str();
}

}  // namespace dpscale::predict
