// ab_files.h — hand-made results lines with chosen epoch times, for the judges' tests: one run of
// a point in a round, fit by its machine state (its ranks waited 1% of the epochs for a CPU, the
// probes at the usual figure) or disturbed by a larger wait, or a failed run; and `dpscale ab`'s
// verdicts on two such files (ab_document, then gate.py, as the command judges).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/ab/ab_judge.h"
#include "harness/report/gate.h"
#include "harness/results/machine_state.h"
#include "harness/results/results_file.h"
#include "harness_util.h"

namespace dpscale::test {

// The probe every hand-made run reads before and after it: the files' usual figure.
inline constexpr double kUsualProbe = 40.0;

// A successful run of `p` whose epoch took `epoch_s` (throughput 32768 / epoch_s); a data-parallel
// run spends 0.2 s of it communicating. `run_delay` above 0.15 makes it disturbed. `edit`, where
// given, fills the record's fields of the run's other settings (its wire format, ...).
inline std::string timed_line(const SweepRun& p, double epoch_s, double run_delay = 0.01,
                              const std::function<void(RunRecord&)>& edit = {}) {
  RunRecord r = make_record(p, epoch_s, p.point.mode == Mode::single ? std::nullopt : std::optional<double>(0.2));
  r.run_delay_share = run_delay;
  if (edit) edit(r);
  RunInfo info;
  info.config = "judge";
  info.run_id = p.run_id("judge");
  info.argv = argv_of(p);
  info.host = "testhost";
  MachineState s;
  s.others_cpus = 0.02;
  s.probe_before_gflops = s.probe_after_gflops = kUsualProbe;
  const nlohmann::json system = {{"host", "testhost"}, {"cpu_model", "AMD EPYC 7B13"}, {"cpu_count", 2},
                                 {"gpu_model", nullptr}, {"state", to_json(s)}};
  return make_sweep_line(p.point, p.repeat, info, nlohmann::ordered_json(system), r, "").dump() + "\n";
}

// The two points the judges' tests pair: small's single run and its naive run at K = 2, in a round.
inline SweepRun single_run(int round) { return pt("small", "single", 1, {}, "none", round); }
inline SweepRun naive_run(int round) { return pt("small", "naive", 2, {}, "none", round); }

// A run of `p` that failed (no record).
inline std::string failed_line(const SweepRun& p) { return sweep_line(p, std::nullopt, "exit 1", "judge"); }

// gate.py's verdicts of B's file against A's, by each point's "describe" ("small naive K=2 speedup").
struct AbVerdicts {
  int exit_code = 0;
  std::map<std::string, nlohmann::json> points;
  std::string text;
};

// Judged as a session judges: the alike limit at half the minimum effect (run_ab_session sets it).
inline AbVerdicts ab_verdicts(const std::string& a_text, const std::string& b_text, double min_effect, int rounds) {
  GateOptions o;
  o.format = "json";
  o.min_effect = min_effect;
  o.limits.alike_run_delay = min_effect / 2;
  const GateResult r = judge_document(
      ab_document(parse_results(a_text, "a.jsonl"), parse_results(b_text, "b.jsonl"), o, AbLabels{"a", "b", rounds}), o);
  AbVerdicts v;
  v.exit_code = r.exit_code;
  v.text = r.text;
  for (const nlohmann::json& p : r.verdicts["points"]) v.points[p["describe"].get<std::string>()] = p;
  return v;
}

}  // namespace dpscale::test
