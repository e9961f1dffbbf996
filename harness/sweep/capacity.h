// capacity.h — do a sweep's points fit the nodes they will run on? Checked before anything runs.
//
// Where the nodes come from: under srun, the Slurm allocation the sweep runs in (SLURM_JOB_NUM_NODES,
// SLURM_JOB_CPUS_PER_NODE: the CPUs a job step may use on each node); under mpirun with --hostfile,
// the hostfile (one node per distinct host, its slots=/max_slots= summed; a host that names no
// slots counts as unbounded, as --oversubscribe lets mpirun run any number there). A point that
// asks for N nodes x R ranks needs N nodes with R slots each; one with no placement needs K slots
// in all. Without --hostfile mpirun has this machine only: N > 1 is refused (and K is checked by
// world_fit.h). --launcher none starts one process per run, so it takes no placement.
// A refusal (InputError, exit 2) names the point and what is missing.
#pragma once

#include <string>
#include <vector>

#include "harness/sweep/config.h"
#include "harness/sweep/launcher.h"

namespace dpscale {

struct NodeCapacity {
  std::string where;           // "the allocation (job 12: dpnode[0-1])", "hostfile H"
  std::vector<int> slots;      // per node; kUnbounded where not stated
};
inline constexpr int kUnbounded = 1 << 30;

// From the hostfile's text: each line HOST [KEY=VALUE ...] with Open MPI's keys (slots=N,
// max_slots=N, ...), # comments. Throws InputError "PATH:LINE: ..." for a line that is not, and
// for a file that names no host: garbage is refused before anything runs, not found by mpirun.
NodeCapacity hostfile_capacity(const std::string& text, const std::string& path);
// From a Slurm job's environment values ("2", "4(x2)" or "4,2(x3)"). Throws InputError.
NodeCapacity slurm_capacity(const std::string& job_id, const std::string& nodelist, const std::string& num_nodes,
                            const std::string& cpus_per_node);

// Throws InputError naming the first point that does not fit `cap`.
void check_capacity(const std::vector<SweepPoint>& runs, const NodeCapacity& cap);

// The whole check for a sweep: reads the hostfile or the Slurm environment as the launcher needs.
void check_placements_fit(const std::vector<SweepPoint>& runs, const LaunchOptions& launch);

}  // namespace dpscale
