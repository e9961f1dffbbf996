// straggler.h — which rank is slower than the others, and where it loses its time.
//
// The all-reduce makes every rank wait for the slowest, so every rank's step time looks the
// same; each rank's compute, loader wait and link time, measured separately, do not. Per cause
// X in the order compute, loader, link, with X_r rank r's per-step median:
//
//   s = argmax_r X_r,  excess = X_s − median of the other ranks' X,  share = excess / step
//
// The largest of the three shares names rank s and its cause when it reaches kStragglerShare.
// A rank's link time is what its all-reduces took past the shared link model's end
// (CallTiming::link_s), not its whole hold: a rank late for any reason arrives last at every
// call and holds longest, which would blame its lateness (or mere arrival jitter on a link-bound
// run) on its link; measured that way, a compute or loader straggler shows no link excess
// (experiments/straggler/README.md). The largest share, not a fixed order, because the compute clock is the
// noisy one: a rank that sleeps on its loader finds its caches cold and computes a little longer
// after it, and on shared cores compute noise reaches several % of a step, which a fixed
// compute-first order let hide a slow link (13 of 20 found at K = 2 before, experiments/straggler/README.md).
//
// Contended, not a straggler: a compute excess is then checked against the rank's run delay
// inside its compute interval (the compute thread's time runnable, waiting for a CPU:
// contention.h), per-step medians as well:
//
//   delay excess = w_s − median of the other ranks' w,   left = excess − delay excess
//   contended when left / step < kStragglerShare
//
// Take off the extra time the rank spent waiting for a CPU, and what is left of its excess is no
// longer a straggler's: the machine (a busy neighbour on its core, more ranks than cores) made it
// late, not its device. A rank slowed by its own work keeps an excess of its own, however long
// it also waited: on a loaded machine a rank that needs more CPU waits more too, in proportion,
// but its extra CPU time stays. Where the compute is the compute thread's CPU time (the CPU
// backend with one BLAS thread) it holds none of the waiting, w is 0, and a compute excess is
// always the rank's own; on a clock's interval (a GPU's events, several BLAS threads) the wait
// is inside it. The loader wait and the link time are waits of sleeping threads, which run delay
// does not see: their excesses are not checked.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dpscale {

// 5% of the step: above what ranks sharing two busy cores show without an injected delay (the
// compute clock's noise floor, experiments/straggler/README.md), below the 9% a rank slowed by 10% of its
// step shows (0.1 T of a 1.1 T step).
inline constexpr double kStragglerShare = 0.05;

// One rank's per-step medians, in seconds.
struct RankMedians {
  double compute = 0.0, loader = 0.0, link = 0.0;
  double compute_run_delay = 0.0;  // of `compute`, the compute thread's wait for a CPU (0: CPU time)
};

struct Straggler {
  int rank = 0;
  std::string cause;   // compute | loader | link
  double excess_s = 0.0;  // per step, over the other ranks' median
  double share = 0.0;     // excess_s / step
  double delay_excess_s = 0.0;  // compute: its run delay in compute over the other ranks' median
};

// Also the largest share of each cause, found or not (for the record's diagnosis line).
struct StragglerScan {
  std::optional<Straggler> found;      // a straggler
  std::optional<Straggler> contended;  // the rank that stood out in compute, its excess its run delay's
  double compute_share = 0.0, loader_share = 0.0, link_share = 0.0;
};

StragglerScan find_straggler(const std::vector<RankMedians>& ranks, double step_s);

// "straggler rank 1 (compute): +4.8 ms per step (largest excess: compute 9.1%, loader 0.0%,
// link 3.2% of the step)" (a compute straggler with run delay in its compute interval adds
// ", run delay +2.0 ms" after "per step"), "no straggler (largest excess: compute 1.2%, ...)" or "no straggler:
// rank 1 contended (compute +4.8 ms per step, run delay +9.0 ms) (largest excess: ...)".
std::string describe(const StragglerScan& s);

}  // namespace dpscale
