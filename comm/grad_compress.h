// grad_compress.h — all-reduce of fp32 gradients sent as 2-byte values (--grad-comm bf16|fp16)
// over MPI, for each algorithm of --allreduce:
//   ring    each rank keeps its partial sums in fp32 and sends them rounded to 2 bytes; a hop
//           adds the received 2-byte partial into its fp32 chunk (reduce-scatter), the owner
//           rounds its complete chunk once and the all-gather passes 2-byte chunks on.
//   star    ranks send their rounded buffers to rank 0, which sums them into its own fp32
//           values, rounds the sum once and sends it back.
//   native  the MPI library's MPI_Allreduce on MPI_UINT16_T with a user-defined MPI_Op that
//           widens both operands to fp32, adds, and rounds (the library chooses the pairs, so
//           each of its additions rounds once).
// Every rank then holds the same 2-byte sums and widens them back: replicas stay identical
// (the rank that summed in fp32 uses the rounded value too). Half the bytes of fp32 cross the
// link; the modelled link time (contract/link_model.h) is taken over those bytes.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "contract/link_model.h"
#include "grad_format.h"

namespace dpscale {

// Sums `count` floats at `data` across `comm` in place, sending `fmt` (bf16 or fp16).
void allreduce_sum_2byte(AllreduceAlgo algo, GradFormat fmt, float* data, size_t count, MPI_Comm comm);

// The MPI_Op on MPI_UINT16_T that sums two 2-byte values of `fmt` in fp32 and rounds once
// (native's op; the sharded reduce-scatter's too). Made once, on first use.
MPI_Op grad_sum_op(GradFormat fmt);

}  // namespace dpscale
