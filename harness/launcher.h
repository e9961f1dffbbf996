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
#pragma once

#include <string>
#include <vector>

namespace dpscale {

struct LaunchOptions {
  std::string launcher = "mpirun";         // mpirun | none
  std::string mpirun = "mpirun";           // the executable (PATH lookup)
  std::vector<std::string> mpirun_args;    // extra arguments, before -np
  std::string hostfile;                    // --hostfile FILE when set
  std::string bind_to = "none";            // --bind-to value for Open MPI
  bool open_mpi = true;                    // the flavour decides which flags exist
  bool as_root = false;
};

// The full argv of one run: launcher (when used), then `exe_path`, then `args`.
std::vector<std::string> launch_argv(const LaunchOptions& l, const std::string& exe_path, const std::string& mode,
                                     int world_size, const std::vector<std::string>& args);

// `mpirun --version`'s first line ("mpirun (Open MPI) 4.1.4"), or "" when it cannot run.
std::string mpi_version_line(const std::string& mpirun);

// The directory of the running executable (/proc/self/exe): where the trainers are built too.
std::string self_dir();

}  // namespace dpscale
