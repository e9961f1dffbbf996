// star_allreduce.h — the star all-reduce: everything to rank 0, summed there, and back
// (star_allreduce.cpp draws it).
#pragma once

#include <mpi.h>

#include <cstddef>

namespace dpscale {

// Sums `count` elements of `type` (float, double, int32, int64) at `data` across `comm`, in place;
// std::invalid_argument for any other type.
void star_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm);

}  // namespace dpscale
