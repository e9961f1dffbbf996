// test_hier_mpi.cpp — the hierarchical all-reduce (comm/hier_allreduce.h) gives the sums
// MPI_Allreduce gives, on whatever nodes the job has: CTest runs it under plain mpirun (one
// node) and under scripts/ns-mpirun across the two emulated nodes (1+1, 2+2 in blocks, 2+2
// round robin, 2+1). On each it also tries every emulated grouping (ranks_per_node L that
// divides K), as the two-tier link emulation uses on one machine.
//
// Integers must match exactly; floats within the summation-order bound of
// tests/comm/test_allreduce_mpi.cpp (2·γ(K-1)·Σ|x_r|: hier adds the K terms in another order,
// still K-1 additions deep). Uneven nodes must be refused on every rank alike.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/hier_allreduce.h"
#include "comm/mpi_check.h"
#include "comm/mpi_env.h"
#include "models/data/rng.h"

namespace dpscale {
namespace {

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int k = 1;
  MPI_Comm_size(c, &k);
  return k;
}

// Node sizes as MPI sees them: min and max over the job.
std::pair<int, int> node_sizes() {
  MPI_Comm local;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  int l = size_of(local), lo = 0, hi = 0;
  MPI_CHECK(MPI_Comm_free(&local));
  MPI_CHECK(MPI_Allreduce(&l, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Allreduce(&l, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return {lo, hi};
}
bool uneven() {
  const auto [lo, hi] = node_sizes();
  return lo != hi;
}

// Counts: empty, fewer than the node's ranks, chunk remainders, large and odd.
std::vector<size_t> counts_for(int k) {
  const auto K = static_cast<size_t>(k);
  return {0, 1, K - 1, K + 1, 2 * K - 1, 4099, 200003};  // large but quick over a 1 gbit link
}

std::vector<int32_t> int_data(size_t count, int rank) {
  const CounterRng rng(21, static_cast<uint64_t>(rank));
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<int32_t>(rng.bits(i) % (1u << 27)) - (1 << 26);
  return v;
}

std::vector<float> float_data(size_t count, int rank) {
  const CounterRng rng(22, static_cast<uint64_t>(rank));
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = std::ldexp(rng.uniform_symmetric(i, 1.0f), static_cast<int>(rng.bits(i) & 15) - 8);
  return v;
}

// The groupings to try: MPI's nodes (0) and every L dividing K.
std::vector<int> groupings(int k) {
  std::vector<int> g = {0};
  for (int l = 1; l <= k; ++l) {
    if (k % l == 0) g.push_back(l);
  }
  return g;
}

TEST(Hier, Int32ExactlyAsLibrary) {
  const bool skip_mpi_nodes = uneven();  // MPI's own uneven nodes are refused (UnevenNodesRefused)
  const int k = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (int l : groupings(k)) {
    if (l == 0 && skip_mpi_nodes) continue;
    for (size_t count : counts_for(k)) {
      std::vector<int32_t> ours = int_data(count, rank), ref = ours;
      MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ref.data(), static_cast<int>(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
      hier_allreduce_sum(ours.data(), count, MPI_INT32_T, MPI_COMM_WORLD, l);
      size_t bad = 0;
      for (size_t i = 0; i < count; ++i) bad += ours[i] != ref[i];
      EXPECT_EQ(bad, 0u) << "ranks_per_node " << l << " count " << count << " K " << k;
    }
  }
}

TEST(Hier, FloatAsLibraryUpToSummationOrder) {
  const bool skip_mpi_nodes = uneven();  // MPI's own uneven nodes are refused (UnevenNodesRefused)
  const int k = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  const double u = std::numeric_limits<float>::epsilon() / 2, n = k - 1, gamma = n * u / (1.0 - n * u);
  for (int l : groupings(k)) {
    if (l == 0 && skip_mpi_nodes) continue;
    for (size_t count : counts_for(k)) {
      const std::vector<float> mine = float_data(count, rank);
      std::vector<float> ours = mine, ref = mine;
      MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ref.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      std::vector<double> abs_sum(count);
      for (size_t i = 0; i < count; ++i) abs_sum[i] = std::fabs(static_cast<double>(mine[i]));
      MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, abs_sum.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
      hier_allreduce_sum(ours.data(), count, MPI_FLOAT, MPI_COMM_WORLD, l);
      size_t bad = 0;
      for (size_t i = 0; i < count; ++i) bad += !(std::fabs(double(ours[i]) - double(ref[i])) <= 2.0 * gamma * abs_sum[i]);
      EXPECT_EQ(bad, 0u) << "ranks_per_node " << l << " count " << count << " K " << k;
      // Replicas agree bit for bit (every rank ends with the same all-gathered chunks).
      std::vector<float> first = ours;
      MPI_CHECK(MPI_Bcast(first.data(), static_cast<int>(count), MPI_FLOAT, 0, MPI_COMM_WORLD));
      EXPECT_TRUE(first == ours) << "ranks differ, ranks_per_node " << l << " count " << count;
    }
  }
}

// The shape matches what MpiEnv says, and an emulated grouping gives K/L nodes of L.
TEST(Hier, NodeShape) {
  const int k = size_of(MPI_COMM_WORLD);
  const auto [lo, hi] = node_sizes();
  int leaders = 0;
  {
    MPI_Comm local;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
    int one = rank_of(local) == 0;
    MPI_CHECK(MPI_Comm_free(&local));
    MPI_CHECK(MPI_Allreduce(&one, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  }
  const NodeShape s = node_shape(MPI_COMM_WORLD, 0);
  EXPECT_EQ(s.nodes, leaders);
  EXPECT_EQ(s.per_node, hi);
  (void)lo;
  for (int l : groupings(k)) {
    if (l == 0) continue;
    const NodeShape e = node_shape(MPI_COMM_WORLD, l);
    EXPECT_EQ(e.nodes, k / l);
    EXPECT_EQ(e.per_node, l);
  }
  if (k > 1) {
    // L that does not divide K: refused on every rank before any message (no one waits).
    EXPECT_THROW(node_shape(MPI_COMM_WORLD, k + 1), std::runtime_error);
  }
}

TEST(Hier, UnevenNodesRefused) {
  if (!uneven()) GTEST_SKIP() << "every node holds the same number of ranks here";
  std::vector<int32_t> v(8, 1);
  EXPECT_THROW(hier_allreduce_sum(v.data(), v.size(), MPI_INT32_T, MPI_COMM_WORLD, 0), std::runtime_error);
  // An even emulated grouping still works on the same job.
  hier_allreduce_sum(v.data(), v.size(), MPI_INT32_T, MPI_COMM_WORLD, 1);
  for (int32_t x : v) EXPECT_EQ(x, size_of(MPI_COMM_WORLD));
}

}  // namespace
}  // namespace dpscale
