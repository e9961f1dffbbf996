// test_shard_mpi.cpp — the reduce-scatter and all-gather (comm/shard_collectives.h) and the
// MpiCommunicator's queue of them, under `mpirun -np K`, K = 1..4 (CTest: comm.shard.np1 .. np4).
//
// Values are small integers times small integers, so every sum is exact in fp32 (and in bf16
// where the test says so) whatever order the ranks add in: a check is equality. Each checker is
// shown to fail on a buffer that is wrong (the block before the call; a neighbour's block after
// a reduce-scatter, which holds partial sums) — the negative controls.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "comm/mpi_check.h"
#include "comm/mpi_communicator.h"
#include "comm/shard_collectives.h"
#include "comm/traffic.h"
#include "contract/link_model.h"
#include "mpi_test_util.h"

namespace dpscale {
namespace {

using test::world_rank;
using test::world_size;
using Clock = std::chrono::steady_clock;

// Rank r's element i: (r + 1) · (i mod 997 + 1); the sum over ranks K(K+1)/2 · (i mod 997 + 1).
float value(int rank, size_t i) { return static_cast<float>((rank + 1) * static_cast<int>(i % 997 + 1)); }
float summed(int k, size_t i) { return static_cast<float>(k * (k + 1) / 2 * static_cast<int>(i % 997 + 1)); }

std::vector<float> filled(size_t count, int rank) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = value(rank, i);
  return v;
}

// Elements of block `c` that do not hold the sum over ranks.
size_t wrong_sums(const std::vector<float>& v, int k, int c) {
  const size_t block = v.size() / k;
  size_t bad = 0;
  for (size_t i = c * block; i < (c + 1) * block; ++i) bad += v[i] != summed(k, i);
  return bad;
}

// Elements anywhere that do not hold their owner's value (block c belongs to rank c).
size_t wrong_gathered(const std::vector<float>& v, int k) {
  const size_t block = v.size() / k;
  size_t bad = 0;
  for (size_t i = 0; i < v.size(); ++i) bad += v[i] != value(static_cast<int>(i / block), i);
  return bad;
}

class Shard : public ::testing::TestWithParam<AllreduceAlgo> {};

TEST_P(Shard, ReduceScatterLeavesEachRankTheSumOfItsBlock) {
  const int k = world_size(), rank = world_rank();
  for (size_t block : {size_t{1}, size_t{1234}, size_t{70001}}) {
    std::vector<float> buf = filled(block * k, rank);
    if (k > 1) EXPECT_GT(wrong_sums(buf, k, rank), 0u) << "negative control: the block before the call";
    reduce_scatter_sum(GetParam(), buf.data(), buf.size(), MPI_COMM_WORLD);
    EXPECT_EQ(wrong_sums(buf, k, rank), 0u) << allreduce_algo_name(GetParam()) << " block " << block;
    // Negative control: a shard offset by one block reads partial sums, not the sum.
    if (k > 1 && block > 1) EXPECT_GT(wrong_sums(buf, k, (rank + 1) % k), 0u) << "the neighbour's block";
  }
}

TEST_P(Shard, AllGatherGivesEveryRankEveryBlock) {
  const int k = world_size(), rank = world_rank();
  for (size_t block : {size_t{1}, size_t{1234}, size_t{70001}}) {
    std::vector<float> buf(block * k, -1.0f);
    for (size_t i = rank * block; i < (rank + 1) * block; ++i) buf[i] = value(rank, i);
    if (k > 1) EXPECT_GT(wrong_gathered(buf, k), 0u) << "negative control: before the call";
    allgather(GetParam(), buf.data(), buf.size(), MPI_COMM_WORLD);
    EXPECT_EQ(wrong_gathered(buf, k), 0u) << allreduce_algo_name(GetParam()) << " block " << block;
  }
}

// bf16 on the wire: 1 + 2^-12 is not a bf16 value, so every rank's contribution crosses the
// link as 1 and the owner rounds its sum once; fp32 keeps K · (1 + 2^-12). Integers up to 256
// are exact in bf16: those sums stay exact.
TEST_P(Shard, ReduceScatterSendsBf16) {
  const int k = world_size(), rank = world_rank();
  const size_t block = 999;
  std::vector<float> fine(block * k, 1.0f + std::ldexp(1.0f, -12)), ints(block * k);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 8 + 1));
  std::vector<float> fine32 = fine;
  reduce_scatter_sum_2byte(GetParam(), GradFormat::bf16, fine.data(), fine.size(), MPI_COMM_WORLD);
  reduce_scatter_sum(GetParam(), fine32.data(), fine32.size(), MPI_COMM_WORLD);
  reduce_scatter_sum_2byte(GetParam(), GradFormat::bf16, ints.data(), ints.size(), MPI_COMM_WORLD);
  for (size_t i = rank * block; i < (rank + 1) * block; ++i) {
    ASSERT_EQ(fine[i], static_cast<float>(k)) << "bf16 wire at " << i;
    if (k > 1) ASSERT_NE(fine32[i], static_cast<float>(k)) << "negative control: fp32 keeps the 2^-12";
    ASSERT_EQ(ints[i], static_cast<float>(k * (k + 1) / 2 * static_cast<int>(i % 8 + 1))) << "exact integers at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Algos, Shard, ::testing::Values(AllreduceAlgo::native, AllreduceAlgo::ring),
                         [](const auto& info) { return std::string(allreduce_algo_name(info.param)); });

// What our ring sends is counted at its MPI calls: (K-1) blocks per rank, for each collective.
TEST(ShardRing, SendsKMinusOneBlocks) {
  const int k = world_size(), rank = world_rank();
  const size_t block = 4321;
  std::vector<float> buf = filled(block * k, rank);
  const Traffic t0 = traffic_so_far();
  reduce_scatter_sum(AllreduceAlgo::ring, buf.data(), buf.size(), MPI_COMM_WORLD);
  const Traffic t1 = traffic_so_far();
  allgather(AllreduceAlgo::ring, buf.data(), buf.size(), MPI_COMM_WORLD);
  const Traffic t2 = traffic_so_far();
  const double want = static_cast<double>(k - 1) * block * sizeof(float);
  EXPECT_EQ(t1.sent_bytes - t0.sent_bytes, want);
  EXPECT_EQ(t2.sent_bytes - t1.sent_bytes, want);
  EXPECT_DOUBLE_EQ(shard_hop_pattern(block * k * 4.0, k).link_bytes(), want);
  // After both, every rank holds every block's sum: the all-reduce, in two halves.
  for (int c = 0; c < k; ++c) EXPECT_EQ(wrong_sums(buf, k, c), 0u) << "block " << c;
}

// The α-β model of a half: (K-1)(α + B/K/β)·F, half the ring all-reduce's steps.
TEST(ShardModel, IsHalfTheRingAllreduce) {
  const int k = world_size();
  LinkModel link = parse_link("200:0.02");
  link.dilation = 3.0;
  const size_t nbytes = 1 << 20;
  const double half = modelled_shard_seconds(link, nbytes, NodeShape{1, k});
  EXPECT_NEAR(half, 3.0 * (k - 1) * (200e-6 + nbytes / static_cast<double>(k) / 0.02e9), 1e-12);
  EXPECT_NEAR(2.0 * half, modelled_seconds(AllreduceAlgo::ring, link, nbytes, k), 1e-12);
}

// The communicator's queue: a reduce-scatter, an all-reduce and an all-gather run in order on
// the comm thread, each held for its own model time; the all-gathers' time is taken apart.
TEST(MpiCommunicatorShard, QueuesHalvesInOrderUnderTheLink) {
  const int k = world_size(), rank = world_rank();
  const LinkModel link = parse_link("200:0.02");
  MpiCommunicator comm(MPI_COMM_WORLD, AllreduceAlgo::ring, link);
  const size_t block = 16384;
  std::vector<float> rs = filled(block * k, rank), ar = filled(block * k, rank), ag(block * k, -1.0f);
  for (size_t i = rank * block; i < (rank + 1) * block; ++i) ag[i] = value(rank, i);
  const double t_half = modelled_shard_seconds(link, block * k * sizeof(float), NodeShape{1, k});
  const double t_ar = modelled_seconds(AllreduceAlgo::ring, link, block * k * sizeof(float), k);
  comm.log_calls(true);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const auto t0 = Clock::now();
  auto w_rs = comm.reduce_scatter_sum(rs.data(), rs.size());
  comm.allreduce_sum(ar.data(), ar.size());
  auto w_ag = comm.allgather(ag.data(), ag.size());
  w_ag->wait();
  const double t = std::chrono::duration<double>(Clock::now() - t0).count();
  comm.finish();
  EXPECT_GE(t, 2 * t_half + t_ar);
  EXPECT_EQ(wrong_sums(rs, k, rank), 0u);
  for (int c = 0; c < k; ++c) EXPECT_EQ(wrong_sums(ar, k, c), 0u);
  EXPECT_EQ(wrong_gathered(ag, k), 0u);
  const std::vector<CallTiming> log = comm.take_call_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].op, Collective::reduce_scatter);
  EXPECT_EQ(log[1].op, Collective::allreduce);
  EXPECT_EQ(log[2].op, Collective::allgather);
  for (size_t i = 1; i < log.size(); ++i) EXPECT_GE(log[i].start_s, log[i - 1].end_s) << "FIFO, one at a time";
  const double ag_s = comm.take_allgather_seconds();
  const double busy = comm.take_busy_seconds();
  EXPECT_GE(ag_s, t_half);
  EXPECT_NEAR(ag_s, log[2].end_s - log[2].start_s, 1e-9);
  EXPECT_GE(busy, 2 * t_half + t_ar);
  EXPECT_GT(busy, ag_s + t_half);
  // A count that does not split into K blocks is refused on the caller's thread.
  if (k > 1) EXPECT_THROW(comm.reduce_scatter_sum(rs.data(), block * k + 1), std::invalid_argument);
}

}  // namespace
}  // namespace dpscale
