// hier_allreduce.h — the hierarchical all-reduce (--allreduce hier; textbook 15.2 §3) and the
// shape of the nodes it runs over.
//
//   node 0: ranks 0 1 ─ reduce-scatter ─┐                ┌─ all-gather ─ ranks 0 1
//                                       ├─ all-reduce of ─┤
//   node 1: ranks 2 3 ─ reduce-scatter ─┘  chunk l among  └─ all-gather ─ ranks 2 3
//                                          local rank l
//
// 1. Inside each node the L ranks reduce-scatter the buffer (MPI_Reduce_scatter on the node's
//    communicator): local rank l ends with the node's sum of chunk l (B/L bytes).
// 2. Across nodes, the N ranks of equal local rank all-reduce their chunk (dpscale's ring on a
//    communicator of those N ranks): now chunk l holds the global sum on every node. The node's
//    L ranks do this at once, each with B/L: only one node's payload, B, crosses the node's link
//    (a flat ring over K ranks puts 2(K-1)/K · B on it, hier 2(N-1)/N · B).
// 3. Inside each node the ranks all-gather the chunks (MPI_Allgatherv).
// Per rank hier sends 2(L-1)/L·B + 2(N-1)/N·B/L = 2(K-1)/K·B, what a flat ring sends: the
// bytes are the same, only which link they cross differs.
//
// Which ranks form a node: the MPI library's node-local communicator (MPI_Comm_split_type
// SHARED), or, for link emulation on one machine (--link ...,ranks-per-node=L), blocks of L
// consecutive ranks. Every node must hold the same number of ranks (the chunks must match
// across nodes); otherwise hier refuses with a runtime_error, on every rank alike.
//
// The node and cross-node communicators are made once per (communicator, L) and cached on the
// communicator as an MPI attribute, freed with it.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "contract/link_model.h"

namespace dpscale {

// Sums `count` elements of `type` (float, double, int32, int64) at `data` across `comm`, in
// place. ranks_per_node 0: nodes as MPI sees them. Collective over `comm`.
void hier_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm, int ranks_per_node = 0);

// The nodes of `comm` (collective the first time for each ranks_per_node): with uneven nodes,
// `nodes` is their number and `per_node` the largest. Throws std::runtime_error when
// ranks_per_node > 0 does not divide the ranks.
NodeShape node_shape(MPI_Comm comm, int ranks_per_node = 0);

}  // namespace dpscale
