// analysis.cpp — grouping, medians and the derived metrics described in analysis.h.
#include "analysis.h"

#include <algorithm>
#include <map>
#include <set>

namespace dpscale {

namespace {

// The comm time that shows in the epoch: naive's blocking phase, or what finish() waited.
std::optional<double> visible_comm(const RunRecord& r) {
  if (r.mode == "naive") return r.comm_s;
  if (r.mode == "single") return std::nullopt;
  return r.exposed_comm_s;
}

std::optional<Spread> spread_if_any(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return spread_of(v);
}

}  // namespace

std::string PointKey::describe() const {
  SweepPoint p{model, mode, world_size, bucket_cap_mb, link, 0};
  return p.describe();
}

Spread spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {med, v.front(), v.back()};
}

const PointStats* Analysis::find(const PointKey& k) const {
  for (const PointStats& p : points) {
    if (p.key == k) return &p;
  }
  return nullptr;
}

Analysis analyse(const ResultsFile& f) {
  Analysis a;
  std::vector<PointKey> order;
  std::map<PointKey, std::vector<const RunRecord*>> ok;
  std::set<std::string> ok_ids;
  for (const SweepEntry& e : f.entries) {
    const PointKey k = PointKey::of(e.point);
    if (!e.ok) continue;
    if (!ok.count(k)) order.push_back(k);
    ok[k].push_back(&*e.record);
    if (!e.run.run_id.empty()) ok_ids.insert(e.run.run_id);
  }
  for (const SweepEntry& e : f.entries) {
    if (e.ok) continue;
    a.failed.push_back({e, !e.run.run_id.empty() && ok_ids.count(e.run.run_id) > 0});
    const PointKey k = PointKey::of(e.point);
    if (!ok.count(k) && std::find(a.failed_points.begin(), a.failed_points.end(), k) == a.failed_points.end()) {
      a.failed_points.push_back(k);
    }
  }

  // Pass 1: per-point medians.
  for (const PointKey& k : order) {
    const auto& recs = ok[k];
    PointStats s;
    s.key = k;
    s.runs = static_cast<int>(recs.size());
    s.n_params = recs.front()->n_params;
    std::vector<double> epoch, thr, compute, comm, frac, gamma;
    for (const RunRecord* r : recs) {
      epoch.push_back(r->avg_epoch_s);
      thr.push_back(r->throughput_samples_per_s);
      compute.push_back(r->compute_s);
      if (auto c = visible_comm(*r)) {
        comm.push_back(*c);
        if (r->avg_epoch_s > 0) frac.push_back(*c / r->avg_epoch_s);
        if (r->mode == "naive" && r->compute_s > 0) gamma.push_back(*c / r->compute_s);
      }
    }
    s.epoch_s = spread_of(epoch);
    s.throughput = spread_of(thr);
    s.compute_s = spread_of(compute);
    s.comm_s = spread_if_any(comm);
    if (!frac.empty()) s.comm_fraction = spread_of(frac).median;
    if (!gamma.empty()) s.gamma = spread_of(gamma).median;
    a.points.push_back(s);
  }

  // Pass 2: what needs another point — the single run of the model, naive at the same K.
  for (PointStats& s : a.points) {
    const PointStats* single = a.find({s.key.model, "single", 1, std::nullopt, "none"});
    if (!single || single->throughput.median <= 0) continue;
    const double t1 = single->throughput.median;
    s.speedup = s.throughput.median / t1;
    s.speedup_spread = Spread{*s.speedup, s.throughput.min / t1, s.throughput.max / t1};
    s.efficiency = *s.speedup / s.key.world_size;
    if (s.key.mode == "single") continue;
    const PointStats* naive = a.find({s.key.model, "naive", s.key.world_size, std::nullopt, s.key.link});
    if (!naive || !naive->comm_s) continue;
    const double T1 = single->epoch_s.median, Tc = naive->comm_s->median;
    const double frac = T1 / (T1 + Tc);
    s.amdahl_max = 1.0 / ((1.0 - frac) + frac / s.key.world_size);
  }
  return a;
}

}  // namespace dpscale
