// node_probe.cpp — what each rank of an MPI job believes about where it runs, for
// test_twonode.cpp: rank 0 prints one line per rank,
//     rank R host H local L of S nodes N
// with the local rank and node count from comm/mpi_env (MPI_Comm_split_type SHARED), the host
// from MPI_Get_processor_name (gethostname: the emulated node's UTS name).
//
// Run: scripts/ns-mpirun -np 4 --npernode 2 build/bin/node_probe
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "comm/mpi_env.h"

int main(int argc, char** argv) {
  try {
    dpscale::MpiEnv env(&argc, &argv);
    struct Line {
      int local_rank, local_size, n_nodes;
      char host[64];
    } mine{env.local_rank(), env.local_size(), env.n_nodes(), {0}};
    std::strncpy(mine.host, env.host().c_str(), sizeof mine.host - 1);
    std::vector<Line> all(static_cast<size_t>(env.world_size()));
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (env.rank() == 0) {
      for (size_t r = 0; r < all.size(); ++r) {
        std::printf("rank %zu host %s local %d of %d nodes %d\n", r, all[r].host, all[r].local_rank, all[r].local_size,
                    all[r].n_nodes);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "node_probe: %s\n", e.what());
    return 1;
  }
}
