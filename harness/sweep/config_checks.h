// config_checks.h — the checks of a parsed sweep config as a whole, before anything runs: every
// key it sets is taken by some mode it runs (a key no run would see is refused, not ignored,
// unless it holds the value every run has anyway),
// and every run it expands to is one the trainer would take (the option rules between options
// and the data rules between the batch, --accum-steps and the samples: contract/option_rules.h,
// the trainers' own functions, so the words are theirs).
#pragma once

#include <string>
#include <vector>

#include "harness/sweep/config.h"

namespace dpscale {

// Throws ConfigError naming the key. `top_keys_given` are the config's own top-level keys, as
// written (world_sizes, bucket_caps_mb, link, ... and the axes' lists).
void check_keys_taken(const SweepConfig& c, const std::vector<std::string>& top_keys_given, const std::string& source);

// Throws ConfigError naming the config keys behind the trainer's complaint and the run.
void check_every_run(const SweepConfig& c, const std::string& source);

}  // namespace dpscale
