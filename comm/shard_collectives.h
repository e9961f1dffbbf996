// shard_collectives.h — the two halves of an all-reduce that sharded training sends on their
// own, over MPI, for --allreduce native (the library's) and ring (ours; ring_allreduce.cpp has
// the all-reduce whose two phases these are):
//
//   reduce-scatter  `count` floats at `data` on every rank, count = K · block; afterwards rank r's
//                   block r ([r·block, (r+1)·block)) holds the sum over ranks of that block. The
//                   other blocks are scratch (partial sums): nobody may read them.
//   all-gather      rank r's block r is copied into block r of every rank, in place; every
//                   other block is overwritten.
//
// In place, block r at offset r·block: NCCL's in-place convention (ncclReduceScatter with
// recvbuff = sendbuff + r·recvcount), so one caller serves both backends. Equal blocks only, as
// MPI_Reduce_scatter_block and NCCL need; a count K does not divide is std::invalid_argument
// (the sharded trainer's units are sized for it: trainers/shard_plan.h).
//
// The ring, for K ranks, block c = chunk c:
//   reduce-scatter  steps s = 0..K-2: send chunk (r-s-1) mod K, receive chunk (r-s-2) mod K and
//                   add it into ours; the last received, (r-K) mod K = r, is then complete.
//   all-gather      steps s = 0..K-2: send chunk (r-s) mod K, receive (r-s-1) mod K, overwrite.
// Each: K-1 messages of B/K bytes per rank, (K-1)/K · B (contract/allreduce_algo.h,
// shard_hop_pattern).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "contract/allreduce_algo.h"
#include "grad_format.h"

namespace dpscale {

// fp32 sums (native: MPI_Ireduce_scatter_block, polled under the watchdog; ring: ours).
void reduce_scatter_sum(AllreduceAlgo algo, float* data, size_t count, MPI_Comm comm);
// bf16/fp16 on the wire (--grad-comm): ring keeps its partial sums in fp32 and sends them
// rounded, as grad_compress.h's ring; native reduces 2-byte values with the widening MPI_Op.
// Either way the owner rounds its complete block once and widens it, so it holds what an
// all-reduce in that format would have left there.
void reduce_scatter_sum_2byte(AllreduceAlgo algo, GradFormat fmt, float* data, size_t count, MPI_Comm comm);
// fp32 always: what is gathered is parameters, not gradients.
void allgather(AllreduceAlgo algo, float* data, size_t count, MPI_Comm comm);

}  // namespace dpscale
