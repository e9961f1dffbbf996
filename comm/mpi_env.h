// mpi_env.h — the launch environment of a data-parallel job started by mpirun.
//
// rank and world size come from MPI_COMM_WORLD; the local rank (which GPU on this node) from
// the node-local communicator MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). So `mpirun -np K` on
// one node and `mpirun --hostfile H -np K` across nodes work without code changes.
#pragma once

#include <mpi.h>

#include <string>

namespace dpscale {

class MpiEnv {
 public:
  // True when a launcher (mpirun/orterun, PMIx, Hydra, Slurm's srun) started this process.
  static bool launched_by_mpi();

  // Applies the heap policy (heap_policy.h: freed large blocks stay in the heap, so the MPI
  // library's per-call temporaries do not fault in fresh pages every call), then
  // MPI_Init_thread asking for MPI_THREAD_MULTIPLE (the comm thread makes MPI calls while the
  // main thread may too); throws std::runtime_error if the library provides less.
  MpiEnv(int* argc, char*** argv);
  ~MpiEnv();
  MpiEnv(const MpiEnv&) = delete;
  MpiEnv& operator=(const MpiEnv&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int n_nodes() const { return n_nodes_; }
  const std::string& host() const { return host_; }
  // This node's ranks (MPI_Comm_split_type SHARED), in local-rank order; kept for the node's
  // GPU check and freed before MPI_Finalize.
  MPI_Comm node_comm() const { return local_; }
  // "Open MPI v4.1.4, ..." — MPI_Get_library_version's first line.
  const std::string& library_version() const { return library_version_; }
  // apply_heap_policy()'s answer: "on (...)" or "off (...)".
  const std::string& heap_policy() const { return heap_policy_; }

  // Ends the whole job: every rank, not just this one.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, world_size_ = 1, local_rank_ = 0, local_size_ = 1, n_nodes_ = 1;
  MPI_Comm local_ = MPI_COMM_NULL;
  std::string host_, library_version_, heap_policy_;
};

}  // namespace dpscale
