// launcher.h — the argument vector that starts one run.
//
// Single runs start the trainer directly (it needs no MPI). Data-parallel runs go through
// `mpirun -np K` unless the launcher is `none`. For Open MPI the harness adds what a root user
// and an oversubscribed node need:
//   --allow-run-as-root   only when running as root (Open MPI refuses root without it)
//   --oversubscribe       K ranks may exceed the cores of a laptop or CI machine
//   --bind-to none        each rank also runs a comm thread; pinned to one core it would fight
//                         its own rank for it (measured: see configs/README.md)
// Each is left out when --mpirun-args already says something about it. Other MPIs get only -np.
// A placement (N nodes x R ranks per node) adds `--npernode R`: with -np K, mpirun fills K/R hosts
// of the hostfile with R ranks each.
//
// Under Slurm (`srun`), every run is a job step of the allocation the sweep runs in:
//   srun --mpi=pmix --kill-on-bad-exit=1 [-N N --ntasks-per-node R] -n K [--srun-args] TRAINER ...
// with SLURM_PMIX_FENCE=ring in the steps' environment unless the user set it (Slurm's tree
// barrier let peers leave MPI_Init while a rank was still in the modex: docs/cluster.md).
// PMIx: Debian's Open MPI starts its ranks from Slurm's mpi/pmix plugin, no mpirun (measured on
// the emulated cluster, scripts/emulated-slurm.sh); single runs are one-task steps (--mpi=none),
// so they too run on an allocated node. --kill-on-bad-exit: one rank's failure ends the step.
#pragma once

#include <string>
#include <vector>

#include "contract/modes.h"

namespace dpscale {

struct LaunchOptions {
  std::string launcher = "mpirun";         // mpirun | srun | none ("" until resolve_launcher)
  std::string mpirun = "mpirun";           // the executable (PATH lookup)
  std::vector<std::string> mpirun_args;    // extra arguments, before -np
  std::string hostfile;                    // --hostfile FILE when set
  std::string bind_to = "none";            // --bind-to value for Open MPI
  std::string srun = "srun";               // the executable (PATH lookup)
  std::vector<std::string> srun_args;      // extra srun arguments (--gpus-per-task=1, ...)
  bool open_mpi = true;                    // the flavour decides which flags exist
  bool as_root = false;
};

// The full argv of one run: launcher (when used), then `exe_path`, then `args`. nodes > 0 asks for
// that placement (nodes x ranks_per_node = world_size).
std::vector<std::string> launch_argv(const LaunchOptions& l, const std::string& exe_path, ModeRef mode,
                                     int world_size, const std::vector<std::string>& args, int nodes = 0,
                                     int ranks_per_node = 0);

// "" becomes srun inside a Slurm allocation (SLURM_JOB_ID set), mpirun outside; an explicit srun
// outside an allocation is refused (InputError: there is nothing for a job step to run in).
void resolve_launcher(LaunchOptions& l);

// `mpirun --version`'s first line ("mpirun (Open MPI) 4.1.4"), or "" when it cannot run.
std::string mpi_version_line(const std::string& mpirun);

// The directory of the running executable (/proc/self/exe): where the trainers are built too.
std::string self_dir();

}  // namespace dpscale
