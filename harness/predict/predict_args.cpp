// predict_args.cpp — `dpscale predict`'s options (predict_args.h).
#include "predict_args.h"

#include <cstdint>

#include "calibration.h"
#include "comm_fit.h"
#include "comm_time.h"
#include "contract/cli_checks.h"
#include "contract/link_model.h"
#include "step_sim.h"

namespace dpscale::predict {

namespace {

// A real number above 0 (the textbook's inputs), up to `hi`.
CLI::Validator positive(double hi = kNoLimit) {
  return real_in({0.0, false}, {hi}, hi == kNoLimit ? "above 0" : "above 0 up to " + format_number(hi));
}

// A link spec (a preset, ALPHA_US:GBPS, two tiers) that names a link: not "none".
CLI::Validator a_link() {
  return checked_by(
      [](const std::string& text) {
        if (!parse_link(text).enabled()) throw OptionError("--link", "must name a link (got 'none')");
      },
      "LINK");
}

// The trainers' own check of a cap (contract/trainer_options.h), so the words are theirs.
CLI::Validator a_cap(const char* key) {
  return checked_by(
      [key](const std::string& text) {
        TrainOptions o;
        option(key).set(o, text);
      },
      "MIB");
}

// "naive, interleaved, bucketed": the data-parallel modes of the mode table.
std::string dp_mode_names() {
  std::string out;
  for (Mode m : data_parallel_modes()) out += (out.empty() ? "" : ", ") + std::string(mode_name(m));
  return out;
}

}  // namespace

void add_predict_options(CLI::App& c, PredictArgs& a) {
  // The textbook's listings. --params and --bytes-per-param are inputs of both.
  c.add_option("--textbook", a.textbook, "print the book's table: 15.9.1 or 15.2.1 (inputs below, the book's by default)")
      ->check(CLI::IsMember({"15.9.1", "15.2.1"}));
  c.add_option_function<double>(
       "--params", [&a](double v) { a.book1591.params = a.book1521.params = v; }, "textbook: parameters P (1e9)")
      ->check(positive());
  c.add_option_function<double>(
       "--bytes-per-param", [&a](double v) { a.book1591.bytes_per_param = a.book1521.bytes_per_param = v; },
       "textbook: gradient bytes per parameter (2)")
      ->check(positive(64));
  c.add_option("--global-batch", a.book1591.global_batch, "15.9.1: global batch (8192)")->check(positive());
  c.add_option("--flops-per-example", a.book1591.flops_per_example, "15.9.1: fwd+bwd FLOPs per example (6 x params)")
      ->check(positive());
  c.add_option("--device-tflops", a.book1591.device_tflops, "15.9.1: sustained TFLOP/s per device (60)")->check(positive());
  c.add_option("--net-gbps", a.book1591.net_gbps, "15.9.1: link bandwidth, GB/s (25)")->check(positive());
  c.add_option("--loader-samples-per-s", a.book1591.loader_samples_per_s,
               "15.9.1: input pipeline examples/s per worker (12000)")
      ->check(positive());
  c.add_option("--world-size", a.book1521.world_size, "15.2.1: GPUs K (8)")->check(whole_in(2, 1 << 20));
  c.add_option("--compute-ms", a.book1521.compute_ms, "15.2.1: compute per step, ms (250)")->check(positive());
  c.add_option("--intra-link", a.intra_link, "15.2.1 and --algo hier: link inside a node, ALPHA_US:GBPS or preset (1:300)")
      ->check(a_link());
  c.add_option_function<std::string>(
       "--inter-link",
       [&a](const std::string& v) {
         const LinkModel l = parse_link(v);
         a.book1521.inter_alpha_us = l.alpha_us, a.book1521.inter_gbps = l.gbps;
       },
       "15.2.1: link between nodes (5:12.5)")
      ->check(a_link());

  // The step model: the single-device epochs, and what to predict.
  c.add_option("--from", a.from, "results file: its single-device runs calibrate compute (and its link is the default)");
  c.add_option("--single", a.single, "single-device epoch seconds, e.g. small=0.0361,medium=0.118")
      ->check(checked_by([](const std::string& text) { parse_single_arg(text, Workload{}); }, "MODEL=SECONDS,..."));
  c.add_option("--samples", a.samples, "training samples (default 32768, or the --from runs')")
      ->check(whole_in(1, INT64_MAX / 2));
  c.add_option("--batch-size", a.batch_size, "global batch (default 1024, or the --from runs')")->check(whole_in(1, INT32_MAX));
  c.add_option("--models", a.models, "only these models, e.g. medium,large")->delimiter(',');
  for (Mode m : data_parallel_modes()) a.modes.push_back(mode_name(m));
  c.add_option("--modes", a.modes, "of " + dp_mode_names())
      ->delimiter(',')
      ->check(checked_by([](const std::string& m) { parse_dp_mode(m); }, "MODE"))
      ->capture_default_str();
  c.add_option("--world-sizes", a.world_sizes, "K values (default 1,2,4,...,256; 15.9.1's too; --recommend-cap: 2)")
      ->delimiter(',')
      ->check(whole_in(1, 1 << 20));
  c.add_option("--bucket-cap-mb", a.bucket_cap_mb, "bucketed: cap in MiB")->check(a_cap("bucket_cap_mb"))->capture_default_str();
  c.add_option("--first-bucket-mb", a.first_bucket_mb, "bucketed: first bucket's cap in MiB")
      ->check(a_cap("first_bucket_mb"))
      ->capture_default_str();
  c.add_flag("--fused", a.fused, "naive: one all-reduce over the whole buffer");

  // The link: given, fitted to bench_allreduce, fitted to naive comm times, or the --from file's.
  c.add_option("--link", a.link, link_preset_names(" | ") + " | ALPHA_US:GBPS")->check(a_link());
  c.add_option("--link-from", a.link_from, "fit α and β to bench_allreduce --benchmark_format=json output");
  c.add_option("--link-from-algo", a.link_from_algo, "which rows of it to fit: native | ring | star | nccl")
      ->capture_default_str();
  c.add_option("--fit-comm", a.fit_comm,
               "fit α, β and the per-call overhead to measured naive comm seconds per epoch, e.g. small:2=0.0284,small:4=0.0307")
      ->check(checked_by([](const std::string& text) { parse_fit_comm(text); }, "MODEL:K=SECONDS,..."));
  c.add_option("--fit-step", a.fit_step,
               "with --fit-comm: naive epoch seconds at the same MODEL:K, e.g. small:2=0.0602; their compute fits the "
               "per-step cost that does not shrink with K")
      ->check(checked_by([](const std::string& text) { parse_fit_comm(text); }, "MODEL:K=SECONDS,..."));
  c.add_option("--link-dilation", a.link_dilation, "F or auto:TFLOPS, as the trainers")
      ->check(checked_by([](const std::string& text) { parse_dilation(text); }, "F|auto:TFLOPS"))
      ->capture_default_str();
  c.add_option("--algo", a.algo, "all-reduce model: native (as ring) | ring | star | hier")
      ->check(checked_by([](const std::string& text) { parse_algo_option(text); }, "ALGO"))
      ->capture_default_str();
  c.add_option("--gpus-per-node", a.gpus_per_node, "--algo hier: ranks per node")->check(whole_in(1, 1 << 16))->capture_default_str();

  // What to print.
  c.add_option("--validate", a.validate, "results file: each measured DP point beside its prediction");
  c.add_flag("--recommend", a.recommend,
             "per model and K: the mode and cap, and whether 2-byte gradients and accumulation pay, with the predicted "
             "gain of each");
  c.add_flag("--recommend-cap", a.recommend_cap, "exposed comm per bucket cap 0.25-128 MiB, the best cap and how flat");
  c.add_option("--calibrate", a.calibrate,
               "results file: fit this machine's terms (contention, per-call overhead, cores) from its single runs and "
               "its DP runs at one K");
  c.add_option("--fit-modes", a.fit_modes,
               "--calibrate: fit from these modes' runs only, e.g. naive,interleaved (default: all at the fit K)")
      ->delimiter(',')
      ->check(checked_by([](const std::string& m) { parse_dp_mode(m); }, "MODE"));
  c.add_option("--cores", a.cores,
               "CPUs ranks share (oversubscription above them; 0: not modelled; default: --calibrate's machine)")
      ->check(whole_in(0, 1 << 20));
  c.add_option("--validate-caps", a.validate_caps,
               "results file of a bucket-cap sweep: the recommended cap's measured time against the best measured cap, "
               "per cell");
  c.add_option("--format", a.format, "md | csv | json")->check(CLI::IsMember({"md", "csv", "json"}))->capture_default_str();
}

}  // namespace dpscale::predict
