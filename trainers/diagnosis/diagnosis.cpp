// diagnosis.cpp — the rule of diagnosis.h.
#include "trainers/diagnosis/diagnosis.h"

#include <algorithm>
#include <cstdio>

#include "core/median.h"

namespace dpscale {

namespace {
std::string pct(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * share);
  return b;
}
std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f ms", 1e3 * s);
  return b;
}
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}
}  // namespace

Diagnosis diagnose(const DiagnosisInput& in) {
  Diagnosis d;
  const size_t k = in.ranks.size();
  const double step = in.step_s > 0 ? in.step_s : 1.0;
  std::vector<double> c;
  for (const RankStep& r : in.ranks) c.push_back(r.compute);
  if (in.imbalance_compute.size() == k) c = in.imbalance_compute;
  size_t slow = 0;
  for (size_t r = 1; r < k; ++r) {
    if (c[r] > c[slow]) slow = r;
  }
  double imbalance = 0.0, others = 0.0;
  if (k > 1) {
    std::vector<double> rest;
    for (size_t r = 0; r < k; ++r) {
      if (r != slow) rest.push_back(c[r]);
    }
    others = median(rest);
    imbalance = std::max(0.0, c[slow] - others);
  }
  const double exposed = k ? in.ranks[slow].wait : 0.0;
  double loader = 0.0, compute = 0.0;
  for (const RankStep& r : in.ranks) {
    loader += r.loader / static_cast<double>(k);
    compute += r.compute / static_cast<double>(k);
  }
  d.comm_share = exposed / step;
  d.loader_share = loader / step;
  d.straggler_share = imbalance / step;
  const double gamma = compute > 0 ? in.busy_s / compute : 0.0;

  const double top = std::max({d.comm_share, d.loader_share, d.straggler_share});
  if (top < kBottleneckShare) {
    d.bottleneck = "compute";
    d.line = "compute-bound: compute is " + pct(std::min(1.0, compute / step)) + " of the " + ms(step) +
             " step; exposed all-reduce " + pct(d.comm_share) + ", loader " + pct(d.loader_share) +
             ", rank imbalance " + pct(d.straggler_share) + (in.data_parallel ? "; γ = " + num(gamma) : "");
  } else if (top == d.straggler_share && in.contended_rank == static_cast<int>(slow)) {
    d.bottleneck = "contended";
    d.line = "contended: rank " + std::to_string(slow) + " computes " + ms(imbalance) + " (" + pct(d.straggler_share) +
             " of the step) longer than the others, nearly all of it waiting for a CPU: the machine, not the rank";
  } else if (top == d.straggler_share) {
    d.bottleneck = "straggler";
    d.straggler_rank = static_cast<int>(slow);
    d.line = "straggler: rank " + std::to_string(slow) + " computes " + ms(c[slow]) + " per step, " +
             ms(imbalance) + " (" + pct(d.straggler_share) + " of the step) longer than the others, who wait for it " +
             "in the all-reduce";
  } else if (top == d.comm_share) {
    d.bottleneck = "communication";
    d.line = "communication-bound: " + pct(d.comm_share) + " of the " + ms(step) + " step waits on all-reduce; γ = " +
             num(gamma);
  } else {
    d.bottleneck = "loader";
    d.line = "loader-bound: " + pct(d.loader_share) + " of the " + ms(step) + " step waits for the next batch (" +
             ms(loader) + " per step)";
  }
  return d;
}

}  // namespace dpscale
