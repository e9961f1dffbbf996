// allreduce_algos.h — the MPI implementations of the all-reduce algorithms (--allreduce; their
// names, hops, bytes and bus bandwidth are in contract/allreduce_algo.h, their α-β time in
// contract/link_model.h):
//   native  the MPI library's own MPI_Allreduce
//   ring    the workshop's ring over point-to-point messages (ring_allreduce.h)
//   star    the workshop's "naive way": everything to rank 0 and back (star_allreduce.h)
//   hier    reduce-scatter in each node, all-reduce across nodes, all-gather (hier_allreduce.h)
// All sum in place and work for any K >= 1 and any element count, for float, double, int32 and
// int64 (integers make exactness testable: their sums do not depend on summation order).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "contract/allreduce_algo.h"

namespace dpscale {

// Sums `count` elements of `type` at `data` across `comm`, in place.
void allreduce_sum(AllreduceAlgo algo, void* data, size_t count, MPI_Datatype type, MPI_Comm comm);

}  // namespace dpscale
