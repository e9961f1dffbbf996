// test_hier_mpi.cpp — the hierarchical all-reduce (comm/hier_allreduce.h) gives the sums
// MPI_Allreduce gives, on whatever nodes the job has: CTest runs it under plain mpirun (one
// node) and under scripts/ns-mpirun across the two emulated nodes (1+1, 2+2 in blocks, 2+2
// round robin, 2+1). On each it also tries every emulated grouping (ranks_per_node L that
// divides K), as the two-tier link emulation uses on one machine.
//
// Integers must match exactly; floats within the summation-order bound of
// tests/comm/test_allreduce_mpi.cpp (2·γ(K-1)·Σ|x_r|: hier adds the K terms in another order,
// still K-1 additions deep). Uneven nodes must be refused on every rank alike.
//
// Each CTest registration also says where it asked the launcher to put the ranks
// (DPSCALE_EXPECT_PLACEMENT), and the job checks it sits there: the sums come out right on one
// node too, so without that check a launcher that put every rank on one node would pass the
// two-node runs (and the 2+1 run's refusal test would skip).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
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

// Renders "node of each rank" as "0,0,1,1": nodes numbered in the order their first rank
// appears, from one key per rank (a host name, or the node's lowest world rank).
template <typename Key>
std::string placement_of(const std::vector<Key>& node_key) {
  std::map<Key, int> number;
  std::string out;
  for (const Key& key : node_key) {
    const int n = number.emplace(key, static_cast<int>(number.size())).first->second;
    out += (out.empty() ? "" : ",") + std::to_string(n);
  }
  return out;
}

// The placement the launcher was asked for, in that form: "0,0,1,1" for 2+2 in blocks, "0,1,0,1"
// round robin, "0,0,1" for 2+1, "0,0,0" for one node of 3 (tests/twonode/CMakeLists.txt). It is
// checked against two views: the host names (each emulated node has its own) and MPI's nodes
// (MPI_Comm_split_type SHARED), which node_shape() and hier go by.
TEST(Hier, RanksSitWhereTheLauncherWasAsked) {
  const int k = size_of(MPI_COMM_WORLD);
  // Rank 0's environment is the launcher's (rank 0 runs on the node mpirun runs on); every
  // rank takes its word, so every rank checks the same thing.
  std::string expected;
  {
    const char* env = std::getenv("DPSCALE_EXPECT_PLACEMENT");
    expected = rank_of(MPI_COMM_WORLD) == 0 && env ? env : "";
    int len = static_cast<int>(expected.size());
    MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD));
    expected.resize(static_cast<size_t>(len));
    MPI_CHECK(MPI_Bcast(expected.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD));
  }

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int name_len = 0;
  MPI_CHECK(MPI_Get_processor_name(name, &name_len));
  std::vector<char> all_names(static_cast<size_t>(k) * MPI_MAX_PROCESSOR_NAME);
  MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all_names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                          MPI_COMM_WORLD));
  std::vector<std::string> hosts;
  for (int r = 0; r < k; ++r) hosts.emplace_back(all_names.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);

  MPI_Comm local;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  int me = rank_of(MPI_COMM_WORLD), leader = 0;
  MPI_CHECK(MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, local));
  MPI_CHECK(MPI_Comm_free(&local));
  std::vector<int> leaders(static_cast<size_t>(k));
  MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD));

  ASSERT_FALSE(expected.empty()) << "DPSCALE_EXPECT_PLACEMENT is not set: say where the launcher puts the ranks, "
                                    "e.g. DPSCALE_EXPECT_PLACEMENT=0,0,1,1 for 2+2 in blocks";
  std::string host_list;
  for (const auto& h : hosts) host_list += (host_list.empty() ? "" : " ") + h;
  EXPECT_EQ(placement_of(hosts), expected) << "by host name; the ranks' hosts: " << host_list;
  EXPECT_EQ(placement_of(leaders), expected) << "by MPI's nodes (MPI_COMM_TYPE_SHARED)";
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
