// predict_main.cpp — `dpscale predict`: options, checks, and which part runs.
#include "predict_main.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "calibration.h"
#include "cap_check.h"
#include "comm_fit.h"
#include "contract/link_model.h"
#include "contract/trainer_options.h"
#include "machine_fit.h"
#include "contract/option_values.h"
#include "harness/sweep/results_file.h"
#include "models/device.h"
#include "core/errors.h"
#include "predict_table.h"
#include "recommend.h"
#include "recommend_cap.h"
#include "textbook.h"
#include "models/gemm/gemm_probe.h"
#include "validate.h"

namespace dpscale::predict {

// Every option as its text, parsed and checked in run() with contract/option_values.h, so a bad
// value is refused in the trainers' words (exit 2, one line).
struct PredictArgs {
  std::string textbook;
  // textbook inputs
  std::string params, bytes_per_param, global_batch, flops_per_example, device_tflops, net_gbps, loader, world_size,
      compute_ms, intra_link, inter_link;
  // step model
  std::string from, single, samples, batch_size, models, modes = "naive,interleaved,bucketed",
      world_sizes, bucket_cap_mb = format_number(TrainOptions{}.bucket_cap_mb),
      first_bucket_mb = format_number(TrainOptions{}.first_bucket_mb), link, link_from, link_from_algo = "native",
      link_dilation = "1", algo = "ring", gpus_per_node = "8", validate, format = "md", calibrate, fit_modes, cores,
      validate_caps, fit_comm, fit_step;
  bool fused = false, recommend_cap = false, recommend = false;
};

namespace {

double real_opt(const std::string& name, const std::string& text, Bound lo, Bound hi = {kNoLimit, true}) {
  try {
    return parse_real(text, lo, hi);
  } catch (const ValueError& e) {
    throw OptionError(name, e.what());
  }
}

int64_t whole_opt(const std::string& name, const std::string& text, int64_t lo, int64_t hi) {
  try {
    return parse_whole(text, lo, hi);
  } catch (const ValueError& e) {
    throw OptionError(name, e.what());
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);) out.push_back(x);
  return out;
}

std::vector<int> parse_world_sizes(const std::string& text) {
  std::vector<int> ks;
  for (const std::string& w : split(text, ',')) ks.push_back(static_cast<int>(whole_opt("--world-sizes", w, 1, 1 << 20)));
  if (ks.empty()) throw OptionError("--world-sizes", "names no world size");
  return ks;
}

std::vector<int> default_world_sizes() {
  std::vector<int> ks;
  for (int k = 1; k <= 256; k *= 2) ks.push_back(k);
  return ks;
}

// "1:300" style custom links, or a preset name; for 15.2.1's --intra-link / --inter-link too.
LinkModel link_opt(const std::string& name, const std::string& text) {
  try {
    LinkModel l = parse_link(text);
    if (!l.enabled()) throw OptionError(name, "must name a link (got 'none')");
    return l;
  } catch (const OptionError& e) {
    if (e.complaint().empty()) throw;
    throw OptionError(name, e.complaint());
  }
}

int run_textbook(const PredictArgs& a) {
  if (a.textbook == "15.9.1") {
    Sim1591 s;
    if (!a.params.empty()) s.params = real_opt("--params", a.params, {0.0, false});
    if (!a.bytes_per_param.empty()) s.bytes_per_param = real_opt("--bytes-per-param", a.bytes_per_param, {0.0, false}, {64});
    if (!a.global_batch.empty()) s.global_batch = real_opt("--global-batch", a.global_batch, {0.0, false});
    if (!a.flops_per_example.empty()) s.flops_per_example = real_opt("--flops-per-example", a.flops_per_example, {0.0, false});
    if (!a.device_tflops.empty()) s.device_tflops = real_opt("--device-tflops", a.device_tflops, {0.0, false});
    if (!a.net_gbps.empty()) s.net_gbps = real_opt("--net-gbps", a.net_gbps, {0.0, false});
    if (!a.loader.empty()) s.loader_samples_per_s = real_opt("--loader-samples-per-s", a.loader, {0.0, false});
    if (!a.world_sizes.empty()) s.world_sizes = parse_world_sizes(a.world_sizes);
    std::cout << render_1591(s) << std::flush;
    return 0;
  }
  if (a.textbook == "15.2.1") {
    Sim1521 s;
    if (!a.params.empty()) s.params = real_opt("--params", a.params, {0.0, false});
    if (!a.bytes_per_param.empty()) s.bytes_per_param = real_opt("--bytes-per-param", a.bytes_per_param, {0.0, false}, {64});
    if (!a.world_size.empty()) s.world_size = static_cast<int>(whole_opt("--world-size", a.world_size, 2, 1 << 20));
    if (!a.compute_ms.empty()) s.compute_ms = real_opt("--compute-ms", a.compute_ms, {0.0, false});
    if (!a.intra_link.empty()) {
      const LinkModel l = link_opt("--intra-link", a.intra_link);
      s.intra_alpha_us = l.alpha_us, s.intra_gbps = l.gbps;
    }
    if (!a.inter_link.empty()) {
      const LinkModel l = link_opt("--inter-link", a.inter_link);
      s.inter_alpha_us = l.alpha_us, s.inter_gbps = l.gbps;
    }
    std::cout << render_1521(s) << std::flush;
    return 0;
  }
  throw OptionError("--textbook", "unknown listing '" + a.textbook + "' (use 15.9.1 or 15.2.1)");
}

// The link of a results file's data-parallel runs (first one with a link), dilation = their upper
// median (the larger middle value for an even count: one of the measured F's, never a blend).
std::optional<LinkModel> link_of_results(const std::string& path) {
  const ResultsFile f = read_results(path);
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

int run_model(const PredictArgs& a, const CLI::App& cmd) {
  const std::string format = a.format;
  if (format != "md" && format != "csv" && format != "json") throw OptionError("--format", "unknown format '" + format + "' (use md, csv or json)");
  std::optional<Calibration> cal;
  if (!a.calibrate.empty()) {
    std::vector<Mode> fit_modes;
    for (const std::string& m : split(a.fit_modes, ',')) {
      try {
        fit_modes.push_back(parse_dp_mode(m));
      } catch (const OptionError& e) {
        throw OptionError("--fit-modes", e.complaint());
      }
    }
    cal = calibrate(a.calibrate, fit_modes);
    if (!a.cores.empty()) cal->terms.cores = static_cast<int>(whole_opt("--cores", a.cores, 0, 1 << 20));
  } else if (!a.fit_modes.empty()) {
    throw InputError("dpscale predict: --fit-modes needs --calibrate RUN.jsonl");
  }
  if (!a.validate.empty()) {
    std::cout << render_validation(validate(a.validate, cal), format) << std::flush;
    return 0;
  }
  if (!a.validate_caps.empty()) {
    std::cout << render_cap_check(check_caps(a.validate_caps, cal), format) << std::flush;
    return 0;
  }
  if (static_cast<int>(!a.from.empty()) + static_cast<int>(!a.single.empty()) + static_cast<int>(cal.has_value()) != 1) {
    throw InputError("dpscale predict: give the single-device epochs with exactly one of --from RESULTS.jsonl, --single MODEL=SECONDS,... or --calibrate RUN.jsonl (or --textbook, --validate)");
  }
  PredictContext ctx;
  std::vector<SingleRun> singles;
  const std::string from = cal ? a.calibrate : a.from;  // the file whose runs give compute and the link
  if (cal) {
    singles = cal->singles;
    ctx.workload = Workload{singles.front().samples, singles.front().batch};
    ctx.compute_source = "--calibrate " + a.calibrate;
    ctx.terms = cal->terms;
    ctx.terms_source = describe_fits(*cal);
  } else if (!a.cores.empty()) {
    ctx.terms.cores = static_cast<int>(whole_opt("--cores", a.cores, 0, 1 << 20));
  }
  if (!a.from.empty()) {
    // Marked, not refused: a quick look from a sweep taken beside other work is still a look.
    int disturbed = 0;
    std::string first;
    for (const SweepEntry& e : read_results(a.from).entries) {
      if (e.state && e.state->disturbed && disturbed++ == 0) first = e.run.run_id + ": " + *e.state->disturbed;
    }
    if (disturbed > 0) ctx.busy = std::to_string(disturbed) + " of " + a.from + "'s runs were disturbed (" + first + ")";
    singles = singles_from_results(a.from);
    ctx.workload = Workload{singles.front().samples, singles.front().batch};
    ctx.compute_source = a.from;
  } else {
    ctx.compute_source = "--single " + a.single;
  }
  if (!a.samples.empty()) ctx.workload.samples = whole_opt("--samples", a.samples, 1, INT64_MAX / 2);
  if (!a.batch_size.empty()) ctx.workload.batch = static_cast<int>(whole_opt("--batch-size", a.batch_size, 1, INT32_MAX));
  if (ctx.workload.samples < ctx.workload.batch) {
    throw OptionError("--samples", "must be at least the batch " + std::to_string(ctx.workload.batch) + " (got " +
                                       std::to_string(ctx.workload.samples) + ")");
  }
  if (!a.single.empty()) singles = parse_single_arg(a.single, ctx.workload);
  if (!a.models.empty()) {
    std::vector<SingleRun> keep;
    for (const std::string& m : split(a.models, ',')) {
      auto it = std::find_if(singles.begin(), singles.end(), [&](const SingleRun& s) { return s.spec.name == m; });
      if (it == singles.end()) throw OptionError("--models", "'" + m + "' has no single-device epoch to predict from");
      keep.push_back(*it);
    }
    singles = keep;
  }
  std::vector<Mode> modes;
  for (const std::string& m : split(a.modes, ',')) modes.push_back(parse_dp_mode(m));
  const std::vector<int> ks = a.world_sizes.empty() ? (a.recommend_cap || a.recommend ? std::vector<int>{2} : default_world_sizes())
                                                    : parse_world_sizes(a.world_sizes);
  for (int k : ks) {
    if (k > ctx.workload.batch) {
      throw OptionError("--world-sizes", "K = " + std::to_string(k) + " is above the global batch " +
                                             std::to_string(ctx.workload.batch) + " (every rank needs a row)");
    }
  }
  // The caps' bounds and words are the trainers' (contract/trainer_options.h).
  TrainOptions caps;
  option("bucket_cap_mb").set(caps, a.bucket_cap_mb);
  option("first_bucket_mb").set(caps, a.first_bucket_mb);
  ctx.sync.bucket_cap_mb = caps.bucket_cap_mb;
  ctx.sync.first_bucket_mb = caps.first_bucket_mb;
  ctx.sync.fused = a.fused;

  // The link: --link-from (fitted), --link, or the --from file's own.
  ctx.comm.algo = parse_algo_option(a.algo);
  if (static_cast<int>(!a.link_from.empty()) + static_cast<int>(!a.link.empty()) + static_cast<int>(!a.fit_comm.empty()) > 1) {
    throw InputError("dpscale predict: give one of --link, --link-from and --fit-comm");
  }
  const bool dilation_given = cmd.count("--link-dilation") > 0;
  if (!a.fit_step.empty() && a.fit_comm.empty()) throw InputError("dpscale predict: --fit-step needs --fit-comm (its comm times)");
  if (!a.fit_comm.empty()) {
    const CommFit fit = fit_comm(parse_fit_comm(a.fit_comm), singles, ctx.workload, ctx.comm.algo);
    ctx.comm.link = LinkModel{"fitted", fit.alpha_us, fit.gbps, 1.0};
    ctx.terms.call_overhead_s = fit.call_overhead_s;
    std::ostringstream s;
    s << "fitted to " << fit.points << " naive comm times: α " << sig4(fit.alpha_us) << " µs, β " << sig4(fit.gbps)
      << " GB/s, per-call overhead " << sig4(fit.call_overhead_s * 1e6) << " µs, rms relative residual "
      << sig4(fit.rms_rel_residual);
    if (!a.fit_step.empty()) {
      // Naive's compute at each K: its epoch less its measured comm, per step.
      const std::vector<CommSample> comm = parse_fit_comm(a.fit_comm);
      std::vector<FixedStepSample> fixed;
      for (const CommSample& e : parse_fit_comm(a.fit_step)) {
        const auto c = std::find_if(comm.begin(), comm.end(), [&](const CommSample& x) {
          return x.model == e.model && x.world_size == e.world_size;
        });
        if (c == comm.end()) {
          throw OptionError("--fit-step", e.model + ":" + std::to_string(e.world_size) + " has no comm time in --fit-comm");
        }
        const auto single = std::find_if(singles.begin(), singles.end(), [&](const SingleRun& r) { return r.spec.name == e.model; });
        const double steps = static_cast<double>(ctx.workload.samples / ctx.workload.batch);
        fixed.push_back({static_cast<double>(single->spec.n_params()), e.world_size, step_compute_1(*single, ctx.workload),
                         (e.comm_epoch_s - c->comm_epoch_s) / steps});
      }
      fit_fixed_step(fixed, ctx.terms);
      s << "; fixed step " << sig4(ctx.terms.fixed_step_s * 1e3) << " ms + " << sig4(ctx.terms.fixed_step_s_per_param * 1e9)
        << " ns per parameter, fitted to " << fixed.size() << " naive epochs";
    }
    ctx.link_source = s.str();
  } else if (!a.link_from.empty()) {
    const LinkFit fit = fit_link_from_bench(a.link_from, a.link_from_algo);
    ctx.comm.link = LinkModel{"fitted", fit.alpha_us, fit.gbps, 1.0};
    std::ostringstream s;
    s << "fitted to " << a.link_from << ": α " << sig4(fit.alpha_us) << " µs, β " << sig4(fit.gbps) << " GB/s from "
      << fit.points << " '" << fit.algo << "' rows, rms relative residual " << sig4(fit.rms_rel_residual);
    ctx.link_source = s.str();
  } else if (!a.link.empty()) {
    ctx.comm.link = link_opt("--link", a.link);
    ctx.link_source = "--link " + a.link;
  } else if (!from.empty()) {
    const std::optional<LinkModel> l = link_of_results(from);
    if (!l) throw InputError(from + ": no data-parallel run with a link to take the link from; give --link or --link-from");
    ctx.comm.link = *l;
    ctx.link_source = "the link of " + from + "'s runs, their median dilation";
  } else {
    throw InputError("dpscale predict: give the link: --link PRESET|ALPHA_US:GBPS or --link-from BENCH.json");
  }
  if (dilation_given || from.empty() || !a.link.empty() || !a.link_from.empty() || !a.fit_comm.empty()) {
    const DilationSpec d = parse_dilation(a.link_dilation);
    ctx.comm.link.dilation = d.factor;
    if (d.auto_tflops > 0) {
      // As the trainers: the model's largest layer's forward GEMM on this machine, at the local
      // batch of the smallest K > 1 asked for (one thread, as the cpu configs run), in the GEMM
      // library --gemm auto chooses for that model and batch (the trainers' default).
      const SingleRun& biggest = *std::max_element(singles.begin(), singles.end(), [](const SingleRun& x, const SingleRun& y) {
        return x.spec.n_params() < y.spec.n_params();
      });
      int k2 = 2;
      for (int k : ks) {
        if (k > 1) { k2 = k; break; }
      }
      const int local_batch = std::max(1, ctx.workload.batch / k2);
      DeviceOptions dopts{"cpu", 1, false, 0};
      dopts.gemm_shapes = training_step_gemms(biggest.spec, local_batch);
      const auto dev = make_device(dopts);
      const double flops = measure_gemm_flops(*dev, biggest.spec, local_batch);
      ctx.comm.link.dilation = d.auto_tflops * 1e12 / flops;
      ctx.link_source += "; dilation auto: " + sig4(flops / 1e9) + " GFLOP/s measured here (" +
                         dev->gemm_report().info.library + ")";
    }
  }
  ctx.comm.intra = link_opt("--intra-link", a.intra_link.empty() ? "nvlink" : a.intra_link);
  ctx.comm.intra.dilation = ctx.comm.link.dilation;
  ctx.comm.gpus_per_node = static_cast<int>(whole_opt("--gpus-per-node", a.gpus_per_node, 1, 1 << 16));

  if (a.recommend) {
    std::cout << render_recommendations(recommend(singles, ctx, ks), ctx, format) << std::flush;
    return 0;
  }
  if (a.recommend_cap) {
    std::cout << render_caps(recommend_caps(singles, ctx, ks), ctx, format) << std::flush;
    return 0;
  }
  std::cout << render_rows(predict_rows(singles, ctx, modes, ks), ctx, format) << std::flush;
  return 0;
}

}  // namespace

PredictCommand::PredictCommand(CLI::App& app) : a_(std::make_unique<PredictArgs>()) {
  PredictArgs& a = *a_;
  cmd_ = app.add_subcommand("predict", "predict epoch time, speedup and E(K) to K = 256 from a single-device run (textbook 15.9, 15.2)");
  CLI::App& c = *cmd_;
  c.add_option("--textbook", a.textbook, "print the book's table: 15.9.1 or 15.2.1 (inputs below, the book's by default)");
  c.add_option("--params", a.params, "textbook: parameters P (1e9)");
  c.add_option("--bytes-per-param", a.bytes_per_param, "textbook: gradient bytes per parameter (2)");
  c.add_option("--global-batch", a.global_batch, "15.9.1: global batch (8192)");
  c.add_option("--flops-per-example", a.flops_per_example, "15.9.1: fwd+bwd FLOPs per example (6 x params)");
  c.add_option("--device-tflops", a.device_tflops, "15.9.1: sustained TFLOP/s per device (60)");
  c.add_option("--net-gbps", a.net_gbps, "15.9.1: link bandwidth, GB/s (25)");
  c.add_option("--loader-samples-per-s", a.loader, "15.9.1: input pipeline examples/s per worker (12000)");
  c.add_option("--world-size", a.world_size, "15.2.1: GPUs K (8)");
  c.add_option("--compute-ms", a.compute_ms, "15.2.1: compute per step, ms (250)");
  c.add_option("--intra-link", a.intra_link, "15.2.1 and --algo hier: link inside a node, ALPHA_US:GBPS or preset (1:300)");
  c.add_option("--inter-link", a.inter_link, "15.2.1: link between nodes (5:12.5)");
  c.add_option("--from", a.from, "results file: its single-device runs calibrate compute (and its link is the default)");
  c.add_option("--single", a.single, "single-device epoch seconds, e.g. small=0.0361,medium=0.118");
  c.add_option("--samples", a.samples, "training samples (default 32768, or the --from runs')");
  c.add_option("--batch-size", a.batch_size, "global batch (default 1024, or the --from runs')");
  c.add_option("--models", a.models, "only these models, e.g. medium,large");
  c.add_option("--modes", a.modes, "of naive, interleaved, bucketed")->capture_default_str();
  c.add_option("--world-sizes", a.world_sizes, "K values (default 1,2,4,...,256; 15.9.1's too; --recommend-cap: 2)");
  c.add_option("--bucket-cap-mb", a.bucket_cap_mb, "bucketed: cap in MiB")->capture_default_str();
  c.add_option("--first-bucket-mb", a.first_bucket_mb, "bucketed: first bucket's cap in MiB")->capture_default_str();
  c.add_flag("--fused", a.fused, "naive: one all-reduce over the whole buffer");
  c.add_option("--link", a.link, link_preset_names(" | ") + " | ALPHA_US:GBPS");
  c.add_option("--link-from", a.link_from, "fit α and β to bench_allreduce --benchmark_format=json output");
  c.add_option("--link-from-algo", a.link_from_algo, "which rows of it to fit: native | ring | star | nccl")->capture_default_str();
  c.add_option("--fit-comm", a.fit_comm, "fit α, β and the per-call overhead to measured naive comm seconds per epoch, e.g. small:2=0.0284,small:4=0.0307");
  c.add_option("--fit-step", a.fit_step, "with --fit-comm: naive epoch seconds at the same MODEL:K, e.g. small:2=0.0602; their compute fits the per-step cost that does not shrink with K");
  c.add_option("--link-dilation", a.link_dilation, "F or auto:TFLOPS, as the trainers")->capture_default_str();
  c.add_option("--algo", a.algo, "all-reduce model: native (as ring) | ring | star | hier")->capture_default_str();
  c.add_option("--gpus-per-node", a.gpus_per_node, "--algo hier: ranks per node")->capture_default_str();
  c.add_option("--validate", a.validate, "results file: each measured DP point beside its prediction");
  c.add_flag("--recommend", a.recommend, "per model and K: the mode and cap, and whether 2-byte gradients and accumulation pay, with the predicted gain of each");
  c.add_flag("--recommend-cap", a.recommend_cap, "exposed comm per bucket cap 0.25-128 MiB, the best cap and how flat");
  c.add_option("--calibrate", a.calibrate, "results file: fit this machine's terms (contention, per-call overhead, cores) from its single runs and its DP runs at one K");
  c.add_option("--fit-modes", a.fit_modes, "--calibrate: fit from these modes' runs only, e.g. naive,interleaved (default: all at the fit K)");
  c.add_option("--cores", a.cores, "CPUs ranks share (oversubscription above them; 0: not modelled; default: --calibrate's machine)");
  c.add_option("--validate-caps", a.validate_caps, "results file of a bucket-cap sweep: the recommended cap's measured time against the best measured cap, per cell");
  c.add_option("--format", a.format, "md | csv | json")->capture_default_str();
}

PredictCommand::~PredictCommand() = default;

int PredictCommand::run() const {
  if (!a_->textbook.empty()) return run_textbook(*a_);
  return run_model(*a_, *cmd_);
}

std::unique_ptr<PredictCommand> add_predict_command(CLI::App& app) { return std::make_unique<PredictCommand>(app); }

}  // namespace dpscale::predict
