// config_checks.cpp — a config against the runs it expands to (config_checks.h).
#include "harness/sweep/config_checks.h"

#include <algorithm>

#include "contract/option_rules.h"

namespace dpscale {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool given(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// The modes of `c` that take option `t`, and the names of every mode that does.
bool taken(const SweepConfig& c, const TrainerOption& t) {
  return std::any_of(c.modes.begin(), c.modes.end(), [&](ModeRef m) { return t.accepted_by(m.id()); });
}
std::string takers(const TrainerOption& t) {
  std::vector<std::string> names;
  for (Mode m : t.modes) names.push_back(mode_name(m));
  return or_list(names);
}

// A run's trainer options, as its command line sets them (the options a trainer would parse).
TrainOptions options_of(const SweepRun& run) {
  TrainOptions o;
  o.mode = run.point.mode.id();
  const std::vector<std::string>& args = run.args;
  for (size_t i = 0; i < args.size(); ++i) {
    for (const TrainerOption& t : trainer_options()) {
      if (t.flag != args[i]) continue;
      const bool has_value = t.kind != ValueKind::switch_ && i + 1 < args.size();
      t.set(o, has_value ? args[i + 1] : "true");
      if (has_value) ++i;
      break;
    }
  }
  return o;
}

// The config keys behind the flags a trainer's complaint names ("--accum-steps 64 x
// --batch-size 1024 ..." -> 'accum_steps', 'options.batch_size').
std::string keys_named(const SweepConfig& c, const std::string& words) {
  std::vector<std::string> keys;
  for (const TrainerOption& t : trainer_options()) {
    if (words.find(t.flag + " ") == std::string::npos && words.find(t.flag + ":") == std::string::npos) continue;
    std::string key = t.config == ConfigUse::sweep ? t.key : "options." + t.key;
    for (const ConfigAxis& a : c.axes) {
      if (a.option == &t) key = t.axis;
    }
    keys.push_back("'" + key + "'");
  }
  return join(keys);
}

}  // namespace

void check_keys_taken(const SweepConfig& c, const std::vector<std::string>& top_keys_given, const std::string& source) {
  auto refuse = [&](const std::string& key, const std::string& why) {
    throw ConfigError(source + ": '" + key + "' " + why);
  };
  // A key at the value every run has anyway changes nothing (a template written for several
  // configs may carry "link": "none"); any other value no run would see is refused.
  const TrainOptions defaults;
  auto is_default = [&](const TrainerOption& t, const std::string& value) {
    TrainOptions o;
    t.set(o, t.kind == ValueKind::switch_ && value.empty() ? "true" : value);
    return t.get(o) == t.get(defaults);
  };
  for (const TrainerArg& a : c.options) {
    if (!taken(c, *a.option) && !is_default(*a.option, a.value)) {
      refuse("options." + a.option->key, "is taken by no mode of this config (only " + takers(*a.option) + " take it)");
    }
  }
  for (const ConfigAxis& a : c.axes) {
    const bool changes = std::any_of(a.values.begin(), a.values.end(), [&](const std::string& v) { return !is_default(*a.option, v); });
    if (!taken(c, *a.option) && changes) {
      refuse(a.option->axis, "sweeps an option no mode of this config takes (only " + takers(*a.option) + " take it)");
    }
  }
  // Top-level keys that set a data-parallel trainer's flag (the caps are an axis, above).
  const TrainerOption &link = option("link"), &dilation = option("link_dilation");
  if (given(top_keys_given, "link") && !is_default(link, c.link) && !taken(c, link)) {
    refuse("link", "is taken by no mode of this config (only " + takers(link) + " take it)");
  }
  if (given(top_keys_given, "link_dilation") && !is_default(dilation, c.link_dilation) && !taken(c, dilation)) {
    refuse("link_dilation", "is taken by no mode of this config (only " + takers(dilation) + " take it)");
  }
  const bool any_dp = std::any_of(c.modes.begin(), c.modes.end(), [](ModeRef m) { return m->data_parallel; });
  const bool sizes_change = std::any_of(c.world_sizes.begin(), c.world_sizes.end(), [](int k) { return k != 1; });
  if (given(top_keys_given, "world_sizes") && sizes_change && !any_dp) {
    refuse("world_sizes", "sizes data-parallel runs, but no mode is data-parallel");
  }
}

void check_every_run(const SweepConfig& c, const std::string& source) {
  for (const SweepRun& run : expand(c, 1)) {
    const TrainOptions o = options_of(run);
    try {
      check_model_options(o);
      if (run.point.mode->data_parallel) check_option_rules(o, run.point.world_size);
      // The samples as the options tell them; a file's own count is the trainer's to check.
      if (const std::optional<int64_t> n = samples_from_options(o)) check_data_rules(o, *n);
    } catch (const InputError& e) {
      const std::string words = e.what();
      throw ConfigError(source + ": " + keys_named(c, words) + ": the run " + run.point.describe() + " would be refused: " + words);
    }
  }
}

}  // namespace dpscale
