// diagnosis.h — the bottleneck label of a run: from what the ranks measured, which of
// compute, communication, the loader or one straggling rank bounds the step, and a one-line
// diagnosis with the number behind it. The rule (written out in the README, "Why a run scaled
// as it did"), per timed step, with c_r, w_r, l_r rank r's compute, all-reduce wait and loader
// wait and T the step time (the slowest rank's epoch time / steps):
//
//   straggler     s = argmax_r c_r;  imbalance = c_s − median of the other ranks' c (c here: the
//                 steadier per-step compute of straggler.h where the trainer has it)
//   communication exposed = w_s, the wait of the rank that computed longest: it arrives last
//                 at the all-reduce, so it waits only for the communication itself (the others
//                 also wait for it: that part is imbalance, not communication)
//   loader        mean_r l_r
//   share of each = its time / T. The largest share names the bottleneck when it is at least
//   kBottleneckShare (25%) of the step; otherwise the run is compute-bound. When the imbalance
//   names it and its rank is the one the straggler rule found contended (its compute excess,
//   less its extra run delay, under the straggler share: straggler.h), the label is `contended`:
//   the machine, not the rank, bounds it.
//
// γ = comm busy / compute, per step (the textbook's comm-to-compute ratio).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dpscale {

inline constexpr double kBottleneckShare = 0.25;

// Per-step seconds of one rank.
struct RankStep {
  double compute = 0.0, wait = 0.0, loader = 0.0;
};

struct DiagnosisInput {
  std::vector<RankStep> ranks;  // rank order
  double step_s = 0.0;          // T
  double busy_s = 0.0;          // per step, mean over ranks: summed all-reduce durations
  bool data_parallel = false;
  // Per rank, the compute the straggler's imbalance is judged on, when there is a steadier
  // measure than c_r (trainers/diagnosis/straggler.h: the compute clock's per-step medians); empty: c_r.
  std::vector<double> imbalance_compute;
  std::optional<int> contended_rank;  // straggler.h's StragglerScan::contended
};

struct Diagnosis {
  std::string bottleneck;  // compute | communication | loader | straggler | contended
  std::optional<int> straggler_rank;
  std::string line;
  double comm_share = 0.0, loader_share = 0.0, straggler_share = 0.0;
};

Diagnosis diagnose(const DiagnosisInput& in);

}  // namespace dpscale
