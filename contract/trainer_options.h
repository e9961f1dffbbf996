// trainer_options.h — every option of the four trainers: the struct they travel in and the one
// table that defines them (flag, config key, help, which modes take it, its checked parser).
//
// The table is the only definition. The trainers build their CLI11 parser and --help from it;
// `dpscale sweep` checks a config's values with the same parsers (a config the trainers would
// refuse is refused before anything runs, in the trainers' own words) and renders the flags the
// launched trainer gets; the start-up fingerprint ranks compare is taken over it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/modes.h"
#include "models/data/dataset.h"
#include "models/device.h"

namespace dpscale {

struct TrainOptions {
  // What runs, and how it trains
  Mode mode = Mode::single;
  std::string model = "medium";
  int seq_len = 0;              // a transformer's tokens per sample (0 = its context)
  DataOptions data;
  int batch_size = 1024;        // global batch: split into K equal shards
  int accum_steps = 1;          // micro-batches per optimizer step (DDP's no_sync)
  int epochs = 5;
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
  std::string optimizer = "sgd";  // sgd | adamw (models/optimizer.h)
  int warmup_steps = 3;
  int64_t max_steps = 0;        // 0 = no limit
  uint64_t seed = 42;           // weights (and synthetic data)
  DeviceOptions device;
  std::string init_path, save_path;
  bool quiet = false;           // no per-epoch progress lines

  // How the gradients travel (data-parallel only)
  std::string link = "none";
  std::string link_dilation = "1";
  std::string allreduce = "native";
  std::string grad_comm = "fp32";  // the gradients' wire format: fp32 | bf16 | fp16
  bool fused = false;           // naive: one all-reduce of the whole flat buffer
  double bucket_cap_mb = 25.0;  // bucketed: MiB, as PyTorch's bucket_cap_mb
  double first_bucket_mb = 1.0;
  std::string bucket_rule = "strict";  // bucketed: strict (never above the cap) | ddp
  int shard_stage = 3;          // sharded: 1 optimizer state | 2 + gradients | 3 + parameters
  int prefetch_units = 1;       // sharded stage 3: layers gathered ahead of the one computing
  bool share_gpu = false;       // K ranks may share one GPU (CUDA): a correctness run, not a measurement

  // Reliability: a bad value or a lost rank ends the run with its reason
  int finite_check_every = 1;          // steps between gradient/parameter finite checks (0 = loss only)
  double collective_timeout_s = 300.0;  // a collective not done by then aborts the job

  // Why a run scaled as it did (trainers/diagnosis/: diagnosis.h, triad.h, trace.h; trainers/loader.h)
  std::string inject_delay;     // "RANK:MS" (contract/diagnosis_options.h); "" = none
  double loader_delay_ms = 0.0; // every rank waits this long for each batch (a starved loader)
  int prefetch = 0;             // batches fetched ahead, in the background, while a step runs
  int triad = 0;                // compute-only and comm-only steps after the epochs (0 = off)
  std::string trace_path;       // Chrome trace-event JSON, merged by rank 0; "" = none
  std::string trace_steps = "1:2";
};

// How a sweep config (configs/*.json) sets an option.
enum class ConfigUse {
  options,  // a key of the config's "options" object, e.g. "batch_size": 512
  sweep,    // by the sweep itself: a top-level key or axis (models, link, bucket_caps_mb, ...)
  never,    // not from configs (per-run paths such as --save)
};

// What a value looks like, for the config's JSON types and for CLI11 (switch = no value).
enum class ValueKind { whole, real, text, choice, switch_ };

struct TrainerOption {
  std::string key;      // "batch_size": the config key
  std::string flag;     // "--batch-size"
  std::string help;
  std::vector<Mode> modes;  // the executables that accept it
  ValueKind kind;
  ConfigUse config;
  bool shapes_run;      // in the fingerprint all ranks must share (paths and verbosity are not)
  // Changes the measurement: two runs that differ only in it are two points of a report, never
  // repeats of one (harness/point/point.h derives the point's settings from this flag).
  bool measured = true;
  // The config's top-level key that sweeps it as a list ("allreduces", "bucket_caps_mb"); ""
  // when none does.
  std::string axis;
  // The values a choice option takes ("auto", "cpu", "cuda"); empty for every other kind.
  std::vector<std::string> choices;
  // Parses and checks `value` (a switch gets "true"), storing it; throws OptionError naming the flag.
  std::function<void(TrainOptions&, const std::string&)> set;
  // The value as text (defaults in --help, the fingerprint).
  std::function<std::string(const TrainOptions&)> get;
  // For an option that names a file the trainer reads or writes: its check (contract/option_paths.h,
  // throwing ValueError), made as soon as the option is given, on the machine that gives it
  // (parse_options, a sweep config), never when a recorded argv is read back. Empty otherwise.
  std::function<void(const std::string&)> path_check;

  bool accepted_by(Mode m) const;
  // Throws OptionError naming the flag when `value`, this option's path, fails path_check (a
  // file to read that cannot be opened, a --trace that cannot be written, ...).
  void check_path(const std::string& value) const;
};

// In --help order.
const std::vector<TrainerOption>& trainer_options();
// nullptr for a key that is no option.
const TrainerOption* find_option(std::string_view key);
// The option with this key; std::logic_error if the table lacks it (a programming error).
const TrainerOption& option(std::string_view key);

// Parses argv for `mode`. Returns false after printing --help (exit 0); throws InputError with one
// line naming the bad option otherwise.
bool parse_options(int argc, char** argv, Mode mode, TrainOptions& out);

// A hash of every option that shapes the computation, for the start-up check that all ranks
// were launched alike.
uint64_t options_fingerprint(const TrainOptions& o);

}  // namespace dpscale
