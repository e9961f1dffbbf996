// predict_setup.cpp — the prediction's inputs from the options (predict_setup.h).
#include "predict_setup.h"

#include <algorithm>
#include <sstream>

#include "contract/option_values.h"
#include "calibration.h"
#include "comm_fit.h"
#include "comm_time.h"
#include "contract/link_model.h"
#include "core/errors.h"
#include "harness/results/results_file.h"
#include "models/device.h"
#include "models/gemm/gemm_probe.h"
#include "models/model_spec.h"

namespace dpscale::predict {

namespace {

// The file whose runs give compute (and, without a link given, the link).
std::string source_file(const PredictArgs& a) { return !a.calibrate.empty() ? a.calibrate : a.from; }

// The single-device epochs and their workload: --calibrate's, --from's or --single's.
void set_compute(const PredictArgs& a, const std::optional<Calibration>& cal, PredictSetup& p) {
  if (static_cast<int>(!a.from.empty()) + static_cast<int>(!a.single.empty()) + static_cast<int>(cal.has_value()) != 1) {
    throw InputError(
        "dpscale predict: give the single-device epochs with exactly one of --from RESULTS.jsonl, --single "
        "MODEL=SECONDS,... or --calibrate RUN.jsonl (or --textbook, --validate)");
  }
  PredictContext& ctx = p.ctx;
  if (cal) {
    p.singles = cal->singles;
    ctx.compute_source = "--calibrate " + a.calibrate;
    ctx.terms = cal->terms;
    ctx.terms_source = describe_fits(*cal);
  } else if (a.cores >= 0) {
    ctx.terms.cores = a.cores;
  }
  if (!a.from.empty()) {
    // Marked, not refused: a quick look from a sweep taken beside other work is still a look.
    int disturbed = 0;
    std::string first;
    const ResultsFile from = read_results(a.from);
    refuse_gpu_shared(from, "dpscale predict");
    for (const SweepEntry& e : from.entries) {
      if (e.state && e.state->disturbed && disturbed++ == 0) first = e.run.run_id + ": " + *e.state->disturbed;
    }
    if (disturbed > 0) ctx.busy = std::to_string(disturbed) + " of " + a.from + "'s runs were disturbed (" + first + ")";
    p.singles = singles_from_results(a.from);
    ctx.compute_source = a.from;
  } else if (!cal) {
    ctx.compute_source = "--single " + a.single;
  }
  if (!p.singles.empty()) ctx.workload = Workload{p.singles.front().samples, p.singles.front().batch};
  if (a.samples > 0) ctx.workload.samples = a.samples;
  if (a.batch_size > 0) ctx.workload.batch = a.batch_size;
  ctx.workload.seq_len = a.seq_len;
  if (ctx.workload.samples < ctx.workload.batch) {
    throw OptionError("--samples", "must be at least the batch " + std::to_string(ctx.workload.batch) + " (got " +
                                       std::to_string(ctx.workload.samples) + ")");
  }
  if (!a.single.empty()) p.singles = parse_single_arg(a.single, ctx.workload);
  if (a.seq_len > 0) {
    bool any_gpt = false;
    for (const SingleRun& s : p.singles) {
      if (!s.spec.is_gpt()) continue;
      any_gpt = true;
      if (a.seq_len > s.spec.gpt->context) {
        throw OptionError("--seq-len", std::to_string(a.seq_len) + " is above " + s.spec.key() + "'s context " +
                                           std::to_string(s.spec.gpt->context));
      }
    }
    if (!any_gpt) throw OptionError("--seq-len", "sets a transformer's tokens per sample, and no model here is one");
  }
}

// --models: only these of the single-device epochs, in the order given.
void keep_models(const PredictArgs& a, std::vector<SingleRun>& singles) {
  if (a.models.empty()) return;
  std::vector<SingleRun> keep;
  for (const std::string& m : a.models) {
    auto it = std::find_if(singles.begin(), singles.end(), [&](const SingleRun& s) { return s.spec.name == m; });
    if (it == singles.end()) throw OptionError("--models", "'" + m + "' has no single-device epoch to predict from");
    keep.push_back(*it);
  }
  singles = keep;
}

// --world-sizes, or 1, 2, 4, ..., 256 (2 for the advice); every K within the global batch.
std::vector<int> world_sizes_of(const PredictArgs& a, int batch) {
  std::vector<int> ks = a.world_sizes;
  if (ks.empty() && (a.recommend_cap || a.recommend)) ks = {2};
  if (ks.empty()) {
    for (int k = 1; k <= 256; k *= 2) ks.push_back(k);
  }
  for (int k : ks) {
    if (k > batch) {
      throw OptionError("--world-sizes", "K = " + std::to_string(k) + " is above the global batch " +
                                             std::to_string(batch) + " (every rank needs a row)");
    }
  }
  return ks;
}

// The link of a results file's data-parallel runs (first one with a link), dilation = their upper
// median (the larger middle value for an even count: one of the measured F's, never a blend).
std::optional<LinkModel> link_of_results(const std::string& path) {
  const ResultsFile f = read_results(path);
  refuse_gpu_shared(f, "dpscale predict");
  std::optional<LinkModel> l;
  std::vector<double> f_values;
  for (const SweepEntry& e : f.entries) {
    if (!e.ok || !e.record || e.record->link == "none" || !e.record->link_alpha_us || !e.record->link_gbps) continue;
    if (!l) l = LinkModel{e.record->link, *e.record->link_alpha_us, *e.record->link_gbps, 1.0};
    if (e.record->link == l->name) f_values.push_back(e.record->link_dilation);
  }
  if (l) {
    std::sort(f_values.begin(), f_values.end());
    l->dilation = f_values[f_values.size() / 2];
  }
  return l;
}

// --fit-step: naive's compute at each K (its epoch less its measured comm, per step) fits the
// fixed step. Returns the words for the link's source line.
std::string fit_fixed_step_from(const PredictArgs& a, const std::vector<SingleRun>& singles, PredictContext& ctx) {
  const std::vector<CommSample> comm = parse_fit_comm(a.fit_comm);
  std::vector<FixedStepSample> fixed;
  for (const CommSample& e : parse_fit_comm(a.fit_step, "--fit-step")) {
    const std::string piece = e.model + ":" + std::to_string(e.world_size);
    const auto c = std::find_if(comm.begin(), comm.end(), [&](const CommSample& x) {
      return x.model == e.model && x.world_size == e.world_size;
    });
    if (c == comm.end()) throw OptionError("--fit-step", piece + " has no comm time in --fit-comm");
    // A naive epoch holds its blocking all-reduce phase: an epoch no longer than it is a typo.
    if (e.comm_epoch_s <= c->comm_epoch_s) {
      throw OptionError("--fit-step", piece + "'s epoch " + format_number(e.comm_epoch_s) +
                                          " s is not longer than its comm time " + format_number(c->comm_epoch_s) +
                                          " s in --fit-comm (a naive epoch holds its comm phase)");
    }
    const auto single = std::find_if(singles.begin(), singles.end(), [&](const SingleRun& r) { return r.spec.name == e.model; });
    if (single == singles.end()) {
      throw OptionError("--fit-step", "model '" + e.model + "' has no single-device epoch (give it in --single or --from)");
    }
    const double steps = static_cast<double>(ctx.workload.samples / ctx.workload.batch);
    const FixedStepSample x{static_cast<double>(single->spec.n_params()), e.world_size, step_compute_1(*single, ctx.workload),
                            (e.comm_epoch_s - c->comm_epoch_s) / steps};
    // Compute below T1/K is a speed-up no fixed cost explains: the fit would clamp it to 0.
    if (fixed_step_of(x) < 0) {
      throw OptionError("--fit-step", piece + ": its compute per step (epoch less comm) " + sig4(x.compute_step * 1e3) +
                                          " ms is below the single run's per-step compute / K " +
                                          sig4(x.t1_step / x.world_size * 1e3) + " ms: no fixed step fits it");
    }
    fixed.push_back(x);
  }
  fit_fixed_step(fixed, ctx.terms);
  std::ostringstream s;
  s << "; fixed step " << sig4(ctx.terms.fixed_step_s * 1e3) << " ms + " << sig4(ctx.terms.fixed_step_s_per_param * 1e9)
    << " ns per parameter, fitted to " << fixed.size() << " naive epochs";
  return s.str();
}

// --fit-comm: α, β and the per-call overhead from naive comm times (and --fit-step's fixed step).
void fit_link_to_comm(const PredictArgs& a, const std::vector<SingleRun>& singles, PredictContext& ctx) {
  const CommFit fit = fit_comm(parse_fit_comm(a.fit_comm), singles, ctx.workload, ctx.comm.algo);
  ctx.comm.link = LinkModel{"fitted", fit.alpha_us, fit.gbps, 1.0};
  ctx.terms.call_overhead_s = fit.call_overhead_s;
  std::ostringstream s;
  s << "fitted to " << fit.points << " naive comm times: α " << sig4(fit.alpha_us) << " µs, β " << sig4(fit.gbps)
    << " GB/s, per-call overhead " << sig4(fit.call_overhead_s * 1e6) << " µs, rms relative residual "
    << sig4(fit.rms_rel_residual);
  ctx.link_source = s.str() + (a.fit_step.empty() ? "" : fit_fixed_step_from(a, singles, ctx));
}

// --link-from: α and β fitted to bench_allreduce's rows.
void fit_link_to_bench(const PredictArgs& a, PredictContext& ctx) {
  const LinkFit fit = fit_link_from_bench(a.link_from, a.link_from_algo);
  ctx.comm.link = LinkModel{"fitted", fit.alpha_us, fit.gbps, 1.0};
  std::ostringstream s;
  s << "fitted to " << a.link_from << ": α " << sig4(fit.alpha_us) << " µs, β " << sig4(fit.gbps) << " GB/s from "
    << fit.points << " '" << fit.algo << "' rows, rms relative residual " << sig4(fit.rms_rel_residual);
  ctx.link_source = s.str();
}

// The link: --fit-comm, --link-from, --link, or the source file's own (its median dilation).
void set_link(const PredictArgs& a, const std::vector<SingleRun>& singles, PredictContext& ctx) {
  ctx.comm.algo = parse_algo_option(a.algo);
  if (static_cast<int>(!a.link_from.empty()) + static_cast<int>(!a.link.empty()) + static_cast<int>(!a.fit_comm.empty()) > 1) {
    throw InputError("dpscale predict: give one of --link, --link-from and --fit-comm");
  }
  if (!a.fit_step.empty() && a.fit_comm.empty()) throw InputError("dpscale predict: --fit-step needs --fit-comm (its comm times)");
  const std::string from = source_file(a);
  if (!a.fit_comm.empty()) {
    fit_link_to_comm(a, singles, ctx);
  } else if (!a.link_from.empty()) {
    fit_link_to_bench(a, ctx);
  } else if (!a.link.empty()) {
    ctx.comm.link = parse_link(a.link);
    ctx.link_source = "--link " + a.link;
  } else if (!from.empty()) {
    const std::optional<LinkModel> l = link_of_results(from);
    if (!l) throw InputError(from + ": no data-parallel run with a link to take the link from; give --link or --link-from");
    ctx.comm.link = *l;
    ctx.link_source = "the link of " + from + "'s runs, their median dilation";
  } else {
    throw InputError("dpscale predict: give the link: --link PRESET|ALPHA_US:GBPS or --link-from BENCH.json");
  }
}

// --link-dilation F, or auto:TFLOPS measured as the trainers measure it: the largest model's
// largest forward GEMM on this machine (measure_model_gemm_flops), at the local batch of the smallest K > 1 asked
// for (one BLAS thread, as the cpu configs run). A results file's own dilation stays unless F
// is given.
void set_dilation(const PredictArgs& a, bool dilation_given, const PredictSetup& p, PredictContext& ctx) {
  const bool link_given = !a.link.empty() || !a.link_from.empty() || !a.fit_comm.empty();
  if (!dilation_given && !source_file(a).empty() && !link_given) return;
  const DilationSpec d = parse_dilation(a.link_dilation);
  ctx.comm.link.dilation = d.factor;
  if (d.auto_tflops <= 0) return;
  const SingleRun& biggest = *std::max_element(p.singles.begin(), p.singles.end(), [](const SingleRun& x, const SingleRun& y) {
    return x.spec.n_params() < y.spec.n_params();
  });
  int k2 = 2;
  for (int k : p.world_sizes) {
    if (k > 1) {
      k2 = k;
      break;
    }
  }
  // In the GEMM library --gemm auto chooses for that model and local batch (the trainers' default).
  const int local_batch = std::max(1, ctx.workload.batch / k2);
  DeviceOptions dopts{"cpu", 1, false, 0};
  const ModelSpec spec = spec_at(biggest, ctx.workload);
  dopts.gemm_shapes = spec.step_gemms(local_batch);
  const auto dev = make_device(dopts);
  const double flops = measure_model_gemm_flops(*dev, spec, local_batch);
  ctx.comm.link.dilation = d.auto_tflops * 1e12 / flops;
  ctx.link_source += "; dilation auto: " + sig4(flops / 1e9) + " GFLOP/s measured here (" +
                     dev->gemm_report().info.library + ")";
}

}  // namespace

std::optional<Calibration> calibration_of(const PredictArgs& a) {
  if (a.calibrate.empty()) {
    if (!a.fit_modes.empty()) throw InputError("dpscale predict: --fit-modes needs --calibrate RUN.jsonl");
    return std::nullopt;
  }
  std::vector<Mode> fit_modes;
  for (const std::string& m : a.fit_modes) fit_modes.push_back(parse_dp_mode(m));
  Calibration cal = calibrate(a.calibrate, fit_modes);
  if (a.cores >= 0) cal.terms.cores = a.cores;
  return cal;
}

PredictSetup set_up_prediction(const PredictArgs& a, const std::optional<Calibration>& cal, bool dilation_given) {
  PredictSetup p;
  set_compute(a, cal, p);
  keep_models(a, p.singles);
  for (const std::string& m : a.modes) p.modes.push_back(parse_dp_mode(m));
  p.world_sizes = world_sizes_of(a, p.ctx.workload.batch);
  p.ctx.sync.bucket_cap_mb = a.bucket_cap_mb;
  p.ctx.sync.first_bucket_mb = a.first_bucket_mb;
  p.ctx.sync.shard_stage = a.shard_stage;
  p.ctx.sync.prefetch_units = a.prefetch_units;
  p.ctx.sync.fused = a.fused;
  set_link(a, p.singles, p.ctx);
  set_dilation(a, dilation_given, p, p.ctx);
  p.ctx.comm.intra = parse_link(a.intra_link.empty() ? "nvlink" : a.intra_link);
  p.ctx.comm.intra.dilation = p.ctx.comm.link.dilation;
  p.ctx.comm.gpus_per_node = a.gpus_per_node;
  return p;
}

}  // namespace dpscale::predict
