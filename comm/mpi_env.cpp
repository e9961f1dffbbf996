// mpi_env.cpp — MPI start-up and topology.
#include "mpi_env.h"

#include <cstdlib>
#include <stdexcept>

#include "heap_policy.h"
#include "mpi_check.h"

namespace dpscale {

bool MpiEnv::launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                          "SLURM_PROCID"}) {
    if (std::getenv(var)) return true;
  }
  return false;
}

MpiEnv::MpiEnv(int* argc, char*** argv) {
  // Before MPI_Init: the library's own start-up allocations fall under it too.
  heap_policy_ = apply_heap_policy();
  int provided = 0;
  MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw std::runtime_error(
        "the MPI library does not provide MPI_THREAD_MULTIPLE (the comm thread needs it); "
        "rebuild or choose an MPI with thread support");
  }
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size_));

  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_));
  MPI_CHECK(MPI_Comm_rank(local_, &local_rank_));
  MPI_CHECK(MPI_Comm_size(local_, &local_size_));
  // Nodes = number of ranks that are local rank 0.
  int leader = local_rank_ == 0 ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(&leader, &n_nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_CHECK(MPI_Get_processor_name(name, &len));
  host_.assign(name, static_cast<size_t>(len));
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  MPI_CHECK(MPI_Get_library_version(lib, &len));
  library_version_ = lib;
  if (auto nl = library_version_.find('\n'); nl != std::string::npos) library_version_.resize(nl);
}

MpiEnv::~MpiEnv() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
  MPI_Finalize();
}

void MpiEnv::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

}  // namespace dpscale
