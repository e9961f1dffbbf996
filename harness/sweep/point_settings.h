// point_settings.h — what, besides model, mode, world size, bucket cap and link, makes a run a
// point of its own: the value of every option the option table flags as changing the
// measurement (TrainerOption::measured), read from the flags the run was given.
//
// The key is derived, never listed: an option added to the table with the flag set is in every
// point key at once. A run's flags are its sweep line's `run.argv` (older lines included), so
// an option a line's run did not get (or that its mode does not take) has its default there:
// older results files keep matching newer ones on every option they did not vary.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "contract/modes.h"
#include "contract/trainer_options.h"

namespace dpscale {

// (option key, value as the option renders it), in the option table's order.
using Settings = std::vector<std::pair<std::string, std::string>>;

// Whether `t` is in Settings: measured, and not held by the point's own fields (model, link,
// bucket cap).
bool in_settings(const TrainerOption& t);

// Every option of Settings at its default.
Settings default_settings();

// From a trainer's arguments (what follows the executable: trainer_args()).
Settings settings_of_args(const std::vector<std::string>& args);

// From a whole command line (`mpirun ... train_dp_naive --model ...`): the arguments after the
// first word naming a trainer executable; none found, the defaults.
Settings settings_of_argv(const std::vector<std::string>& argv);

// The settings a run of `mode` would have beside these: options it does not take at their
// default (the single run a data-parallel point is measured against).
Settings settings_for_mode(const Settings& s, Mode mode);

// Value of `key` ("" if absent).
std::string setting(const Settings& s, const std::string& key);

// "grad_comm=bf16 accum_steps=4": the values of swept options (TrainerOption::axis) that are
// not their default, for describing a point.
std::string describe_axes(const Settings& s);

}  // namespace dpscale
