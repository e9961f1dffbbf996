// ring_allreduce.h — the ring all-reduce over point-to-point messages (ring_allreduce.cpp draws it);
// hier's cross-node phase runs it too.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace dpscale {

// Sums `count` elements of `type` (float, double, int32, int64) at `data` across `comm`, in place;
// std::invalid_argument for any other type.
void ring_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm);

}  // namespace dpscale
