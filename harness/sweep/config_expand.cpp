// config_expand.cpp — a config's runs, in the workshop's table order (config.h), each with the
// trainer arguments it gets and the point read from them: the point is made here, once per run.
#include <algorithm>

#include "harness/sweep/config.h"
#include "harness/sweep/placement_axis.h"

namespace dpscale {

namespace {

// Every combination of the axes' values that `mode` takes (axes it does not take: left out, so
// a single run is not repeated once per all-reduce algorithm), in the axes' order.
std::vector<Settings> axis_combinations(const SweepConfig& c, Mode mode) {
  std::vector<Settings> out = {{}};
  for (const ConfigAxis& a : c.axes) {
    if (!a.option->accepted_by(mode)) continue;
    std::vector<Settings> next;
    for (const Settings& s : out) {
      for (const std::string& v : a.values) {
        Settings t = s;
        t.emplace_back(a.option->key, v);
        next.push_back(std::move(t));
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<SweepRun> expand(const SweepConfig& c, int repeats) {
  const bool has_single = std::any_of(c.modes.begin(), c.modes.end(), [](ModeRef m) { return !m->data_parallel; });
  std::vector<SweepRun> runs;
  auto add = [&](const std::string& model, ModeRef mode, int k, int repeat, const Placement& pl) {
    for (const Settings& axes : axis_combinations(c, mode.id())) {
      SweepRun run;
      run.args = trainer_args(c, model, mode, axes);
      run.point = Point::of_args(model, mode, k, run.args, pl.nodes, pl.ranks_per_node);
      run.repeat = repeat;
      for (const auto& [key, _] : axes) run.swept.push_back(key);
      runs.push_back(std::move(run));
    }
  };
  for (int r = 0; r < repeats; ++r) {
    for (const std::string& model : c.models) {
      if (has_single) add(model, Mode::single, 1, r, Placement{});
      for (int k : c.world_sizes) {
        for (ModeRef mode : c.modes) {
          if (!mode->data_parallel) continue;
          for (const Placement& pl : placements_for(c.nodes, c.ranks_per_node, k)) add(model, mode, k, r, pl);
        }
      }
    }
  }
  return runs;
}

}  // namespace dpscale
