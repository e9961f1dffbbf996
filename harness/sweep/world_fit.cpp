// world_fit.cpp — the machine check of a sweep's world sizes (see world_fit.h).
#include "harness/sweep/world_fit.h"

#include <unistd.h>

#include <algorithm>

#include "contract/modes.h"
#include "core/errors.h"

namespace dpscale {

int max_ranks_here(int cpus) { return kRanksPerCpu * std::max(cpus, 1); }

int online_cpus() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void check_world_fit(const std::vector<SweepRun>& runs, const LaunchOptions& launch, int cpus) {
  if (launch.launcher != "mpirun" || !launch.hostfile.empty()) return;
  const int most = max_ranks_here(cpus);
  for (const SweepRun& run : runs) {
    const Point& p = run.point;
    if (!p.mode->data_parallel || p.world_size <= most) continue;
    throw InputError("world size " + std::to_string(p.world_size) + " needs " + std::to_string(p.world_size) +
                     " ranks on this machine, which has " + std::to_string(cpus) + " CPUs: at most " +
                     std::to_string(most) + " (" + std::to_string(kRanksPerCpu) +
                     " per CPU) without --hostfile; pass --max-world-size " + std::to_string(most) +
                     " to leave such points out, or --hostfile");
  }
}

}  // namespace dpscale
