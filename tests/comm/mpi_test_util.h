// mpi_test_util.h — small helpers the MPI test programs in tests/comm share.
#pragma once

#include <mpi.h>

namespace dpscale::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int k = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &k);
  return k;
}

}  // namespace dpscale::test
