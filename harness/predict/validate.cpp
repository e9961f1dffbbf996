// validate.cpp — measured DP points against their predictions.
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "calibration.h"
#include "contract/option_values.h"
#include "harness/analysis.h"
#include "harness/table.h"
#include "models/errors.h"

namespace dpscale::predict {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The prediction of one run, on the setup it recorded.
EpochPrediction predict_run(const SingleRun& single, const RunRecord& r) {
  SyncSetup sync;
  sync.mode = parse_sync_mode(r.mode);
  const int n_tensors = 2 * (static_cast<int>(r.widths.size()) - 1);
  sync.fused = sync.mode == SyncMode::naive && r.allreduce_calls_per_step == 1 && n_tensors > 1;
  if (r.bucket_cap_mb) sync.bucket_cap_mb = *r.bucket_cap_mb;
  if (r.first_bucket_mb) sync.first_bucket_mb = *r.first_bucket_mb;
  CommModel comm;
  comm.algo = r.allreduce == "star" ? CommAlgo::star : CommAlgo::ring;
  if (r.link != "none" && r.link_alpha_us && r.link_gbps) {
    comm.link = LinkModel{r.link, *r.link_alpha_us, *r.link_gbps, r.link_dilation};
  }
  return predict_epoch(single, Workload{r.n_samples, r.global_batch}, sync, comm, r.world_size);
}

}  // namespace

Validation validate(const std::string& results_path) {
  const ResultsFile f = read_results(results_path);
  std::map<std::string, SingleRun> singles;
  for (const SingleRun& s : singles_from_results(results_path)) {
    singles[s.spec.name == "custom" ? widths_to_string(s.spec.widths) : s.spec.name] = s;
  }
  Validation v;
  v.path = results_path;
  std::vector<PointKey> order;
  std::map<PointKey, std::vector<const RunRecord*>> runs;
  for (const SweepEntry& e : f.entries) {
    if (!e.ok || !e.record || e.record->mode == "single") continue;
    const PointKey key = PointKey::of(point_from_record(*e.record));
    if (!runs.count(key)) order.push_back(key);
    runs[key].push_back(&*e.record);
  }
  for (const PointKey& key : order) {
    const std::vector<const RunRecord*>& rs = runs[key];
    const RunRecord& r0 = *rs.front();
    const std::string model = r0.model == "custom" ? widths_to_string(r0.widths) : r0.model;
    const auto s = singles.find(model);
    if (s == singles.end()) {
      v.skipped.push_back(key.describe());
      continue;
    }
    std::vector<double> me, pe, mc, pc, mk, pk;
    ValidationRow row;
    for (const RunRecord* r : rs) {
      const EpochPrediction p = predict_run(s->second, *r);
      me.push_back(r->avg_epoch_s);
      pe.push_back(p.epoch_s);
      mc.push_back(r->mode == "naive" ? r->comm_s.value_or(0) : r->exposed_comm_s.value_or(0));
      pc.push_back(p.exposed_s);
      mk.push_back(r->compute_s);
      pk.push_back(p.compute_s);
      row.predicted_calls = p.calls_per_step;
    }
    row.model = model;
    row.mode = r0.mode;
    row.world_size = r0.world_size;
    row.bucket_cap_mb = r0.bucket_cap_mb;
    row.runs = static_cast<int>(rs.size());
    row.measured_epoch_s = median(me);
    row.predicted_epoch_s = median(pe);
    row.error = (row.predicted_epoch_s - row.measured_epoch_s) / row.measured_epoch_s;
    row.measured_comm_s = median(mc);
    row.predicted_comm_s = median(pc);
    row.measured_compute_s = median(mk);
    row.predicted_compute_s = median(pk);
    row.measured_calls = r0.allreduce_calls_per_step;
    row.single_epoch_s = predict_epoch(s->second, Workload{r0.n_samples, r0.global_batch}, SyncSetup{}, CommModel{}, 1).epoch_s;
    row.measured_speedup = row.single_epoch_s / row.measured_epoch_s;
    row.predicted_speedup = row.single_epoch_s / row.predicted_epoch_s;
    v.rows.push_back(row);
  }
  if (v.rows.empty()) throw InputError(results_path + ": no data-parallel run with a single-device run of its model");
  std::vector<double> abs_err;
  for (size_t i = 0; i < v.rows.size(); ++i) {
    abs_err.push_back(std::fabs(v.rows[i].error));
    if (abs_err.back() > std::fabs(v.rows[v.worst].error)) v.worst = i;
  }
  v.median_abs_error = median(abs_err);
  return v;
}

std::string render_validation(const Validation& v, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json j;
    j["results"] = v.path;
    j["median_abs_error"] = v.median_abs_error;
    j["worst"] = v.rows[v.worst].model + " " + v.rows[v.worst].mode + " K=" + std::to_string(v.rows[v.worst].world_size);
    j["worst_error"] = v.rows[v.worst].error;
    j["points"] = nlohmann::ordered_json::array();
    for (const ValidationRow& r : v.rows) {
      nlohmann::ordered_json p;
      p["model"] = r.model;
      p["mode"] = r.mode;
      p["world_size"] = r.world_size;
      p["bucket_cap_mb"] = r.bucket_cap_mb ? nlohmann::ordered_json(*r.bucket_cap_mb) : nlohmann::ordered_json(nullptr);
      p["runs"] = r.runs;
      p["measured_epoch_s"] = r.measured_epoch_s;
      p["predicted_epoch_s"] = r.predicted_epoch_s;
      p["error"] = r.error;
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
    return j.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "mode", "K", "cap MiB", "runs", "measured s", "predicted s", "error", "comm meas.", "comm pred.",
              "compute meas.", "compute pred.", "calls"};
  t.right = {false, false, true, true, true, true, true, true, true, true, true, true, true};
  const bool csv = format == "csv";
  auto num = [&](double x, int d) { return csv ? format_number(x) : fmt_fixed(x, d); };
  for (const ValidationRow& r : v.rows) {
    t.rows.push_back({r.model, r.mode, std::to_string(r.world_size), r.bucket_cap_mb ? format_number(*r.bucket_cap_mb) : "",
                      std::to_string(r.runs), num(r.measured_epoch_s, 3), num(r.predicted_epoch_s, 3),
                      csv ? format_number(r.error) : fmt_signed_percent(r.error), num(r.measured_comm_s, 3),
                      num(r.predicted_comm_s, 3), num(r.measured_compute_s, 3), num(r.predicted_compute_s, 3),
                      std::to_string(r.measured_calls) +
                          (r.measured_calls == r.predicted_calls ? "" : " (model " + std::to_string(r.predicted_calls) + ")")});
  }
  if (csv) return t.csv();
  std::string out = "Validation of " + v.path + " (epoch seconds; comm: naive's blocking phase, or the exposed wait; error = (predicted - measured) / measured).\n\n";
  out += t.markdown();
  const ValidationRow& w = v.rows[v.worst];
  out += "\nmedian |error| " + fmt_percent(v.median_abs_error, 1) + " over " + std::to_string(v.rows.size()) +
         " points; worst " + w.model + " " + w.mode + " K=" + std::to_string(w.world_size) +
         (w.bucket_cap_mb ? " cap " + format_number(*w.bucket_cap_mb) : "") + " at " + fmt_signed_percent(w.error) + "\n";
  for (const std::string& s : v.skipped) out += "skipped (no single-device run of its model): " + s + "\n";
  return out;
}

}  // namespace dpscale::predict
