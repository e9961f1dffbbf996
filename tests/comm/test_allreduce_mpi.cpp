// test_allreduce_mpi.cpp — ring and star give the sums MPI_Allreduce gives, run under
// `mpirun -np K` for K = 1, 2, 3, 4 (CTest: comm.allreduce.np1 .. np4).
//
// Counts: 0, 1, K-1, K, K+1, 2K-1 (chunks of unequal size, empty chunks) and 1M+3, 1M+1
// (large, uneven).
// Integers (int32, int64) must match exactly: their sums do not depend on the order.
// Floats (float, double) must match up to summation order. Each element is a sum of K terms;
// any order of summing K terms is within γ(K-1)·Σ|x_r| of the exact sum, with
// γ(n) = n·u / (1 - n·u) and u the unit roundoff (2^-24 float, 2^-53 double) [Higham,
// Accuracy and Stability of Numerical Algorithms, §4.2]; two orders therefore differ by at most
//     |ours - library| <= 2·γ(K-1)·Σ_r |x_r[i]|,
// computed per element (Σ|x| itself reduced in double). It is 0 for K = 1 (nothing to add),
// and far below any real error: a lost or doubled contribution changes the sum by |x_r|.
// Every algorithm also leaves bit-identical results on all ranks (replicas must agree).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/allreduce_algos.h"
#include "comm/ring_allreduce.h"
#include "comm/star_allreduce.h"
#include "comm/traffic.h"
#include "core/fnv1a.h"
#include "comm/mpi_check.h"
#include "mpi_test_util.h"
#include "models/data/rng.h"

namespace dpscale {
namespace {

using test::world_rank;
using test::world_size;

template <class T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <> MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// Rank r's data: distinct per rank and per element, never the same value pattern twice.
// Integers in ±2^26 (int32) or ±2^50 (int64), so K ≤ 4 sums cannot overflow. Floats spread
// over magnitudes 2^-8..2^8 with both signs, so the order of summation does change roundings.
template <class T>
std::vector<T> rank_data(size_t count, int rank, uint64_t seed) {
  const CounterRng rng(seed, static_cast<uint64_t>(rank));
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t b = rng.bits(i);
    if constexpr (std::is_same_v<T, int32_t>) {
      v[i] = static_cast<int32_t>(b % (1u << 27)) - (1 << 26);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      v[i] = static_cast<int64_t>(b % (1ull << 51)) - (int64_t{1} << 50);
    } else {
      const double mant = rng.uniform_symmetric(i, 1.0f);
      v[i] = static_cast<T>(std::ldexp(mant, static_cast<int>(b & 15) - 8));  // low bits: the exponent
    }
  }
  return v;
}

// FNV-1a of the bytes: replicas compare hashes instead of shipping buffers.
template <class T>
uint64_t hash_of(const std::vector<T>& v) {
  return fnv1a64(v.data(), v.size() * sizeof(T));
}

// Expects every rank of `comm` to hold the same bits.
template <class T>
void expect_replicas_agree(const std::vector<T>& v, MPI_Comm comm, const std::string& what) {
  uint64_t h = hash_of(v), lo = 0, hi = 0;
  MPI_CHECK(MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm));
  MPI_CHECK(MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm));
  EXPECT_EQ(lo, hi) << what << ": ranks hold different results";
}

// 0, 1, K-1 (some chunks empty), K, K+1 and 2K-1 (chunks one element apart: every remainder
// 1..K-1 of count/K shows up across K = 2..4), and large: 1M+3 and 1M+1.
std::vector<size_t> counts_for(int k) {
  const auto K = static_cast<size_t>(k);
  return {0, 1, K - 1, K, K + 1, 2 * K - 1, 1000003, 1000001};
}

// Runs `algo` and MPI_Allreduce on the same data; compares (exactly for integers, within the
// summation-order bound for floats). Collective over `comm`.
template <class T>
void check_against_library(AllreduceAlgo algo, size_t count, MPI_Comm comm, uint64_t seed) {
  int rank = 0, k = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &k);
  const std::string what = std::string(allreduce_algo_name(algo)) + " count " + std::to_string(count) +
                           " K " + std::to_string(k);
  std::vector<T> ours = rank_data<T>(count, rank, seed);
  std::vector<T> ref = ours;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ref.data(), static_cast<int>(count), mpi_type<T>(), MPI_SUM, comm));
  allreduce_sum(algo, ours.data(), count, mpi_type<T>(), comm);

  size_t bad = 0;
  if constexpr (std::is_integral_v<T>) {
    for (size_t i = 0; i < count; ++i) {
      if (ours[i] != ref[i] && bad++ < 5) ADD_FAILURE() << what << ": element " << i << " = " << ours[i] << ", library " << ref[i];
    }
  } else {
    std::vector<double> abs_sum(count);
    const std::vector<T> mine = rank_data<T>(count, rank, seed);
    for (size_t i = 0; i < count; ++i) abs_sum[i] = std::fabs(static_cast<double>(mine[i]));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, abs_sum.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, comm));
    const double u = std::numeric_limits<T>::epsilon() / 2;  // unit roundoff
    const double n = k - 1;
    const double gamma = n * u / (1.0 - n * u);
    for (size_t i = 0; i < count; ++i) {
      const double tol = 2.0 * gamma * abs_sum[i];
      const double diff = std::fabs(static_cast<double>(ours[i]) - static_cast<double>(ref[i]));
      if (!(diff <= tol) && bad++ < 5) {
        ADD_FAILURE() << what << ": element " << i << " = " << ours[i] << ", library " << ref[i] << " (|diff| "
                      << diff << " > tolerance " << tol << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": elements outside tolerance";
  expect_replicas_agree(ours, comm, what);
}

class AllreduceAlgos : public ::testing::TestWithParam<AllreduceAlgo> {};

TEST_P(AllreduceAlgos, Int32ExactlyAsLibrary) {
  for (size_t count : counts_for(world_size())) check_against_library<int32_t>(GetParam(), count, MPI_COMM_WORLD, 11);
}

TEST_P(AllreduceAlgos, Int64ExactlyAsLibrary) {
  for (size_t count : counts_for(world_size())) check_against_library<int64_t>(GetParam(), count, MPI_COMM_WORLD, 12);
}

TEST_P(AllreduceAlgos, FloatAsLibraryUpToSummationOrder) {
  for (size_t count : counts_for(world_size())) check_against_library<float>(GetParam(), count, MPI_COMM_WORLD, 13);
}

TEST_P(AllreduceAlgos, DoubleAsLibraryUpToSummationOrder) {
  for (size_t count : counts_for(world_size())) check_against_library<double>(GetParam(), count, MPI_COMM_WORLD, 14);
}

// The algorithms must use the ranks of the communicator they are given, not the world's:
// split the world into even and odd ranks and reduce within each half.
TEST_P(AllreduceAlgos, SubCommunicator) {
  MPI_Comm half;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &half));
  int k = 1;
  MPI_Comm_size(half, &k);
  for (size_t count : counts_for(k)) check_against_library<int32_t>(GetParam(), count, half, 15);
  MPI_CHECK(MPI_Comm_free(&half));
}

// Back-to-back all-reduces of different sizes on one communicator must not cross-match.
TEST_P(AllreduceAlgos, BackToBackDifferentSizes) {
  const int k = world_size(), rank = world_rank();
  std::vector<int32_t> a(7, rank + 1), b(5 * k + 2, 10 * (rank + 1)), c(1, 100 * (rank + 1));
  allreduce_sum(GetParam(), a.data(), a.size(), MPI_INT32_T, MPI_COMM_WORLD);
  allreduce_sum(GetParam(), b.data(), b.size(), MPI_INT32_T, MPI_COMM_WORLD);
  allreduce_sum(GetParam(), c.data(), c.size(), MPI_INT32_T, MPI_COMM_WORLD);
  const int32_t s = k * (k + 1) / 2;
  for (int32_t x : a) EXPECT_EQ(x, s);
  for (int32_t x : b) EXPECT_EQ(x, 10 * s);
  EXPECT_EQ(c[0], 100 * s);
}

INSTANTIATE_TEST_SUITE_P(Comm, AllreduceAlgos,
                         ::testing::Values(AllreduceAlgo::ring, AllreduceAlgo::star, AllreduceAlgo::native,
                                           AllreduceAlgo::hier),  // hier: one node here; two in tests/twonode
                         [](const auto& info) { return std::string(allreduce_algo_name(info.param)); });

// The bytes each rank actually hands to MPI (comm/traffic.h), against the workshop's claim: a
// ring rank sends and receives 2(K-1)/K·B (here K divides the count, so exactly), the star's
// root receives and sends (K-1)·B each — 2(K-1)·B in all — and every other rank B each way.
TEST(AllreduceTraffic, RingAndStarMoveTheBytesTheWorkshopSays) {
  const int k = world_size(), rank = world_rank();
  const size_t count = 1200 * 12;  // divisible by 1, 2, 3, 4
  const double b = static_cast<double>(count * sizeof(float));
  std::vector<float> v(count, 1.0f);
  Traffic t0 = traffic_so_far();
  ring_allreduce_sum(v.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
  Traffic t1 = traffic_so_far();
  EXPECT_DOUBLE_EQ(t1.sent_bytes - t0.sent_bytes, 2.0 * (k - 1) / k * b);
  EXPECT_DOUBLE_EQ(t1.received_bytes - t0.received_bytes, 2.0 * (k - 1) / k * b);
  star_allreduce_sum(v.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
  const Traffic t2 = traffic_so_far();
  const double root = (k - 1) * b, leaf = k > 1 ? b : 0.0;
  EXPECT_DOUBLE_EQ(t2.sent_bytes - t1.sent_bytes, rank == 0 ? root : leaf);
  EXPECT_DOUBLE_EQ(t2.received_bytes - t1.received_bytes, rank == 0 ? root : leaf);
  for (float x : v) ASSERT_EQ(x, static_cast<float>(k * k));  // the data moved too: k, then k·k
}

// A type the algorithms do not implement is refused before any message is sent (so every
// rank throws, and nobody is left waiting).
TEST(AllreduceAlgosErrors, UnsupportedTypeThrows) {
  std::vector<short> v(4, 1);
  EXPECT_THROW(ring_allreduce_sum(v.data(), v.size(), MPI_SHORT, MPI_COMM_WORLD), std::invalid_argument);
  EXPECT_THROW(star_allreduce_sum(v.data(), v.size(), MPI_SHORT, MPI_COMM_WORLD), std::invalid_argument);
}

}  // namespace
}  // namespace dpscale
