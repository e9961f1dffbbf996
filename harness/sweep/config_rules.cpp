// config_rules.cpp — the option rules between options (contract/option_rules.h) on every run a
// config expands to: a combination a trainer would refuse is refused before anything runs,
// naming the config's keys for the flags the trainer's words name.
#include "contract/option_rules.h"
#include "harness/sweep/config_parser.h"

namespace dpscale::config {

namespace {

// The run's trainer options, as its trainer would parse its arguments.
TrainOptions options_of(const SweepRun& run) {
  TrainOptions o;
  o.mode = mode_named(run.point.mode).mode;
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

// The config keys behind the flags the trainer's words name: 'options.grad_comm', 'allreduces'.
std::vector<std::string> keys_named(const SweepConfig& c, const std::string& words) {
  std::vector<std::string> keys;
  for (const TrainerOption& t : trainer_options()) {
    if (words.find(t.flag + " ") == std::string::npos && words.find(t.flag + ":") == std::string::npos) continue;
    std::string key = t.config == ConfigUse::sweep ? t.key : "options." + t.key;
    for (const ConfigAxis& a : c.axes) {
      if (a.option == &t) key = t.axis;
    }
    keys.push_back("'" + key + "'");
  }
  return keys;
}

}  // namespace

void check_rules(const Parser& p, const SweepConfig& c) {
  for (const SweepRun& run : expand(c, 1)) {
    if (!mode_named(run.point.mode).data_parallel) continue;
    try {
      check_option_rules(options_of(run), run.point.world_size);
    } catch (const InputError& e) {
      const std::string words = e.what();
      throw ConfigError(p.src + ": " + join(keys_named(c, words)) + ": the run " + run.point.describe() +
                        " would be refused: " + words);
    }
  }
}

}  // namespace dpscale::config
