// straggler.cpp — the rule of straggler.h.
#include "trainers/diagnosis/straggler.h"

#include <algorithm>
#include <cstdio>

#include "core/median.h"

namespace dpscale {

namespace {

// The median of every rank's `field` but rank `skip`'s (0 with no other rank).
double median_except(const std::vector<RankMedians>& ranks, int skip, double RankMedians::*field) {
  std::vector<double> rest;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (static_cast<int>(r) != skip) rest.push_back(ranks[r].*field);
  }
  return median(rest);
}

// The excess of the largest value over the median of the rest, and whose it is.
std::pair<int, double> excess(const std::vector<RankMedians>& ranks, double RankMedians::*field) {
  int slow = 0;
  for (size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].*field > ranks[slow].*field) slow = static_cast<int>(r);
  }
  return {slow, std::max(0.0, ranks[slow].*field - median_except(ranks, slow, field))};
}

}  // namespace

StragglerScan find_straggler(const std::vector<RankMedians>& ranks, double step_s) {
  StragglerScan scan;
  if (ranks.size() < 2 || !(step_s > 0)) return scan;
  struct Cause {
    const char* name;
    double RankMedians::*field;
    double* share;
  };
  const Cause causes[] = {{"compute", &RankMedians::compute, &scan.compute_share},
                          {"loader", &RankMedians::loader, &scan.loader_share},
                          {"link", &RankMedians::link, &scan.link_share}};
  Straggler best[3];
  for (int i = 0; i < 3; ++i) {
    const auto [rank, ex] = excess(ranks, causes[i].field);
    *causes[i].share = ex / step_s;
    best[i] = Straggler{rank, causes[i].name, ex, ex / step_s};
  }
  // The largest share names the cause (ties go to the earlier cause: compute, loader, link).
  const Straggler* top = &best[0];
  for (const Straggler& b : best) {
    if (b.share > top->share) top = &b;
  }
  if (top->share < kStragglerShare) return scan;
  Straggler s = *top;
  if (s.cause == "compute") {
    s.delay_excess_s = ranks[static_cast<size_t>(s.rank)].compute_run_delay -
                       median_except(ranks, s.rank, &RankMedians::compute_run_delay);
    if ((s.excess_s - s.delay_excess_s) / step_s < kStragglerShare) {
      scan.contended = s;
      return scan;
    }
  }
  scan.found = s;
  return scan;
}

std::string describe(const StragglerScan& s) {
  char b[260];
  char shares[120];
  std::snprintf(shares, sizeof shares, "largest excess: compute %.1f%%, loader %.1f%%, link %.1f%% of the step",
                100.0 * s.compute_share, 100.0 * s.loader_share, 100.0 * s.link_share);
  if (s.found) {
    // A compute excess read on a clock's interval says how much of it was waiting for a CPU (the
    // part the rule took off before it kept the rank); on CPU time there is none to say.
    char delay[48] = "";
    if (s.found->delay_excess_s != 0.0) {
      std::snprintf(delay, sizeof delay, ", run delay %+.1f ms", 1e3 * s.found->delay_excess_s);
    }
    std::snprintf(b, sizeof b, "straggler rank %d (%s): +%.1f ms per step%s (%s)", s.found->rank,
                  s.found->cause.c_str(), 1e3 * s.found->excess_s, delay, shares);
  } else if (s.contended) {
    std::snprintf(b, sizeof b, "no straggler: rank %d contended (%s +%.1f ms per step, run delay +%.1f ms) (%s)",
                  s.contended->rank, s.contended->cause.c_str(), 1e3 * s.contended->excess_s,
                  1e3 * s.contended->delay_excess_s, shares);
  } else {
    std::snprintf(b, sizeof b, "no straggler (%s)", shares);
  }
  return b;
}

}  // namespace dpscale
