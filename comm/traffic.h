// traffic.h — bytes this process's own all-reduce algorithms (ring, star) actually passed to
// MPI sends and receives, counted at the calls. bench_allreduce reports rank 0's counts per
// all-reduce, so "the star's root moves 2(K-1)·B, a ring rank 2(K-1)/K·B" is measured, not
// a formula (the library's own MPI_Allreduce and NCCL send what they send: not counted).
#pragma once

#include <cstddef>

namespace dpscale {

struct Traffic {
  double sent_bytes = 0.0;
  double received_bytes = 0.0;
};

// Adds one message's bytes; thread-safe (the comm thread and the main thread may both send).
void count_traffic(size_t sent_bytes, size_t received_bytes);
// Totals since the process started; differences of two snapshots give an interval's traffic.
Traffic traffic_so_far();

}  // namespace dpscale
