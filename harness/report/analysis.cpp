// analysis.cpp — grouping, medians and the derived metrics described in analysis.h.
#include "harness/report/analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "contract/modes.h"
#include "core/median.h"

namespace dpscale {

namespace {

// The comm time that shows in the epoch: the field the mode's wait fills (contract/modes.h),
// naive's blocking phase or what finish() waited.
std::optional<double> visible_comm(ModeRef mode, const RunRecord& r) {
  switch (mode->wait_field) {
    case WaitField::comm_s: return r.comm_s;
    case WaitField::exposed_comm_s: return r.exposed_comm_s;
    default: return std::nullopt;
  }
}

std::optional<Spread> spread_if_any(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return spread_of(v);
}

// Per-epoch median over the repeats' curves of one field (see PointStats::loss_global).
std::vector<double> median_curve(const std::vector<const RunRecord*>& recs,
                                 std::vector<double> RunRecord::*field) {
  std::vector<const std::vector<double>*> curves;
  for (const RunRecord* r : recs) {
    if (!(r->*field).empty()) curves.push_back(&(r->*field));
  }
  if (curves.empty()) return {};
  size_t n = curves.front()->size();
  for (const auto* c : curves) n = std::min(n, c->size());
  std::vector<double> out;
  for (size_t e = 0; e < n; ++e) {
    std::vector<double> finite;  // a diverged repeat's NaN would poison the median
    for (const auto* c : curves) {
      if (std::isfinite((*c)[e])) finite.push_back((*c)[e]);
    }
    out.push_back(finite.empty() ? std::nan("") : spread_of(finite).median);
  }
  return out;
}

}  // namespace

Spread spread_of(std::vector<double> v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {median(v), *lo, *hi};
}

const PointStats* Analysis::find(const Point& k) const {
  for (const PointStats& p : points) {
    if (p.point == k) return &p;
  }
  return nullptr;
}

Analysis analyse(const ResultsFile& f) {
  Analysis a;
  a.warnings = f.warnings;
  std::vector<Point> order;
  std::map<Point, std::vector<const RunRecord*>> ok;
  std::set<std::string> ok_ids;
  for (const SweepEntry& e : f.entries) {
    const Point& k = e.point;
    if (!e.ok) continue;
    if (!ok.count(k)) order.push_back(k);
    ok[k].push_back(&*e.record);
    if (!e.run.run_id.empty()) ok_ids.insert(e.run.run_id);
  }
  for (const SweepEntry& e : f.entries) {
    if (e.ok) continue;
    a.failed.push_back({e, !e.run.run_id.empty() && ok_ids.count(e.run.run_id) > 0});
    const Point& k = e.point;
    if (!ok.count(k) && std::find(a.failed_points.begin(), a.failed_points.end(), k) == a.failed_points.end()) {
      a.failed_points.push_back(k);
    }
  }

  // Pass 1: per-point medians.
  for (const Point& k : order) {
    const auto& recs = ok[k];
    PointStats s;
    s.point = k;
    s.runs = static_cast<int>(recs.size());
    s.n_params = recs.front()->n_params;
    s.first = *recs.front();
    for (const RunRecord* r : recs) s.repeats.push_back(*r);  // for the diagnosis's medians
    std::vector<double> epoch, thr, tokens, compute, comm, frac, gamma, busy, buckets, final_loss, accuracy;
    for (const RunRecord* r : recs) {
      for (auto it = r->loss_global.rbegin(); it != r->loss_global.rend(); ++it)
        if (std::isfinite(*it)) {
          final_loss.push_back(*it);
          break;
        }
      if (r->test_accuracy) accuracy.push_back(*r->test_accuracy);
      epoch.push_back(r->avg_epoch_s);
      thr.push_back(r->throughput_samples_per_s);
      if (r->tokens_per_s > 0) tokens.push_back(r->tokens_per_s);
      compute.push_back(r->compute_s);
      if (r->comm_busy_s) busy.push_back(*r->comm_busy_s);
      if (r->n_buckets) buckets.push_back(*r->n_buckets);
      if (auto c = visible_comm(k.mode, *r)) {
        comm.push_back(*c);
        if (r->avg_epoch_s > 0) frac.push_back(*c / r->avg_epoch_s);
        // γ where comm and compute are separate phases: naive's (textbook 15.9).
        if (k.mode->wait_field == WaitField::comm_s && r->compute_s > 0) gamma.push_back(*c / r->compute_s);
      }
    }
    s.epoch_s = spread_of(epoch);
    s.throughput = spread_of(thr);
    s.tokens = spread_if_any(tokens);
    s.compute_s = spread_of(compute);
    s.comm_s = spread_if_any(comm);
    if (!frac.empty()) s.comm_fraction = spread_of(frac).median;
    if (!gamma.empty()) s.gamma = spread_of(gamma).median;
    s.comm_busy_s = spread_if_any(busy);
    if (!buckets.empty()) s.n_buckets = spread_of(buckets).median;
    s.loss_global = median_curve(recs, &RunRecord::loss_global);
    s.loss_rank0 = median_curve(recs, &RunRecord::loss_rank0);
    s.final_loss = spread_if_any(final_loss);
    s.test_accuracy = spread_if_any(accuracy);
    a.points.push_back(s);
  }

  // Pass 2: what needs another point — the single run of the model, naive at the same K.
  for (PointStats& s : a.points) {
    const PointStats* single = a.find(s.point.beside(Mode::single, 1));
    const PointStats* naive = a.find(s.point.beside(Mode::naive, s.point.world_size));
    const bool data_parallel = s.point.mode->data_parallel;
    const bool overlapped = s.point.mode->wait_field == WaitField::exposed_comm_s;
    if (overlapped && naive && naive->epoch_s.median > 0) {
      const double tn = naive->epoch_s.median;
      // A slower repeat saves less: the slowest gives the low end.
      s.naive_saving = Spread{1 - s.epoch_s.median / tn, 1 - s.epoch_s.max / tn, 1 - s.epoch_s.min / tn};
      s.naive_saving_s = tn - s.epoch_s.median;
    }
    if (!single || single->throughput.median <= 0) continue;
    const double t1 = single->throughput.median, k = s.point.world_size;
    s.speedup = s.throughput.median / t1;
    s.speedup_spread = Spread{*s.speedup, s.throughput.min / t1, s.throughput.max / t1};
    s.efficiency = *s.speedup / k;
    s.efficiency_spread = Spread{*s.efficiency, s.speedup_spread->min / k, s.speedup_spread->max / k};
    if (!data_parallel || !naive || !naive->comm_s) continue;
    const double T1 = single->epoch_s.median, Tc = naive->comm_s->median;
    const double frac = T1 / (T1 + Tc);
    s.amdahl_max = 1.0 / ((1.0 - frac) + frac / k);
  }
  return a;
}

}  // namespace dpscale
