// config.h — a sweep definition (configs/*.json) and its expansion into runs.
//
// A config names models, modes, world sizes, the link, the base trainer options and any option
// axes (a list under the option's axis key, TrainerOption::axis: "bucket_caps_mb",
// "accum_steps", "grad_comm", "bucket_rule", "allreduces", "tf32"; a single value is a list of
// one):
//
//   { "name": "workshop", "models": ["small", "medium"], "modes": ["single", "naive", "bucketed"],
//     "world_sizes": [2, 4], "bucket_caps_mb": [25], "link": "none",
//     "options": { "samples": 32768, "batch_size": 1024, "lr": 0.01, "epochs": 5 } }
//
// Expansion, in the workshop's table order: per model, `single` at K = 1, then for each world size
// each data-parallel mode, each once per combination of the axes' values (an axis's option only
// where the mode takes it: `bucketed` once per bucket cap). Unknown keys and bad values are
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
#include "harness/point/point.h"
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
  std::vector<ModeRef> modes;              // rows of the mode table (contract/modes.h)
  std::vector<int> world_sizes;            // data-parallel K values
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

// One run of the sweep: its point, its round, the options of the config's axes its mode takes
// (whose values name it), and the arguments its trainer gets, from which the point was read.
struct SweepRun {
  Point point;
  int repeat = 0;                   // 0-based
  std::vector<std::string> swept;   // option keys, table order
  std::vector<std::string> args;    // trainer_args(): everything after the executable

  // The --resume key (Point::run_id).
  std::string run_id(const std::string& config_name) const { return point.run_id(config_name, repeat, swept); }
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
std::vector<SweepRun> expand(const SweepConfig& c, int repeats);

// The trainer arguments of a run of `model` in `mode` taking these axis values (everything after
// the executable): --model, the base options the mode takes, --backend, the link options for
// the modes that take a link, the axes' flags.
std::vector<std::string> trainer_args(const SweepConfig& c, const std::string& model, ModeRef mode,
                                      const Settings& axes);

}  // namespace dpscale
