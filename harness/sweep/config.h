// config.h — a sweep definition (configs/*.json) and its expansion into runs.
//
// A config names models, modes, world sizes, bucket caps, the link, the base trainer options and
// any option axes (a list under the option's axis key, TrainerOption::axis: "accum_steps",
// "grad_comm", "bucket_rule", "allreduces", "tf32"; a single value is a list of one):
//
//   { "name": "workshop", "models": ["small", "medium"], "modes": ["single", "naive", "bucketed"],
//     "world_sizes": [2, 4], "bucket_caps_mb": [25], "link": "none",
//     "options": { "samples": 32768, "batch_size": 1024, "lr": 0.01, "epochs": 5 } }
//
// Expansion, in the workshop's table order: per model, `single` at K = 1, then for each world size
// each data-parallel mode, `bucketed` once per bucket cap, each once per combination of the axes'
// values (an axis's option only where the mode takes it). Unknown keys and bad values are
// rejected with the key's name (ConfigError -> exit 2), before anything runs. Every trainer value
// is checked by the trainers' own parser (contract/trainer_options.h), so a config the trainers
// would refuse is refused here, with their words.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "contract/trainer_options.h"
#include "harness/sweep/point_settings.h"
#include "core/errors.h"

namespace dpscale {

// A bad config: the message names the file and the key.
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

// One trainer option from the config's "options" object, its value checked.
struct TrainerArg {
  const TrainerOption* option;  // the table's entry: flag, and which executables accept it
  std::string value;            // "" for a switch that is on
};

// One option swept by the config: its values, each checked by the option's parser.
struct ConfigAxis {
  const TrainerOption* option;
  std::vector<std::string> values;  // as flag text; a switch: "true" | "false"
};

struct SweepConfig {
  std::string name;                        // "name" key, else the file's stem
  std::string description;
  std::vector<std::string> models;         // presets or widths "784,256,10"
  std::vector<std::string> modes;          // names from the mode table (contract/modes.h)
  std::vector<int> world_sizes;            // data-parallel K values
  std::vector<double> bucket_caps_mb;      // bucketed only
  // Placement axis (placement_axis.h): nodes N and/or ranks per node R; each data-parallel K
  // runs once per placement N x R = K. Both empty: the launcher places the ranks.
  std::vector<int> nodes;
  std::vector<int> ranks_per_node;
  std::string link = "none";               // --link of the DP trainers
  std::string link_dilation = "1";         // --link-dilation
  std::string backend = "auto";            // --backend
  double timeout_s = 1800.0;               // per run
  int repeats = 1;
  int nice = 0;                            // the sweep's scheduling priority (sweep.h)
  std::vector<TrainerArg> options;         // base options, in the config's order
  std::vector<ConfigAxis> axes;            // in the option table's order
};

// One run of the sweep: what `point` in the sweep line records, plus the trainer arguments.
struct SweepPoint {
  std::string model;
  std::string mode;
  int world_size = 1;
  std::optional<double> bucket_cap_mb;     // bucketed only
  std::string link = "none";               // "none" for single (it has no link)
  int repeat = 0;                          // 0-based
  // The placement asked for: nodes x ranks per node (both 0: none asked, the launcher's own).
  int nodes = 0;
  int ranks_per_node = 0;
  // The config's axis values this run takes (options its mode does not take are left out).
  Settings axes;
  // Every measured option's value (point_settings.h), from the run's flags: what the point
  // key compares besides the fields above.
  Settings settings = default_settings();

  // "2x2" (nodes x ranks per node), or "" when none was asked for.
  std::string placement() const;

  // "<config>/<model>-<mode>-k<K>[-cap<C>][-<link>][-p<N>x<R>][-<key>=<value>...]-r<repeat>": unique
  // in a sweep, the --resume key.
  std::string run_id(const std::string& config_name) const;
  // "large bucketed K=2 cap 4 MB pcie4 grad_comm=bf16" for progress lines.
  std::string describe() const;
};

// The largest world size a config may name: 1024, the workshop's global batch, the largest K at
// which each rank of a workshop run still gets an equal, non-empty shard (ci.json's batch of 4096
// could split further, but 1024 ranks is already past any machine this suite runs on); a
// K within it must also divide the batch (checked) and fit the machine (checked by the sweep:
// check_world_sizes in sweep_checks.h).
inline constexpr int kMaxWorldSize = 1024;

// The longest per-run timeout (config "timeout_s", --timeout): one week. A run longer than that is
// not a benchmark point; the bound also keeps the poll() wait of the process runner in range.
inline constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;
// --repeats and the config's "repeats".
inline constexpr int kMaxRepeats = 1000;

// Parses and validates. `source` names the file in messages. Throws ConfigError.
SweepConfig parse_config(const std::string& text, const std::string& source);
SweepConfig load_config(const std::string& path);

// 16 hex digits of FNV-1a over what decides how every point is run: the base trainer options,
// link, link dilation and backend. Each sweep line carries it (run.config_hash) and --resume
// refuses a file whose lines carry another: their numbers were measured differently. The lists
// of models, modes, world sizes and caps are left out on purpose: adding a world size and
// resuming is how a sweep is extended, and each point's identity is its run_id.
std::string config_hash(const SweepConfig& c);

// Every run, repeats as whole rounds (round 0 of every point first, then round 1, ...): a noisy
// stretch of time then spreads over all points instead of hitting one point's repeats.
std::vector<SweepPoint> expand(const SweepConfig& c, int repeats);

// The trainer arguments for one point (everything after the executable): --model, the base
// options this executable accepts, --backend, link options for DP modes, --bucket-cap-mb.
std::vector<std::string> trainer_args(const SweepConfig& c, const SweepPoint& p);

}  // namespace dpscale
