// ab_judge.cpp — pairing A's and B's runs round by round into throughput and speedup ratios,
// and the document the gate's statistics judge (ab_judge.h).
#include "harness/ab/ab_judge.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "contract/modes.h"
#include "core/errors.h"
#include "core/median.h"
#include "harness/report/analysis.h"
#include "harness/results/machine_state.h"

namespace dpscale {

namespace {

using nlohmann::json;

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

// One build's runs of one point, by round.
using Rounds = std::map<int, const SweepEntry*>;

std::map<Point, Rounds> by_point(const ResultsFile& f) {
  std::map<Point, Rounds> out;
  for (const SweepEntry& e : f.entries) out[e.point][e.repeat] = &e;
  return out;
}

std::optional<std::string> disturbed(const SweepEntry& e, double idle, const DisturbanceLimits& lim) {
  return e.state ? disturbance(*e.state, e.record->run_delay_share, idle, lim) : std::nullopt;
}

// Neither run disturbed, both with a run delay, and yet further apart than the contention may
// move a ratio judged at this minimum effect (lost_alike): such a pair compares the contention,
// not the builds (a single run that lost 8% of its epochs beside one that lost none is about 8%
// slower, whatever the builds). Off where the alike limit is not set.
bool waited_unalike(const SweepEntry& ea, const SweepEntry& eb, double idle, const DisturbanceLimits& lim) {
  return lim.alike_run_delay > 0 && ea.ok && eb.ok && ea.state && eb.state && ea.record->run_delay_share &&
         eb.record->run_delay_share && !disturbed(ea, idle, lim) && !disturbed(eb, idle, lim) &&
         !lost_alike(*ea.state, ea.record->run_delay_share, *eb.state, eb.record->run_delay_share, idle, lim);
}

// The ratios of one point, and the rounds left out (with why) or judged though disturbed alike.
struct Pairs {
  std::vector<int> rounds;  // the round of each ratio
  std::vector<double> ratios, a_thr, b_thr;
  std::vector<std::string> left_out, alike;
  int b_ok = 0, b_failed_where_a_ran = 0;
};

Pairs pair_rounds(const Rounds& a, const Rounds& b, double idle, const GateOptions& o) {
  Pairs p;
  for (const auto& [round, eb] : b) {
    const std::string name = "round " + std::to_string(round + 1);
    const auto ia = a.find(round);
    if (eb->ok) ++p.b_ok;
    if (ia == a.end() || !ia->second->ok) {
      p.left_out.push_back(name + ": A's run " + (ia == a.end() ? "is missing" : "failed"));
      continue;
    }
    const SweepEntry& ea = *ia->second;
    if (!eb->ok) {
      ++p.b_failed_where_a_ran;
      p.left_out.push_back(name + ": B's run failed (" + eb->reason + ")");
      continue;
    }
    const auto why_a = disturbed(ea, idle, o.limits), why_b = disturbed(*eb, idle, o.limits);
    if (why_a || why_b) {
      // Both halves slowed alike by their ranks' own wait for a CPU: the ratio keeps its meaning.
      if (!(why_a && why_b && ea.state && eb->state &&
            lost_alike(*ea.state, ea.record->run_delay_share, *eb->state, eb->record->run_delay_share, idle,
                       o.limits))) {
        p.left_out.push_back(name + ": " + (why_a ? "A " + *why_a : std::string()) + (why_a && why_b ? "; " : "") +
                             (why_b ? "B " + *why_b : std::string()));
        continue;
      }
      p.alike.push_back(name + ": run delay " + pct(*ea.record->run_delay_share) + " (A) and " +
                        pct(*eb->record->run_delay_share) + " (B)");
    } else if (waited_unalike(ea, *eb, idle, o.limits)) {
      p.left_out.push_back(name + ": run delay " + pct(*ea.record->run_delay_share) + " (A) and " +
                           pct(*eb->record->run_delay_share) + " (B), too far apart to compare");
      continue;
    }
    const double ta = ea.record->throughput_samples_per_s, tb = eb->record->throughput_samples_per_s;
    if (!(ta > 0) || !(tb > 0)) continue;
    p.rounds.push_back(round);
    p.ratios.push_back(tb / ta);
    p.a_thr.push_back(ta);
    p.b_thr.push_back(tb);
  }
  return p;
}

double usual_probe_of(const ResultsFile& a, const ResultsFile& b) {
  std::vector<const MachineState*> states;
  for (const ResultsFile* f : {&a, &b}) {
    for (const SweepEntry& e : f->entries) {
      if (e.state) states.push_back(&*e.state);
    }
  }
  return usual_probe(states);
}

// A point's paired verdict input: one ratio (B over A) per round, what was left out and why.
json paired_point(const Point& k, const std::string& metric, const Pairs& p, double base_median, double now_median,
                  const std::string& unit) {
  json pt;
  pt["key"] = k.to_json();
  pt["describe"] = k.describe() + " " + metric;
  pt["curve"] = metric + " " + k.curve();
  pt["metric"] = metric;
  if (p.b_ok == 0 && p.b_failed_where_a_ran > 0) {
    pt["status"] = "failed";
    pt["why"] = "every run of B failed where A's ran";
    return pt;
  }
  pt["status"] = "compared";
  pt["test"] = "paired";
  pt["pairs"] = {{"ratios", p.ratios}, {"left_out", p.left_out}, {"alike", p.alike},
                 {"base_median", base_median}, {"now_median", now_median}, {"unit", unit}};
  return pt;
}

}  // namespace

json throughput_points(const ResultsFile& a, const ResultsFile& b, const GateOptions& o) {
  const double idle = usual_probe_of(a, b);
  const std::map<Point, Rounds> as = by_point(a), bs = by_point(b);
  json points = json::array();
  for (const auto& [k, b_rounds] : bs) {
    const auto ia = as.find(k);
    const Pairs p = pair_rounds(ia == as.end() ? Rounds{} : ia->second, b_rounds, idle, o);
    points.push_back(paired_point(k, "throughput", p, median(p.a_thr), median(p.b_thr), "samples/s"));
  }
  return points;
}

json speedup_points(const ResultsFile& a, const ResultsFile& b, const GateOptions& o) {
  const double idle = usual_probe_of(a, b);
  const std::map<Point, Rounds> as = by_point(a), bs = by_point(b);
  auto pairs_of = [&](const Point& k) {
    const auto ia = as.find(k), ib = bs.find(k);
    return pair_rounds(ia == as.end() ? Rounds{} : ia->second, ib == bs.end() ? Rounds{} : ib->second, idle, o);
  };
  json points = json::array();
  for (const auto& [k, b_rounds] : bs) {
    if (!k.mode->data_parallel) continue;
    const Pairs dp = pairs_of(k), single = pairs_of(k.beside(Mode::single, 1));
    std::map<int, size_t> single_at;  // round -> index into single's pairs
    for (size_t i = 0; i < single.rounds.size(); ++i) single_at[single.rounds[i]] = i;
    Pairs sp;
    sp.b_ok = dp.b_ok;
    sp.b_failed_where_a_ran = dp.b_failed_where_a_ran;
    sp.left_out = dp.left_out;
    sp.alike = dp.alike;
    std::vector<double> a_speedups, b_speedups;
    for (size_t i = 0; i < dp.rounds.size(); ++i) {
      const auto s = single_at.find(dp.rounds[i]);
      if (s == single_at.end()) {
        sp.left_out.push_back("round " + std::to_string(dp.rounds[i] + 1) + ": no fit pair of single runs to measure "
                              "the speedups against");
        continue;
      }
      sp.rounds.push_back(dp.rounds[i]);
      sp.ratios.push_back(dp.ratios[i] / single.ratios[s->second]);
      a_speedups.push_back(dp.a_thr[i] / single.a_thr[s->second]);
      b_speedups.push_back(dp.b_thr[i] / single.b_thr[s->second]);
    }
    points.push_back(paired_point(k, "speedup", sp, median(a_speedups), median(b_speedups), "×"));
  }
  return points;
}

void check_judgeable(const ResultsFile& a, const ResultsFile& b, const AbLabels& labels) {
  if (const std::string other = other_machine(b, a); !other.empty()) {
    throw InputError(other + ": the gate compares a machine with itself (a session runs both builds on one machine)");
  }
  auto refuse_if_none_ran = [](const ResultsFile& f, const std::string& build, const std::string& dir) {
    if (f.entries.empty() || std::any_of(f.entries.begin(), f.entries.end(), [](const SweepEntry& e) { return e.ok; })) {
      return;
    }
    const SweepEntry& first = f.entries.front();
    throw InputError("build " + build + " (" + dir + ") has no successful run: its " + std::to_string(f.entries.size()) +
                     " runs in " + f.path + " all failed (the first, " + first.point.describe() + " in round " +
                     std::to_string(first.repeat + 1) + ": " + first.reason + ")");
  };
  refuse_if_none_ran(a, "A", labels.a_dir);
  refuse_if_none_ran(b, "B", labels.b_dir);
}

json ab_document(const ResultsFile& a, const ResultsFile& b, const GateOptions& o, const AbLabels& labels) {
  GateFiles files;
  files.now_path = b.path;
  files.now = b;
  files.bases = {a};
  json doc = gate_document(files, o);  // the gate's constants and frame; the points are ab's own
  doc["points"] = speedup_points(a, b, o);
  for (json& p : throughput_points(a, b, o)) doc["points"].push_back(std::move(p));
  doc["title"] = {"dpscale ab: B (" + labels.b_dir + ") against A (" + labels.a_dir + "), " +
                      std::to_string(labels.rounds) + " rounds alternating A B B A, B A A B",
                  "throughput: B's run over A's of the same round, paired; speedup: B's speedup over A's in the same "
                  "round (each build's DP run over its own single run), paired"};
  doc["value_head"] = "A → B";
  // The minimum effect is the loss CI must catch: a significant change of three quarters of it
  // or more is judged (harness/report/gate.py, min_effect_line), as a loss of exactly that size
  // nearly always is; the line measured against A/A sessions in docs/ab.md.
  doc["min_effect_line"] = kAbMinEffectLine;
  return doc;
}

}  // namespace dpscale
