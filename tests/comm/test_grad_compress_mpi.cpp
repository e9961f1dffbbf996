// test_grad_compress_mpi.cpp — the 2-byte all-reduce of comm/grad_compress.cpp (--grad-comm
// bf16|fp16) for ring, star and native, run under `mpirun -np K` for K = 1..4 (CTest:
// comm.grad_compress.np1 .. np4), against results worked out by hand.
//
// The values are chosen so that bf16 (8 significant bits: 1 implicit + 7 stored) and fp16
// (11 significant bits: 1 + 10) round them DIFFERENTLY, so a path that sends one format for the
// other cannot pass. The expected results must not depend on who adds what first (native lets
// the MPI library pick the pairs, each addition rounded), so each element is one of:
//
//   rounding   rank 0 holds a value neither format holds exactly, every other rank 0:
//              any schedule sums v + 0 + ... and rounds v (rounding a rounded value again,
//              or adding an exact 0 to it, changes nothing): the result is round(v) for every
//              algorithm and every K.
//   sum        rank 0 holds a, rank 1 holds b, the others 0; a and b fit both formats exactly
//              and a + b fits fp32 exactly: every partial sum is 0, a, b or a + b, so a + b is
//              rounded once: round(a + b). (K = 1: rank 1 does not exist; the result is a.)
//   all ranks  rank r holds (r+1)/4: every partial sum is a multiple of 1/4 below 3, exact in
//              both formats: K(K+1)/8.
//
// Every rank checks every element with exact float equality, so the ranks also hold the same
// bits (replicas agree). Expected values are constants worked out below, NOT computed with
// comm/grad_format.h, so a wrong conversion cannot agree with itself.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "comm/grad_compress.h"
#include "mpi_test_util.h"

namespace dpscale {
namespace {

using test::world_rank;
using test::world_size;

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  const char* what;
  float a, b;  // rank 0's value, rank 1's value (b = 0: a rounding case)
  float want_bf16, want_fp16;  // the sum every rank must hold, K >= 2 (rounding cases: any K)
};

// ulp(x) of a format with p significant bits, for 2^e <= |x| < 2^(e+1): 2^(e-p+1).
// bf16 (p = 8): 2^(e-7); fp16 (p = 11): 2^(e-10). Round to nearest, ties to the even last bit.
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      // --- rounding: rank 0 alone ---
      // 1 + 3·2^-10: fp16 holds it (10 stored bits); bf16's ulp at 1 is 2^-7 and 3·2^-10 is
      // 0.375 of it: down to 1.
      {"round 1+3*2^-10", 1.0029296875f, 0.0f, 1.0f, 1.0029296875f},
      // -257.5 = -(2^8 + 1.5): fp16's ulp at 256 is 2^-2, so it is exact; bf16's is 2: 128.75
      // ulps, up to 129 · 2 = 258.
      {"round -257.5", -257.5f, 0.0f, -258.0f, -257.5f},
      // fp32(1/3) = 0x3EAAAAAB = 1.01010101010101010101011b · 2^-2. bf16 keeps 7 bits 0101010,
      // the rest 1010...b > half: up to 1.0101011b · 2^-2 = 171/512. fp16 keeps 10 bits
      // 0101010101, the rest 0101...b < half: down to 1.0101010101b · 2^-2 = 1365/4096.
      {"round 1/3", 1.0f / 3.0f, 0.0f, 171.0f / 512.0f, 1365.0f / 4096.0f},
      // 70000 = 1.068115234375 · 2^16: above fp16's largest (65504; >= 65520 rounds to inf).
      // bf16's ulp at 2^16 is 2^9 = 512: 70000/512 = 136.72 ulps, up to 137 · 512 = 70144.
      {"round 70000", 70000.0f, 0.0f, 70144.0f, kInf},
      // fp32(1e-6) = 0x358637BD = 1.00000011...b · 2^-20, below fp16's smallest normal (2^-14):
      // a subnormal m · 2^-24, m = round(1e-6 · 2^24 = 16.777) = 17. bf16 keeps the top 16 bits
      // 0x3586 (the rest, 0x37BD, is below half): 1.0000110b · 2^-20 = 134 · 2^-27.
      {"round 1e-6", 1e-6f, 0.0f, 134.0f * 0x1p-27f, 17.0f * 0x1p-24f},
      // --- sums: rank 0 + rank 1, each exact in both formats ---
      // 1 + 3·2^-10 (b = 1.5 · 2^-9): as the rounding case above, now made by the addition.
      {"1 + 3*2^-10", 1.0f, 0.0029296875f, 1.0f, 1.0029296875f},
      {"-1 - 3*2^-10", -1.0f, -0.0029296875f, -1.0f, -1.0029296875f},
      // 256 + 1.5 = 257.5: as above, bf16 258, fp16 exact.
      {"256 + 1.5", 256.0f, 1.5f, 258.0f, 257.5f},
      // 2048 + 1.5 = 2049.5: fp16's ulp at 2^11 is 2, 1024.75 ulps, up to 2050; bf16's is 16,
      // 128.09 ulps, down to 2048. Both formats round, to different sides.
      {"2048 + 1.5", 2048.0f, 1.5f, 2048.0f, 2050.0f},
      // 1 + 2^-8: exactly half a bf16 ulp: the tie goes to the even mantissa, 1.0; fp16 exact.
      {"1 + 2^-8 (bf16 tie)", 1.0f, 0.00390625f, 1.0f, 1.00390625f},
      // 1 + 3·2^-8 = 1 + 1.5 bf16 ulps: tie between mantissa 1 (odd) and 2 (even): up to
      // 1 + 2^-6 = 1.015625; fp16 exact.
      {"1 + 3*2^-8 (bf16 tie up)", 1.0f, 0.01171875f, 1.015625f, 1.01171875f},
      // 1 + 3·2^-12 = 1 + 0.75 fp16 ulps: fp16 up to 1 + 2^-10; bf16 down to 1.
      {"1 + 3*2^-12", 1.0f, 0.000732421875f, 1.0f, 1.0009765625f},
      // 49152 + 16384 = 65536 = 2^16: bf16 exact; past fp16's range: inf.
      {"49152 + 16384", 49152.0f, 16384.0f, 65536.0f, kInf},
  };
  return c;
}

// What rank `rank` of `k` holds for element i, and the sum every rank must end with.
// Elements cycle through the cases, then one "all ranks" element.
struct Element {
  float mine, want;
  std::string what;
};

Element element(size_t i, int rank, int k, GradFormat f) {
  const auto& c = cases();
  const size_t n = c.size() + 1;
  if (i % n == c.size()) {  // all ranks: (r+1)/4 each, K(K+1)/8 in all
    return {0.25f * static_cast<float>(rank + 1), 0.125f * static_cast<float>(k * (k + 1)), "all ranks (r+1)/4"};
  }
  const Case& e = c[i % n];
  const float mine = rank == 0 ? e.a : rank == 1 ? e.b : 0.0f;
  const bool sum = e.b != 0.0f;
  const float want = (sum && k == 1) ? e.a : f == GradFormat::bf16 ? e.want_bf16 : e.want_fp16;
  return {mine, want, e.what};
}

// `reps` passes over the cases, plus one element: ring chunks of unequal size that cut the
// cycle at different places for each K (15, 99 and 14001 elements).
size_t count_for(size_t reps) { return reps * (cases().size() + 1) + 1; }

void check(AllreduceAlgo algo, GradFormat f, size_t count) {
  const int rank = world_rank(), k = world_size();
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = element(i, rank, k, f).mine;
  allreduce_sum_2byte(algo, f, data.data(), count, MPI_COMM_WORLD);
  int bad = 0;
  for (size_t i = 0; i < count; ++i) {
    const Element e = element(i, rank, k, f);
    // EXPECT_EQ on floats: exact, and inf == inf.
    if (data[i] != e.want && bad++ < 8) {
      ADD_FAILURE() << allreduce_algo_name(algo) << " " << grad_format_name(f) << " K=" << k << " rank " << rank
                    << " element " << i << " (" << e.what << "): got " << data[i] << ", want " << e.want;
    }
  }
  EXPECT_EQ(bad, 0) << allreduce_algo_name(algo) << " " << grad_format_name(f) << " count " << count
                    << ": elements off their hand-worked sums";
}

struct Param {
  AllreduceAlgo algo;
  GradFormat fmt;
};
void PrintTo(const Param& p, std::ostream* os) { *os << allreduce_algo_name(p.algo) << " " << grad_format_name(p.fmt); }

class GradCompress : public ::testing::TestWithParam<Param> {};

TEST_P(GradCompress, HandWorkedSums) {
  for (size_t reps : {size_t{1}, size_t{7}, size_t{1000}}) check(GetParam().algo, GetParam().fmt, count_for(reps));
}

// The tables themselves: each case does separate the formats (a case where they agree would
// not catch one sent as the other).
TEST(GradCompressTable, EveryCaseSeparatesTheFormats) {
  for (const Case& c : cases()) EXPECT_NE(c.want_bf16, c.want_fp16) << c.what;
}

INSTANTIATE_TEST_SUITE_P(Comm, GradCompress,
                         ::testing::Values(Param{AllreduceAlgo::ring, GradFormat::bf16},
                                           Param{AllreduceAlgo::ring, GradFormat::fp16},
                                           Param{AllreduceAlgo::star, GradFormat::bf16},
                                           Param{AllreduceAlgo::star, GradFormat::fp16},
                                           Param{AllreduceAlgo::native, GradFormat::bf16},
                                           Param{AllreduceAlgo::native, GradFormat::fp16}),
                         [](const auto& info) {
                           return std::string(allreduce_algo_name(info.param.algo)) + "_" +
                                  grad_format_name(info.param.fmt);
                         });

}  // namespace
}  // namespace dpscale
