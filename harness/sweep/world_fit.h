// world_fit.h — does every world size of a sweep fit the machine it will run on?
//
// Without --hostfile, mpirun starts all K ranks of a point on this one machine (the sweep passes
// --oversubscribe, so Open MPI itself would start any number). Beyond kRanksPerCpu ranks per
// online CPU a rank gets under a quarter of a core, the timings measure the scheduler, and each
// rank still holds its own copy of the data and model: `world_sizes: [1000]` on a 2-core machine
// is a mistake, refused before anything runs. With --hostfile the hostfile's slots decide
// (capacity.h).
#pragma once

#include <vector>

#include "harness/sweep/config.h"
#include "harness/sweep/launcher.h"

namespace dpscale {

inline constexpr int kRanksPerCpu = 4;

// The most ranks one machine with `cpus` online CPUs takes: kRanksPerCpu per CPU.
int max_ranks_here(int cpus);

// Throws InputError naming the first point whose world size does not fit (only for mpirun
// launches without a hostfile; `--launcher none` starts one process per run).
void check_world_fit(const std::vector<SweepRun>& runs, const LaunchOptions& launch, int cpus);

// Online CPUs of this machine (sysconf), at least 1.
int online_cpus();

}  // namespace dpscale
