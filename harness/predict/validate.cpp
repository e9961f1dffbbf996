// validate.cpp — measured DP points against their predictions, and the error summary.
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "calibration.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "core/median.h"
#include "harness/common/table.h"
#include "harness/results/machine_state.h"
#include "harness/results/results_file.h"

namespace dpscale::predict {

namespace {

// Nearest rank: the smallest value with at least 90% of the values at or below it.
double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

ErrorSummary summarize(const std::vector<ValidationRow>& rows, const std::string& scope) {
  ErrorSummary s;
  s.scope = scope;
  std::vector<double> abs_err, err;
  bool have_worst = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ValidationRow& r = rows[i];
    if (r.disturbed || (scope != "all" && r.mode != scope)) continue;
    abs_err.push_back(std::fabs(r.error));
    err.push_back(r.error);
    if (!have_worst || std::fabs(r.error) > std::fabs(rows[s.worst].error)) s.worst = i, have_worst = true;
  }
  s.points = static_cast<int>(err.size());
  if (s.points > 0) {
    s.median_abs = median(abs_err);
    s.p90_abs = p90(abs_err);
    s.signed_median = median(err);
  }
  return s;
}

}  // namespace

std::string ValidationRow::cause() const {
  return std::fabs(predicted_compute_s - measured_compute_s) >= std::fabs(predicted_comm_s - measured_comm_s) ? "compute"
                                                                                                              : "comm";
}

Validation validate(const std::string& results_path, const std::optional<Calibration>& calibration) {
  const RunsToCheck in = runs_to_check(results_path, calibration, "; validate on the calibrated machine's runs");
  const MachineTerms& terms = in.terms;
  Validation v;
  v.path = results_path;
  v.calibration = calibration;
  std::vector<Point> order;
  std::map<Point, std::vector<const SweepEntry*>> runs;
  for (const SweepEntry& e : in.file.entries) {
    if (!e.ok || !e.record || !e.point.mode->data_parallel) continue;
    if (!runs.count(e.point)) order.push_back(e.point);
    runs[e.point].push_back(&e);
  }
  for (const Point& key : order) {
    if (calibration && std::find(calibration->fitted.begin(), calibration->fitted.end(), key) != calibration->fitted.end()) {
      v.fitted.push_back(key.describe());
      continue;
    }
    const std::vector<const SweepEntry*>& es = runs[key];
    const RunRecord& r0 = *es.front()->record;
    const SingleRun* single = in.single_for(key);
    if (!single) {
      v.skipped.push_back(key.describe());
      continue;
    }
    std::vector<double> me, pe, mc, pc, mk, pk;
    ValidationRow row;
    for (const SweepEntry* e : es) {
      const RunRecord& r = *e->record;
      const EpochPrediction p = predict_recorded(*single, r, terms);
      me.push_back(r.avg_epoch_s);
      pe.push_back(p.epoch_s);
      mc.push_back(key.mode->wait_field == WaitField::comm_s ? r.comm_s.value_or(0) : r.exposed_comm_s.value_or(0));
      pc.push_back(p.exposed_s);
      mk.push_back(r.compute_s);
      pk.push_back(p.compute_s);
      row.predicted_calls = p.calls_per_step;
      if (e->state && e->state->disturbed) row.disturbed = true;
    }
    row.point = key;
    row.mode = key.mode.name();
    if (key.mode == Mode::sharded) {
      row.mode += " stage " + std::to_string(r0.shard_stage);
      if (r0.shard_stage == 3) row.mode += " prefetch " + std::to_string(r0.prefetch_units.value_or(TrainOptions{}.prefetch_units));
    }
    row.runs = static_cast<int>(es.size());
    row.measured_epoch_s = median(me);
    row.predicted_epoch_s = median(pe);
    row.error = (row.predicted_epoch_s - row.measured_epoch_s) / row.measured_epoch_s;
    row.measured_comm_s = median(mc);
    row.predicted_comm_s = median(pc);
    row.measured_compute_s = median(mk);
    row.predicted_compute_s = median(pk);
    row.measured_calls = r0.allreduce_calls_per_step;
    row.single_epoch_s = predict_epoch(*single, Workload{r0.n_samples, r0.global_batch, r0.seq_len}, SyncSetup{}, CommModel{}, 1).epoch_s;
    row.measured_speedup = row.single_epoch_s / row.measured_epoch_s;
    row.predicted_speedup = row.single_epoch_s / row.predicted_epoch_s;
    v.rows.push_back(row);
  }
  if (v.rows.empty()) {
    throw InputError(results_path + ": no held-out data-parallel run with a single-device run of its point to validate");
  }
  for (const ModeInfo& m : all_modes()) {
    if (!m.data_parallel) continue;
    std::vector<std::string> labels;  // the mode's, or each sharded stage's, in row order
    for (const ValidationRow& r : v.rows) {
      if (r.point.mode == m.mode && std::find(labels.begin(), labels.end(), r.mode) == labels.end()) labels.push_back(r.mode);
    }
    std::sort(labels.begin(), labels.end());
    for (const std::string& label : labels) {
      const ErrorSummary s = summarize(v.rows, label);
      if (s.points > 0) v.summary.push_back(s);
    }
  }
  v.summary.push_back(summarize(v.rows, "all"));
  v.median_abs_error = v.summary.back().median_abs;
  v.worst = v.summary.back().worst;
  return v;
}

std::string render_validation(const Validation& v, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json j;
    j["results"] = v.path;
    j["calibration"] = v.calibration ? nlohmann::ordered_json(v.calibration->path) : nlohmann::ordered_json(nullptr);
    if (v.calibration) {
      nlohmann::ordered_json terms = nlohmann::ordered_json::array();
      for (const TermFit& t : v.calibration->fits) {
        terms.push_back({{"term", t.name}, {"value", t.value}, {"unit", t.unit}, {"runs", t.runs}, {"from", t.from}});
      }
      j["terms"] = terms;
      j["fit_world_size"] = v.calibration->fit_k;
    }
    j["point_schema"] = point_schema();  // each point's "point" follows it
    j["median_abs_error"] = v.median_abs_error;
    j["worst"] = v.rows[v.worst].point.describe();
    j["worst_error"] = v.rows[v.worst].error;
    j["summary"] = nlohmann::ordered_json::array();
    for (const ErrorSummary& s : v.summary) {
      j["summary"].push_back({{"scope", s.scope}, {"points", s.points}, {"median_abs_error", s.median_abs},
                              {"p90_abs_error", s.p90_abs}, {"signed_median_error", s.signed_median},
                              {"worst", v.rows[s.worst].point.describe()}, {"worst_error", v.rows[s.worst].error},
                              {"worst_cause", v.rows[s.worst].cause()}});
    }
    j["points"] = nlohmann::ordered_json::array();
    for (const ValidationRow& r : v.rows) {
      nlohmann::ordered_json p;
      p["point"] = r.point.to_json();  // read through the point's schema (`dpscale schema`)
      p["describe"] = r.point.describe();
      p["mode"] = r.mode;  // the sharded stage with it
      p["runs"] = r.runs;
      p["disturbed"] = r.disturbed;
      p["measured_epoch_s"] = r.measured_epoch_s;
      p["predicted_epoch_s"] = r.predicted_epoch_s;
      p["error"] = r.error;
      p["cause"] = r.cause();
      p["measured_comm_s"] = r.measured_comm_s;
      p["predicted_comm_s"] = r.predicted_comm_s;
      p["measured_compute_s"] = r.measured_compute_s;
      p["predicted_compute_s"] = r.predicted_compute_s;
      p["measured_calls"] = r.measured_calls;
      p["predicted_calls"] = r.predicted_calls;
      p["single_epoch_s"] = r.single_epoch_s;
      p["measured_speedup"] = r.measured_speedup;
      p["predicted_speedup"] = r.predicted_speedup;
      j["points"].push_back(p);
    }
    j["skipped"] = v.skipped;
    j["fitted"] = v.fitted;
    return j.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "mode", "K", "cap MiB", "link", "runs", "measured s", "predicted s", "error", "comm meas.",
              "comm pred.", "compute meas.", "compute pred.", "calls"};
  t.right = {false, false, true, true, false, true, true, true, true, true, true, true, true, true};
  const bool csv = format == "csv";
  auto num = [&](double x, int d) { return csv ? format_number(x) : fmt_fixed(x, d); };
  for (const ValidationRow& r : v.rows) {
    const auto cap = r.point.bucket_cap_mb();
    t.rows.push_back({r.point.model, r.mode, std::to_string(r.point.world_size), cap ? format_number(*cap) : "",
                      r.point.link(), std::to_string(r.runs) + (r.disturbed && !csv ? " disturbed" : ""),
                      num(r.measured_epoch_s, 3), num(r.predicted_epoch_s, 3),
                      csv ? format_number(r.error) : fmt_signed_percent(r.error), num(r.measured_comm_s, 3),
                      num(r.predicted_comm_s, 3), num(r.measured_compute_s, 3), num(r.predicted_compute_s, 3),
                      std::to_string(r.measured_calls) +
                          (r.measured_calls == r.predicted_calls ? "" : " (model " + std::to_string(r.predicted_calls) + ")")});
  }
  if (csv) return t.csv();
  std::string out;
  if (v.calibration) out += describe_fits(*v.calibration) + "\n";
  out += "Validation of " + v.path +
         " (epoch seconds; comm: naive's blocking phase, or the exposed wait; error = (predicted - measured) / measured).\n\n";
  out += t.markdown();
  Table s;
  s.header = {"mode", "points", "median |error|", "P90 |error|", "bias (signed median)", "worst", "its error", "from"};
  s.right = {false, true, true, true, true, false, true, false};
  for (const ErrorSummary& e : v.summary) {
    const ValidationRow& w = v.rows[e.worst];
    s.rows.push_back({e.scope, std::to_string(e.points), fmt_percent(e.median_abs, 1), fmt_percent(e.p90_abs, 1),
                      fmt_signed_percent(e.signed_median), w.point.describe(), fmt_signed_percent(w.error), w.cause()});
  }
  out += "\n" + s.markdown();
  out += "\nmedian |error| " + fmt_percent(v.median_abs_error, 1) + " over " + std::to_string(v.summary.back().points) +
         " points; worst " + v.rows[v.worst].point.describe() + " at " + fmt_signed_percent(v.rows[v.worst].error) + "\n";
  for (const std::string& x : v.fitted) out += "not scored (the calibration fitted it): " + x + "\n";
  for (const std::string& x : v.skipped) out += "skipped (no single-device run of its point): " + x + "\n";
  for (const ValidationRow& r : v.rows) {
    if (r.disturbed) out += "not in the summary (a run the machine disturbed): " + r.point.describe() + "\n";
  }
  return out;
}

}  // namespace dpscale::predict
