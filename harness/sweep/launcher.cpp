// launcher.cpp — launcher argv, MPI flavour, the executable's directory.
#include "harness/sweep/launcher.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "contract/modes.h"
#include "harness/common/subprocess.h"
#include "core/errors.h"

namespace dpscale {

namespace {
bool mentions(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a.rfind(flag, 0) == 0; });
}
}  // namespace

std::vector<std::string> launch_argv(const LaunchOptions& l, const std::string& exe_path, ModeRef mode,
                                     int world_size, const std::vector<std::string>& args, int nodes,
                                     int ranks_per_node) {
  std::vector<std::string> argv;
  const bool data_parallel = mode->data_parallel;
  if (l.launcher == "srun") {
    argv = {l.srun, data_parallel ? "--mpi=pmix" : "--mpi=none", "--kill-on-bad-exit=1"};
    if (nodes > 0) {
      argv.insert(argv.end(), {"-N", std::to_string(nodes), "--ntasks-per-node", std::to_string(ranks_per_node)});
    } else if (!data_parallel) {
      argv.insert(argv.end(), {"-N", "1"});
    }
    argv.insert(argv.end(), {"-n", std::to_string(data_parallel ? world_size : 1)});
    argv.insert(argv.end(), l.srun_args.begin(), l.srun_args.end());
  }
  if (data_parallel && l.launcher == "mpirun") {
    argv.push_back(l.mpirun);
    if (l.open_mpi) {
      if (l.as_root && !mentions(l.mpirun_args, "--allow-run-as-root")) argv.push_back("--allow-run-as-root");
      if (!mentions(l.mpirun_args, "--oversubscribe") && !mentions(l.mpirun_args, "--nooversubscribe")) {
        argv.push_back("--oversubscribe");
      }
      if (!l.bind_to.empty() && !mentions(l.mpirun_args, "--bind-to")) argv.insert(argv.end(), {"--bind-to", l.bind_to});
    }
    if (!l.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", l.hostfile});
    argv.insert(argv.end(), l.mpirun_args.begin(), l.mpirun_args.end());
    if (nodes > 0 && l.open_mpi) argv.insert(argv.end(), {"--npernode", std::to_string(ranks_per_node)});
    argv.insert(argv.end(), {"-np", std::to_string(world_size)});
  }
  argv.push_back(exe_path);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void resolve_launcher(LaunchOptions& l) {
  const char* job = std::getenv("SLURM_JOB_ID");
  const bool in_allocation = job && *job;
  if (l.launcher.empty()) l.launcher = in_allocation ? "srun" : "mpirun";
  if (l.launcher == "srun" && !in_allocation) {
    throw InputError("--launcher srun: not inside a Slurm allocation (SLURM_JOB_ID is not set); run the sweep "
                     "under sbatch or salloc, or use --launcher mpirun");
  }
  // Every job step's fences on Slurm's ring collective. With its default ("mixed": the data
  // fence on the ring, a barrier on the tree) Open MPI 4.1.4 ranks under load segfault in
  // MPI_Init: the peers leave MPI_Init's barrier while one rank is still in the modex fence,
  // before its PML has registered its receive callbacks, and the first TCP fragment that reaches
  // it calls a null handler. With every fence on the ring none of the measured steps crashed
  // (docs/cluster.md, "Start-up under srun"). srun passes the environment to the step, where
  // the PMIx plugin reads it; a value the user set is kept.
  if (l.launcher == "srun") setenv("SLURM_PMIX_FENCE", "ring", 0);
}

std::string mpi_version_line(const std::string& mpirun) {
  ProcessOptions o;
  o.timeout_s = 20;
  const ProcessResult r = run_process({mpirun, "--version"}, o);
  if (r.spawn_failed || r.timed_out) return "";
  const std::string text = r.out.empty() ? r.err : r.out;
  const std::string line = text.substr(0, text.find('\n'));
  return line;
}

std::string self_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace dpscale
