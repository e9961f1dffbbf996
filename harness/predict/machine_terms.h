// machine_terms.h — what the α-β step model leaves out, as three named terms of the machine a
// run was measured on, each fitted from measured runs (calibrate.h) and applied by step_model.h.
//
//   ε  compute_excess        a K-rank step's compute over T1/K, before any communication: the
//                            ranks share memory bandwidth and caches, and the update and the loss
//                            do not shrink with K. Compute at K: (T1/K)·(1 + ε)·O(K).
//   σ  contention_s_per_mib  compute lost per MiB a rank moves in all-reduces that start while
//                            backward still runs (the overlapped modes): on a CPU the comm thread's
//                            and MPI's copies take cycles and memory bandwidth from the GEMMs, on
//                            a GPU NCCL's kernels take SMs. A rank moves the ring's 2(K-1)/K·B of
//                            a B-byte all-reduce. Naive starts no all-reduce before backward ends,
//                            so it pays none of this.
//   o  call_overhead_s       per all-reduce call beyond its α-β time: launch, progress, the comm
//                            thread's wake-up and completion polling.
//   O(K) oversubscription    max(1, ranks_per_node · threads / cores): K ranks of T BLAS threads
//                            on C cores share them, so each rank's compute and the contention it
//                            suffers stretch by O. Not fitted: the cores are the machine's, from
//                            the record (0 cores: not modelled, as on GPUs, one rank per device).
#pragma once

#include <algorithm>
#include <string>

namespace dpscale::predict {

struct MachineTerms {
  double compute_excess = 0;        // ε, a fraction
  double contention_s_per_mib = 0;  // σ, seconds per MiB moved by one rank
  double call_overhead_s = 0;       // o, seconds per all-reduce call
  int cores = 0;                    // C (0: oversubscription not modelled)
  int threads = 1;                  // BLAS threads per rank

  double oversubscription(int ranks_per_node) const {
    if (cores <= 0) return 1.0;
    return std::max(1.0, static_cast<double>(ranks_per_node) * threads / cores);
  }
  bool none() const { return compute_excess == 0 && contention_s_per_mib == 0 && call_overhead_s == 0 && cores == 0; }
};

// The bytes one rank moves in a ring all-reduce of `nbytes` over `k` ranks, in MiB.
inline double ring_moved_mib(double nbytes, int k) { return k > 1 ? 2.0 * (k - 1) / k * nbytes / (1024.0 * 1024.0) : 0; }

}  // namespace dpscale::predict
