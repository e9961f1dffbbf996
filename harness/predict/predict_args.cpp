// predict_args.cpp — `dpscale predict`'s options (predict_args.h), each with its kind and its
// check from harness/common/cli_values.h, as every other subcommand's.
#include "predict_args.h"

#include <cstdint>
#include <functional>
#include <sstream>

#include "calibration.h"
#include "comm_fit.h"
#include "comm_time.h"
#include "contract/link_model.h"
#include "contract/option_values.h"
#include "contract/trainer_options.h"
#include "core/errors.h"
#include "harness/common/cli_values.h"
#include "models/model_spec.h"
#include "step_sim.h"

namespace dpscale::predict {

namespace {

const Bound kAboveZero{0.0, false};

// A link spec (a preset, ALPHA_US:GBPS, two tiers) that names a link: not "none".
std::function<void(const std::string&)> a_link(const std::string& flag) {
  return [flag](const std::string& text) {
    if (!parse_link(text).enabled()) throw OptionError(flag, "must name a link (got 'none')");
  };
}

// The trainers' own check of a cap (contract/trainer_options.h), so the words are theirs.
std::function<void(const std::string&)> a_cap(const char* key) {
  return [key](const std::string& text) {
    TrainOptions o;
    option(key).set(o, text);
  };
}

std::vector<std::string> items_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// A comma-separated list given as one value: checked whole as the command line is parsed (an
// empty list, an empty item or a trailing comma is refused, never read as "the default"), each
// item by `check_item`, then split into `out`.
template <class T>
CLI::Option* list_option(CLI::App& c, const std::string& flag, std::vector<T>& out, const std::string& help,
                         const std::string& kind, std::function<T(const std::string&)> parse_item) {
  CLI::Option* o = c.add_option_function<std::string>(
      flag,
      [&out, parse_item](const std::string& v) {
        out.clear();
        for (const std::string& item : items_of(v)) out.push_back(parse_item(item));
      },
      help);
  return text_of(o, kind, [parse_item](const std::string& v) {
    if (v.empty() || v.back() == ',') throw ValueError("must be a comma-separated list (got '" + v + "')");
    for (const std::string& item : items_of(v)) {
      if (item.empty()) throw ValueError("has an empty item (got '" + v + "')");
      parse_item(item);
    }
  });
}

// "naive, interleaved, bucketed": the data-parallel modes of the mode table.
std::string dp_mode_names(const char* sep) {
  std::string out;
  for (Mode m : data_parallel_modes()) out += (out.empty() ? "" : sep) + std::string(mode_name(m));
  return out;
}

std::string a_mode(const std::string& m) { return mode_name(parse_dp_mode(m)); }

}  // namespace

void add_predict_options(CLI::App& c, PredictArgs& a) {
  // The textbook's listings. --params and --bytes-per-param are inputs of both.
  one_of(c.add_option("--textbook", a.textbook, "print the book's table: 15.9.1 or 15.2.1 (inputs below, the book's by default)"),
         {"15.9.1", "15.2.1"});
  real_in(c.add_option_function<double>(
              "--params", [&a](double v) { a.book1591.params = a.book1521.params = v; }, "textbook: parameters P (1e9)"),
          kAboveZero, {kNoLimit});
  real_in(c.add_option_function<double>(
              "--bytes-per-param", [&a](double v) { a.book1591.bytes_per_param = a.book1521.bytes_per_param = v; },
              "textbook: gradient bytes per parameter (2)"),
          kAboveZero, {64});
  real_in(c.add_option("--global-batch", a.book1591.global_batch, "15.9.1: global batch (8192)"), kAboveZero, {kNoLimit});
  real_in(c.add_option("--flops-per-example", a.book1591.flops_per_example, "15.9.1: fwd+bwd FLOPs per example (6 x params)"),
          kAboveZero, {kNoLimit});
  real_in(c.add_option("--device-tflops", a.book1591.device_tflops, "15.9.1: sustained TFLOP/s per device (60)"), kAboveZero,
          {kNoLimit});
  real_in(c.add_option("--net-gbps", a.book1591.net_gbps, "15.9.1: link bandwidth, GB/s (25)"), kAboveZero, {kNoLimit});
  real_in(c.add_option("--loader-samples-per-s", a.book1591.loader_samples_per_s,
                       "15.9.1: input pipeline examples/s per worker (12000)"),
          kAboveZero, {kNoLimit});
  whole_in(c.add_option("--world-size", a.book1521.world_size, "15.2.1: GPUs K (8)"), 2, 1 << 20);
  real_in(c.add_option("--compute-ms", a.book1521.compute_ms, "15.2.1: compute per step, ms (250)"), kAboveZero, {kNoLimit});
  text_of(c.add_option("--intra-link", a.intra_link, "15.2.1 and --algo hier: link inside a node, ALPHA_US:GBPS or preset (1:300)"),
          "LINK", a_link("--intra-link"));
  text_of(c.add_option_function<std::string>(
              "--inter-link",
              [&a](const std::string& v) {
                const LinkModel l = parse_link(v);
                a.book1521.inter_alpha_us = l.alpha_us, a.book1521.inter_gbps = l.gbps;
              },
              "15.2.1: link between nodes (5:12.5)"),
          "LINK", a_link("--inter-link"));

  // The step model: the single-device epochs, and what to predict.
  input_file(c.add_option("--from", a.from, "results file: its single-device runs calibrate compute (and its link is the default)"));
  text_of(c.add_option("--single", a.single, "single-device epoch seconds of presets, e.g. small=0.0361,medium=0.118,gpt-tiny=0.5"), "MODEL=SECONDS,...",
          [](const std::string& text) { parse_single_arg(text, Workload{}); });
  whole_in(c.add_option("--samples", a.samples, "training samples (default 32768, or the --from runs')"), 1, INT64_MAX / 2);
  whole_in(c.add_option("--batch-size", a.batch_size, "global batch (default 1024, or the --from runs')"), 1, INT32_MAX);
  whole_in(c.add_option("--seq-len", a.seq_len,
                        "a transformer's tokens per sample (default: the --from runs'; --single: the context)"),
           1, 1 << 16);
  list_option<std::string>(c, "--models", a.models, "only these models, e.g. medium,large or gpt-tiny", "MODEL,...",
                           [](const std::string& m) {
                             parse_model_spec(m, 0);
                             return m;
                           });
  std::string defaults;
  for (Mode m : table_modes()) {
    a.modes.push_back(mode_name(m));
    defaults += (defaults.empty() ? "" : ",") + std::string(mode_name(m));
  }
  list_option<std::string>(c, "--modes", a.modes, "of " + dp_mode_names(", "), "MODE,...", a_mode)
      ->default_str(defaults);
  list_option<int>(c, "--world-sizes", a.world_sizes, "K values (default 1,2,4,...,256; 15.9.1's too; --recommend-cap: 2)",
                   "K,...", [](const std::string& k) { return static_cast<int>(parse_whole(k, 1, 1 << 20)); });
  text_of(c.add_option("--bucket-cap-mb", a.bucket_cap_mb, "bucketed: cap in MiB")->capture_default_str(),
          "NUMBER (as the trainers' --bucket-cap-mb)", a_cap("bucket_cap_mb"));
  text_of(c.add_option("--first-bucket-mb", a.first_bucket_mb, "bucketed: first bucket's cap in MiB")->capture_default_str(),
          "NUMBER (as the trainers' --first-bucket-mb)", a_cap("first_bucket_mb"));
  c.add_flag("--fused", a.fused, "naive: one all-reduce over the whole buffer");
  whole_in(c.add_option("--shard-stage", a.shard_stage, "sharded: 1, 2 or 3 (as the trainers' --shard-stage)")
               ->capture_default_str(),
           1, 3);
  whole_in(c.add_option("--prefetch-units", a.prefetch_units, "sharded stage 3: layers gathered ahead")->capture_default_str(),
           0, 1 << 20);

  // The link: given, fitted to bench_allreduce, fitted to naive comm times, or the --from file's.
  text_of(c.add_option("--link", a.link, link_preset_names(" | ") + " | ALPHA_US:GBPS"), "LINK", a_link("--link"));
  input_file(c.add_option("--link-from", a.link_from, "fit α and β to bench_allreduce --benchmark_format=json output"));
  one_of(c.add_option("--link-from-algo", a.link_from_algo, "which rows of it to fit: native | ring | star | nccl")
             ->capture_default_str(),
         {"native", "ring", "star", "nccl"});
  text_of(c.add_option("--fit-comm", a.fit_comm,
                       "fit α, β and the per-call overhead to measured naive comm seconds per epoch, e.g. "
                       "small:2=0.0284,small:4=0.0307"),
          "MODEL:K=SECONDS,...", [](const std::string& text) { parse_fit_comm(text, "--fit-comm"); });
  text_of(c.add_option("--fit-step", a.fit_step,
                       "with --fit-comm: naive epoch seconds at the same MODEL:K, e.g. small:2=0.0602; their compute "
                       "fits the per-step cost that does not shrink with K"),
          "MODEL:K=SECONDS,...", [](const std::string& text) { parse_fit_comm(text, "--fit-step"); });
  text_of(c.add_option("--link-dilation", a.link_dilation, "F or auto:TFLOPS, as the trainers")->capture_default_str(),
          "F|auto:TFLOPS", [](const std::string& text) { parse_dilation(text); });
  text_of(c.add_option("--algo", a.algo, "all-reduce model: native (as ring) | ring | star | hier")->capture_default_str(),
          "{native,ring,star,hier}", [](const std::string& text) { parse_algo_option(text); });
  whole_in(c.add_option("--gpus-per-node", a.gpus_per_node, "--algo hier: ranks per node")->capture_default_str(), 1, 1 << 16);

  // What to print.
  input_file(c.add_option("--validate", a.validate, "results file: each measured DP point beside its prediction"));
  c.add_flag("--recommend", a.recommend,
             "per model and K: the mode and cap, and whether 2-byte gradients and accumulation pay, with the predicted "
             "gain of each");
  c.add_flag("--recommend-cap", a.recommend_cap, "exposed comm per bucket cap 0.25-128 MiB, the best cap and how flat");
  input_file(c.add_option("--calibrate", a.calibrate,
                          "results file: fit this machine's terms (contention, per-call overhead, cores) from its single "
                          "runs and its DP runs at one K"));
  list_option<std::string>(c, "--fit-modes", a.fit_modes,
                           "--calibrate: fit from these modes' runs only, e.g. naive,interleaved (default: all at the fit K)",
                           "MODE,...", a_mode);
  whole_in(c.add_option("--cores", a.cores,
                        "CPUs ranks share (oversubscription above them; 0: not modelled; default: --calibrate's machine)"),
           0, 1 << 20);
  input_file(c.add_option("--validate-caps", a.validate_caps,
                          "results file of a bucket-cap sweep: the recommended cap's measured time against the best "
                          "measured cap, per cell"));
  one_of(c.add_option("--format", a.format, "md | csv | json")->capture_default_str(), {"md", "csv", "json"});
}

}  // namespace dpscale::predict
