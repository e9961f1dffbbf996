// point.h — a run's point: what makes runs one measurement, with its key, its names and its JSON.
//
// A point is the model, the mode, the world size, the placement asked for, and the value of every
// trainer option that changes the measurement (TrainerOption::measured; the bucket cap and the
// link among them, as ordinary options). The settings are derived, never listed: an option added
// to the table with the flag set is in every point at once. They are read from the flags a run
// was given (a sweep line's `run.argv`), so a run that did not get an option (or whose mode does
// not take it) has its default there, and older results files keep matching newer ones on every
// option they did not vary.
//
// One type from a config to a chart: the sweep expands a config into points, the results file
// reads them back, the report, compare and the regression gate key on them, and the plotter reads
// them as JSON through the schema below (docs/RESULTS_FORMAT.md, "The point").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/modes.h"
#include "contract/record.h"

namespace dpscale {

// (option key, value as the option renders it), in the option table's order.
using Settings = std::vector<std::pair<std::string, std::string>>;

// Every option of a point's settings (measured, and not the model) at its default.
Settings default_settings();

// From a trainer's arguments (what follows the executable). A value the trainer would refuse
// keeps the option's default: that run failed and its line says why.
Settings settings_of_args(const std::vector<std::string>& args);

// From a whole command line (`mpirun ... train_dp_naive --model ...`): the arguments after the
// first word naming a trainer executable; none found, the defaults.
Settings settings_of_argv(const std::vector<std::string>& argv);

struct Point {
  std::string model;  // the config's text: a preset or widths (model_key in models/mlp_spec.h)
  ModeRef mode;       // a row of the mode table (contract/modes.h)
  int world_size = 1;
  // The placement asked for: nodes x ranks per node (both 0: none asked, the launcher's own).
  int nodes = 0;
  int ranks_per_node = 0;
  // Every measured option, in the table's order; an option the mode does not take at its default.
  Settings settings = default_settings();

  // A run of `mode` given these trainer arguments (trainer_args of the sweep, or a line's argv
  // with the launcher's words in front). Options the mode does not take keep their defaults.
  static Point of_args(std::string model, ModeRef mode, int world_size, const std::vector<std::string>& args,
                       int nodes = 0, int ranks_per_node = 0);
  // A bare trainer record (no sweep line around it, so no argv): its model, mode and world size,
  // and every setting the record holds a field of the option's key for (bucket_cap_mb, link,
  // grad_comm, accum_steps, bucket_rule, allreduce, tf32, ...); an option the record does not
  // name keeps its default.
  static Point of_record(const RunRecord& r);

  // The point object (JSON in). `argv`: the run's command line, whose flags are the settings
  // where the object carries none (a sweep line's point). Also reads the point of older sweep
  // lines, whose cap and link stood beside the model ("bucket_cap_mb", "link"). Throws
  // std::runtime_error naming the field that is wrong.
  static Point from_json(const nlohmann::json& j, const std::vector<std::string>& argv = {});
  // The point object (JSON out): {"model", "mode", "world_size", "nodes" and "ranks_per_node"
  // when placed, "settings": the options its mode takes}. Without settings: a sweep line's point,
  // whose settings are its `run.argv`.
  nlohmann::ordered_json to_json(bool with_settings = true) const;

  // The key: equal points are repeats of one measurement. Ordered by model, mode, world size,
  // placement, then settings (numbers as numbers).
  bool operator==(const Point&) const = default;
  bool operator<(const Point& o) const;

  // Value of option `key` ("" for a key that is not a setting).
  const std::string& setting(std::string_view key) const;
  // Whether the point's mode takes option `key` (a single run has no link to show).
  bool takes(std::string_view key) const;
  std::optional<double> bucket_cap_mb() const;  // where the mode takes a cap
  const std::string& link() const;              // "none" where the mode takes no link
  std::string placement() const;                // "2x2", or "" when none was asked for

  // The point of a run of `mode` at `world_size` beside this one (the single run a speedup is
  // measured against, naive at the same K): options that mode does not take at their default,
  // the placement kept for K > 1.
  Point beside(ModeRef mode, int world_size) const;
  // The point with option `key` at its default: the cell a sweep of that option varies within
  // (predict's cap check: one cell, its caps).
  Point with_default(std::string_view key) const;

  // The scaling curve the point is on, the family the gate's Holm correction runs over and bisect
  // follows: "small bucketed pcie4" (model, mode and link; every K, cap and other setting of them
  // one family, so a sweep of caps raises one alarm's worth of false ones, not one per cap).
  std::string curve() const;
  // The points one more round of this point must run, in the order a round runs them: the single
  // run its speedups are measured against (beside(single, 1)), then the point; a single point
  // alone. Reruns of undecided points (`dpscale compare --rerun`, `dpscale ab`) run these.
  std::vector<Point> block() const;
  // The history store's key of the point (harness/history): its fields and every measured option
  // away from its default, as sorted JSON text, so an option added to the table later leaves the
  // key of older runs as it was (the cap and the link as fields of their own, as the first stores
  // wrote them).
  std::string history_key() const;

  // "large bucketed K=2 cap 4 MB pcie4 2x2 grad_comm=bf16": the cap and the link in words, then
  // the placement and every swept option (TrainerOption::axis) away from its default.
  std::string describe() const;
  // "<config>/<model>-<mode>-k<K>[-cap<C>][-<link>][-p<N>x<R>][-<key>=<value>...]-r<repeat>", one
  // -key=value per option the config sweeps (`swept`, table order): unique in a sweep, the key
  // --resume skips on.
  std::string run_id(const std::string& config, int repeat, const std::vector<std::string>& swept) const;
  // The trainer flags that give a run these settings: each option away from its default.
  std::vector<std::string> flags() const;
};

// The settings' keys whose values differ between the points whose modes take them (what a
// report shows as columns, a chart may put on an axis), in the option table's order.
std::vector<std::string> varying_settings(const std::vector<Point>& points);
// A point's value of setting `key` for a column: "—" where its mode does not take the option.
std::string setting_text(const Point& p, std::string_view key);

// The point object as a JSON Schema (draft 2020-12): `dpscale schema --format json`'s "point",
// the report JSON's "point_schema", which the plotter validates every point against.
nlohmann::ordered_json point_schema();
// "| field | type | meaning |", one row per field of the point object (docs/RESULTS_FORMAT.md).
std::string point_fields_markdown();

}  // namespace dpscale
