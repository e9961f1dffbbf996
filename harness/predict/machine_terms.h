// machine_terms.h — what the α-β step model leaves out, as three named terms of the machine a
// run was measured on, each fitted from measured runs (calibrate.h) and applied by step_model.h.
//
//   φ  fixed step            per-step compute that does not shrink with K: every rank updates all
//                            P parameters, launches the same kernels and computes the loss, so
//                            φ = φ0 + φ1·P seconds per step. With t1 the single-device step:
//                            compute at K = ((t1 − φ)/K + φ)·O(K) (φ at most t1).
//   σ  contention_s_per_mib  compute lost per MiB a rank moves in all-reduces that start while
//                            backward still runs (the overlapped modes): on a CPU the comm thread's
//                            and MPI's copies take cycles and memory bandwidth from the GEMMs, on
//                            a GPU NCCL's kernels take SMs. A rank moves the ring's 2(K-1)/K·B of
//                            a B-byte all-reduce. Naive starts no all-reduce before backward ends,
//                            so it pays none of this.
//   o  call_overhead_s       per all-reduce call beyond its α-β time: launch, progress, the comm
//                            thread's wake-up and completion polling. A call launched while
//                            backward runs also costs backward its launch (the hook issues it on
//                            the compute thread), so backward grows by o per such call too.
//   O(K) oversubscription    max(1, ranks_per_node · threads / cores): K ranks of T BLAS threads
//                            on C cores share them, so each rank's compute and the contention it
//                            suffers stretch by O. Not fitted: the cores are the machine's, from
//                            the record (0 cores: not modelled, as on GPUs, one rank per device).
#pragma once

#include <algorithm>
#include <string>

#include "contract/allreduce_algo.h"

namespace dpscale::predict {

struct MachineTerms {
  double fixed_step_s = 0;          // φ0, seconds per step
  double fixed_step_s_per_param = 0;  // φ1, seconds per step per parameter
  double contention_s_per_mib = 0;  // σ, seconds per MiB moved by one rank
  double call_overhead_s = 0;       // o, seconds per all-reduce call
  int cores = 0;                    // C (0: oversubscription not modelled)
  int threads = 1;                  // BLAS threads per rank

  double oversubscription(int ranks_per_node) const {
    if (cores <= 0) return 1.0;
    return std::max(1.0, static_cast<double>(ranks_per_node) * threads / cores);
  }
  double fixed_step(double params) const { return fixed_step_s + fixed_step_s_per_param * params; }
  // A K-rank step's compute before communication, from the single-device step t1.
  double compute_at(double t1, double params, int k, double oversub) const {
    const double phi = std::min(fixed_step(params), t1);
    return ((t1 - phi) / k + phi) * oversub;
  }
};

// The bytes one rank moves in a ring all-reduce of `nbytes` over `k` ranks (the ring's link
// bytes, contract/allreduce_algo.h), in MiB.
inline double ring_moved_mib(double nbytes, int k) {
  return hop_pattern(AllreduceAlgo::ring, nbytes, k).link_bytes() / (1024.0 * 1024.0);
}

}  // namespace dpscale::predict
