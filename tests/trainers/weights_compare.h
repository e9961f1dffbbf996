// weights_compare.h — how far two checkpoints are apart, per tensor, measured against what
// training moved them: the comparison behind every "K ranks train the same weights as one
// device" test (CPU over MPI in test_dp_exactness.cpp, CUDA over NCCL in test_dp_nccl.cpp).
//
// THE TOLERANCE. Synchronous DP computes the same gradient as one device, but not with the same
// float operations: each rank's GEMM sums B/K rows instead of B, and the all-reduce adds the K
// partial sums in an order of its own. In float32 (ε = 2^-23 ≈ 1.2e-7) each gradient element
// then differs by a few ε times the magnitude of its summands — relative to the step's update
// lr·|g|, a few 1e-7 to 1e-6 per step, growing a little through the next steps' gradients. On
// top, w - lr·g is rounded to float: two runs whose lr·g differ at all can land one ulp of w
// apart, each step. So per tensor, with U = max|w_T - w_0| (how far T steps moved it) and
// W = max|w|:
//     max|w_dp - w_single|  <=  1e-4 · U  +  2·T·ε·W
// 1e-4 of the update leaves 100x headroom over the measured summation noise (~1e-6 · U), and is
// still 100x smaller than what a 1 % change of the learning rate moves (1e-2 · U) and ~3000x
// smaller than one extra step (~U/3) — test_dp_exactness's negative controls check both do NOT
// pass. The same bound holds between two backends (cuBLAS and OpenBLAS also differ only in
// summation order, as long as both compute in fp32: no TF32).
#pragma once

#include <string>

#include "dp_support.h"

namespace dpscale::test {

constexpr double kRelTolOfUpdate = 1e-4;

struct Comparison {
  bool pass = true;
  double worst_ratio = 0.0;  // max over tensors of diff / tol
  std::string report;        // one line per tensor
};

// `got` against `ref`, both trained `steps` steps from `init`; tolerance per tensor
// rel_tol · U + 2·steps·ε·W (above).
Comparison compare_weights(const Weights& init, const Weights& ref, const Weights& got, int steps,
                           double rel_tol = kRelTolOfUpdate);

// Max over tensors of max|a - b| / max|a - init|: how far two runs from `init` ended apart, as a
// share of how far training moved them (the 2-byte gradient tests' measure against unit roundoff).
double worst_relative(const Weights& init, const Weights& a, const Weights& b);

}  // namespace dpscale::test
