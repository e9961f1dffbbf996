// hier_allreduce.cpp — the hierarchical all-reduce: node communicators, cached on the
// communicator, and the three phases (see hier_allreduce.h).
#include "hier_allreduce.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ring_allreduce.h"
#include "mpi_check.h"

namespace dpscale {

namespace {

// The node layout of one communicator for one ranks_per_node.
struct HierComms {
  int ranks_per_node = 0;  // what it was made for (0: MPI's nodes)
  MPI_Comm node = MPI_COMM_NULL;   // this rank's node
  MPI_Comm cross = MPI_COMM_NULL;  // the ranks of this rank's local rank, one per node
  int local_rank = 0, local_size = 1;
  int nodes = 1, min_local = 1, max_local = 1;
};

void free_comms(HierComms* h) {
  if (h->node != MPI_COMM_NULL) MPI_Comm_free(&h->node);
  if (h->cross != MPI_COMM_NULL) MPI_Comm_free(&h->cross);
  delete h;
}

// Attribute delete callback: runs when the communicator is freed (or at MPI_Finalize).
int delete_attr(MPI_Comm, int, void* value, void*) {
  free_comms(static_cast<HierComms*>(value));
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(once, [] { MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &key, nullptr)); });
  return key;
}

HierComms* make_comms(MPI_Comm comm, int ranks_per_node) {
  int rank = 0, k = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &k));
  if (ranks_per_node > 0 && k % ranks_per_node != 0) {
    throw std::runtime_error("ranks-per-node " + std::to_string(ranks_per_node) + " does not divide the " +
                             std::to_string(k) + " ranks");
  }
  auto* h = new HierComms;
  h->ranks_per_node = ranks_per_node;
  if (ranks_per_node > 0) {
    MPI_CHECK(MPI_Comm_split(comm, rank / ranks_per_node, rank, &h->node));
  } else {
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &h->node));
  }
  MPI_CHECK(MPI_Comm_rank(h->node, &h->local_rank));
  MPI_CHECK(MPI_Comm_size(h->node, &h->local_size));
  // Ranks of equal local rank, ordered by their rank in `comm` (so by node).
  MPI_CHECK(MPI_Comm_split(comm, h->local_rank, rank, &h->cross));
  int leader = h->local_rank == 0 ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(&leader, &h->nodes, 1, MPI_INT, MPI_SUM, comm));
  MPI_CHECK(MPI_Allreduce(&h->local_size, &h->min_local, 1, MPI_INT, MPI_MIN, comm));
  MPI_CHECK(MPI_Allreduce(&h->local_size, &h->max_local, 1, MPI_INT, MPI_MAX, comm));
  return h;
}

// The cached layout, made on first use (collective then: every rank gets here together, as
// every rank calls the all-reduce in the same order).
HierComms& comms_of(MPI_Comm comm, int ranks_per_node) {
  const int key = keyval();
  void* value = nullptr;
  int found = 0;
  MPI_CHECK(MPI_Comm_get_attr(comm, key, &value, &found));
  if (found && static_cast<HierComms*>(value)->ranks_per_node == ranks_per_node) return *static_cast<HierComms*>(value);
  HierComms* h = make_comms(comm, ranks_per_node);
  MPI_CHECK(MPI_Comm_set_attr(comm, key, h));  // frees a previous layout through delete_attr
  return *h;
}

}  // namespace

NodeShape node_shape(MPI_Comm comm, int ranks_per_node) {
  const HierComms& h = comms_of(comm, ranks_per_node);
  return NodeShape{h.nodes, h.max_local};
}

void hier_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm, int ranks_per_node) {
  HierComms& h = comms_of(comm, ranks_per_node);
  if (h.min_local != h.max_local) {
    throw std::runtime_error("hier all-reduce needs the same number of ranks on every node (these nodes hold " +
                             std::to_string(h.min_local) + " to " + std::to_string(h.max_local) + ")");
  }
  if (count == 0) return;
  const int l = h.local_size;
  if (l == 1) return ring_allreduce_sum(data, count, type, h.cross);  // one rank per node: all cross-node
  if (count / l + 1 > static_cast<size_t>(INT_MAX) || count > static_cast<size_t>(INT_MAX)) {
    throw std::runtime_error("hier all-reduce: buffer too large for an MPI count");
  }
  int tsize = 0;
  MPI_CHECK(MPI_Type_size(type, &tsize));

  // Chunk c of the buffer: sizes differ by at most one element (as the ring's chunks).
  const size_t base = count / l, extra = count % l;
  std::vector<int> counts(l), displs(l);
  for (int c = 0; c < l; ++c) {
    counts[c] = static_cast<int>(base + (static_cast<size_t>(c) < extra ? 1 : 0));
    displs[c] = static_cast<int>(c * base + std::min<size_t>(c, extra));
  }
  const int mine = counts[h.local_rank];
  // This rank's chunk while it is reduced across nodes; reused across calls (one comm thread).
  thread_local std::vector<unsigned char> chunk;
  if (chunk.size() < static_cast<size_t>(mine) * tsize) chunk.resize(static_cast<size_t>(mine) * tsize);

  // 1. Node sum of chunk l into `chunk` (the library's reduce-scatter, shared memory).
  MPI_CHECK(MPI_Reduce_scatter(data, chunk.data(), counts.data(), type, MPI_SUM, h.node));
  // 2. Chunk l summed across the nodes: N ranks, one per node, over the inter-node link.
  ring_allreduce_sum(chunk.data(), static_cast<size_t>(mine), type, h.cross);
  // 3. Every rank of the node gets every chunk back.
  MPI_CHECK(MPI_Allgatherv(chunk.data(), mine, type, data, counts.data(), displs.data(), type, h.node));
}

}  // namespace dpscale
