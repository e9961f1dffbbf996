// config.h — a sweep definition (configs/*.json) and its expansion into runs.
//
// A config names models, modes, world sizes, bucket caps, the link and the base trainer options:
//
//   { "name": "workshop", "models": ["small", "medium"], "modes": ["single", "naive", "bucketed"],
//     "world_sizes": [2, 4], "bucket_caps_mb": [25], "link": "none",
//     "options": { "samples": 32768, "batch_size": 1024, "lr": 0.01, "epochs": 5 } }
//
// Expansion, in the workshop's table order: per model, `single` at K = 1, then for each world size
// each data-parallel mode, `bucketed` once per bucket cap. Unknown keys and bad values are
// rejected with the key's name (ConfigError -> exit 2), before anything runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/errors.h"

namespace dpscale {

// A bad config: the message names the file and the key.
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

// One trainer option from the config's "options" object, already rendered as flag + value.
struct TrainerArg {
  std::string key;    // config key, e.g. "batch_size"
  std::string flag;   // trainer flag, e.g. "--batch-size"
  std::string value;  // "" for a boolean flag that is on
  std::string scope;  // "all" | "dp" | "naive" | "bucketed": which executables accept it
};

struct SweepConfig {
  std::string name;                        // "name" key, else the file's stem
  std::string description;
  std::vector<std::string> models;         // presets or widths "784,256,10"
  std::vector<std::string> modes;          // single | naive | interleaved | bucketed
  std::vector<int> world_sizes;            // data-parallel K values
  std::vector<double> bucket_caps_mb;      // bucketed only
  std::string link = "none";               // --link of the DP trainers
  std::string link_dilation = "1";         // --link-dilation
  std::string backend = "auto";            // --backend
  double timeout_s = 1800.0;               // per run
  int repeats = 1;
  std::vector<TrainerArg> options;         // base options, in the config's order
};

// One run of the sweep: what `point` in the sweep line records, plus the trainer arguments.
struct SweepPoint {
  std::string model;
  std::string mode;
  int world_size = 1;
  std::optional<double> bucket_cap_mb;     // bucketed only
  std::string link = "none";               // "none" for single (it has no link)
  int repeat = 0;                          // 0-based

  // "<config>/<model>-<mode>-k<K>[-cap<C>][-<link>]-r<repeat>": unique in a sweep, the --resume key.
  std::string run_id(const std::string& config_name) const;
  // "large bucketed K=2 cap 4 MB pcie4" for progress lines.
  std::string describe() const;
};

// Parses and validates. `source` names the file in messages. Throws ConfigError.
SweepConfig parse_config(const std::string& text, const std::string& source);
SweepConfig load_config(const std::string& path);

// Every run, repeats as whole rounds (round 0 of every point first, then round 1, ...): a noisy
// stretch of time then spreads over all points instead of hitting one point's repeats.
std::vector<SweepPoint> expand(const SweepConfig& c, int repeats);

// The trainer arguments for one point (everything after the executable): --model, the base
// options this executable accepts, --backend, link options for DP modes, --bucket-cap-mb.
std::vector<std::string> trainer_args(const SweepConfig& c, const SweepPoint& p);

// "train_single_gpu" | "train_dp_naive" | "train_dp_interleaved" | "train_ddp_bucketed".
std::string trainer_executable(const std::string& mode);

// Shortest text that reads back as the same double: 0.5 -> "0.5", 25 -> "25".
std::string format_number(double v);

}  // namespace dpscale
