// gemm_choice.h — --gemm auto: the fastest GEMM library on the model's own GEMMs among those whose
// results are right, measured once per machine and cached.
//
// For each library built in: its result on every distinct GEMM of the step (step_gemms.h: forward,
// weight gradient, input gradient per layer, at the rank's local batch) is checked against a
// float64 reference within fp32's bound (gemm_accuracy.h); a library off the bound on any of them
// is passed over, however fast. The others are timed on the whole list, in rounds that take the
// libraries in turn (so a disturbance of the machine hits all of them alike), each library's best
// pass counting; the fastest is chosen. Every library not chosen carries its reason, which the
// record prints (gemm_passed_over).
//
// The choice is kept in the cache (gemm_cache.h) under a key of everything it depends on: the
// machine's fingerprint (CPU model and count, core/machine_fingerprint.h), each library's version,
// kernels and the environment's pin of them, the threads, the shapes. Change any and it is
// measured again.
#pragma once

#include <string>
#include <vector>

#include "step_gemms.h"

namespace dpscale {

struct GemmCandidate {
  std::string library;
  std::string kernel;       // what the library reported when it was measured
  double gflops = 0.0;      // its rate on the list; 0 where it was not timed (wrong, not built in)
  std::string passed_over;  // why it was not chosen; "" for the chosen one
};

struct GemmChoice {
  std::string library;
  // How it was chosen: "auto: measured", "auto: cached in PATH" (under $HOME: "~/..."),
  // "auto: the only library built in",
  // "auto: not measured (...)" (OpenBLAS: the GEMMs would not fit in memory to be measured) or
  // "requested" (--gemm NAME).
  std::string how;
  std::vector<GemmCandidate> candidates;
  // "blis: 51.2 GFLOP/s, slower than openblas's 63.0; onednn: ..." ("" when none was passed over).
  std::string passed_over() const;
};

// Chooses the fastest candidate with no reason against it and writes the reason of each faster-
// but-unfit and slower one. Throws std::runtime_error listing every reason when none is fit.
size_t pick_fastest(std::vector<GemmCandidate>& candidates);

// Checks and times every library built in on `shapes` with `threads` threads (gemm_choice.h's
// first paragraph). Shapes must not be empty.
std::vector<GemmCandidate> measure_gemm_libraries(const std::vector<GemmShape>& shapes, int threads);

// The auto choice: from the cache when it holds one for this key, else measured (under the
// cache's lock) and stored. Warnings (an unreadable cache) go to stderr as one "# gemm:" line.
GemmChoice choose_gemm(const std::vector<GemmShape>& shapes, int threads);

// The cache key of `shapes` at `threads` on this machine with this build's libraries.
std::string gemm_choice_key(const std::vector<GemmShape>& shapes, int threads);

}  // namespace dpscale
