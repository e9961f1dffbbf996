// allreduce_algos.h — the MPI implementations of the all-reduce algorithms (--allreduce; the
// names and their α-β model are in contract/link_model.h):
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

#include "contract/link_model.h"

namespace dpscale {

// Sums `count` elements of `type` at `data` across `comm`, in place.
void allreduce_sum(AllreduceAlgo algo, void* data, size_t count, MPI_Datatype type, MPI_Comm comm);

// Bytes rank 0 sends for one all-reduce of `nbytes` over k ranks: ring 2(k-1)/k·B, star (k-1)·B
// (native is counted as a ring: what the library sends is its own business; hier sends exactly
// a ring's bytes per rank, over other links: hier_allreduce.h).
double rank0_bytes_sent(AllreduceAlgo algo, size_t nbytes, int k);

// nccl-tests' bandwidths of one all-reduce of `nbytes` over k ranks that took `seconds`:
//   algbw = nbytes / seconds / 1e9                        (GB/s, 1 GB = 1e9 bytes)
//   busbw = algbw · 2(k-1)/k
// algbw is what the caller sees; busbw rescales it by the traffic a bandwidth-optimal (ring)
// all-reduce must put on each rank's link, 2(k-1)/k · B, so it is comparable across k and with
// the link's own speed. busbw is 0 for k = 1 (nothing crosses a link); both are 0 for seconds <= 0.
struct AllreduceBandwidth {
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
};
AllreduceBandwidth allreduce_bandwidth(size_t nbytes, double seconds, int k);

}  // namespace dpscale
