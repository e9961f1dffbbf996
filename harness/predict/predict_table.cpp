// predict_table.cpp — rows, the knee, and the md/csv/json renderings.
#include "predict_table.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "contract/option_values.h"
#include "harness/common/table.h"

namespace dpscale::predict {

PredictRow predict_row(const SingleRun& s, const PredictContext& ctx, Mode mode, int k) {
  SyncSetup sync = ctx.sync;
  sync.mode = mode;
  PredictRow r;
  r.model = s.spec.key();
  r.mode = mode_name(mode);
  r.world_size = k;
  if (mode == Mode::bucketed) r.bucket_cap_mb = sync.bucket_cap_mb;
  r.p = predict_epoch(s, ctx.workload, sync, ctx.comm, k, ctx.terms);
  r.single_epoch_s = predict_epoch(s, ctx.workload, sync, ctx.comm, 1, ctx.terms).epoch_s;
  r.speedup = r.single_epoch_s / r.p.epoch_s;
  r.efficiency = r.speedup / k;
  r.gamma = r.p.naive_comm_s / r.p.compute_s;
  const double f = r.single_epoch_s / (r.single_epoch_s + r.p.naive_comm_s);
  r.amdahl_max = 1.0 / ((1.0 - f) + f / k);
  return r;
}

std::vector<PredictRow> predict_rows(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                     const std::vector<Mode>& modes, const std::vector<int>& world_sizes) {
  std::vector<PredictRow> rows;
  for (const SingleRun& s : singles) {
    for (Mode m : modes) {
      const size_t first = rows.size();
      std::optional<int> knee;
      for (int k : world_sizes) {
        rows.push_back(predict_row(s, ctx, m, k));
        if (!knee && rows.back().efficiency < kKneeEfficiency) knee = k;
      }
      for (size_t i = first; i < rows.size(); ++i) rows[i].knee = knee;
    }
  }
  return rows;
}

std::string sig4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string describe_link(const CommModel& comm) {
  std::string s = comm.link.name + " (α " + sig4(comm.link.alpha_us) + " µs, " + sig4(comm.link.gbps) + " GB/s)";
  if (comm.algo == AllreduceAlgo::hier) {
    s += " between nodes, " + comm.intra.name + " (α " + format_number(comm.intra.alpha_us) + " µs, " +
         format_number(comm.intra.gbps) + " GB/s) inside, " + std::to_string(comm.gpus_per_node) + " per node";
  }
  return s + ", dilation ×" + sig4(comm.link.dilation) + ", " + allreduce_algo_name(comm.algo) + " all-reduce";
}

namespace {

nlohmann::ordered_json row_json(const PredictRow& r, const PredictContext& ctx) {
  nlohmann::ordered_json j;
  j["model"] = r.model;
  j["mode"] = r.mode;
  j["world_size"] = r.world_size;
  j["bucket_cap_mb"] = r.bucket_cap_mb ? nlohmann::ordered_json(*r.bucket_cap_mb) : nlohmann::ordered_json(nullptr);
  j["epoch_s"] = r.p.epoch_s;
  j["comm_s"] = r.p.naive_comm_s;
  j["exposed_comm_s"] = r.p.exposed_s;
  j["busy_comm_s"] = r.p.busy_s;
  j["compute_s"] = r.p.compute_s;
  j["speedup"] = r.speedup;
  j["efficiency"] = r.efficiency;
  j["gamma"] = r.gamma;
  j["amdahl_max"] = r.amdahl_max;
  j["knee"] = r.knee ? nlohmann::ordered_json(*r.knee) : nlohmann::ordered_json(nullptr);
  j["calls_per_step"] = r.p.calls_per_step;
  j["steps_per_epoch"] = r.p.steps;
  j["single_epoch_s"] = r.single_epoch_s;
  j["samples"] = ctx.workload.samples;
  j["batch_size"] = ctx.workload.batch;
  j["algo"] = allreduce_algo_name(ctx.comm.algo);
  j["link_alpha_us"] = ctx.comm.link.alpha_us;
  j["link_gbps"] = ctx.comm.link.gbps;
  j["link_dilation"] = ctx.comm.link.dilation;
  j["busy"] = ctx.busy.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ctx.busy);
  j["fixed_step_s"] = ctx.terms.fixed_step_s;
  j["fixed_step_s_per_param"] = ctx.terms.fixed_step_s_per_param;
  j["contention_s_per_mib"] = ctx.terms.contention_s_per_mib;
  j["call_overhead_s"] = ctx.terms.call_overhead_s;
  j["cores"] = ctx.terms.cores;
  return j;
}

}  // namespace

std::string render_rows(const std::vector<PredictRow>& rows, const PredictContext& ctx, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const PredictRow& r : rows) a.push_back(row_json(r, ctx));
    return a.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "mode", "K", "cap MiB", "epoch s", "comm s", "exposed s", "speedup", "E", "γ", "Amdahl", "knee"};
  t.right = {false, false, true, true, true, true, true, true, true, true, true, true};
  const bool csv = format == "csv";
  auto num = [&](double v, int d) { return csv ? format_number(v) : fmt_fixed(v, d); };
  for (const PredictRow& r : rows) {
    t.rows.push_back({r.model, r.mode, std::to_string(r.world_size),
                      r.bucket_cap_mb ? format_number(*r.bucket_cap_mb) : "", num(r.p.epoch_s, 4),
                      num(r.p.naive_comm_s, 4), num(r.p.exposed_s, 4), num(r.speedup, 2), num(r.efficiency, 2),
                      num(r.gamma, 2), num(r.amdahl_max, 2), r.knee ? std::to_string(*r.knee) : "-"});
  }
  if (csv) return t.csv();
  std::string out;
  out += "Predicted epochs: " + std::to_string(ctx.workload.samples) + " samples, batch " +
         std::to_string(ctx.workload.batch) + "; compute from " + ctx.compute_source + "; link " + describe_link(ctx.comm) +
         " (" + ctx.link_source + ").\n";
  if (!ctx.terms_source.empty()) out += ctx.terms_source;
  if (!ctx.busy.empty()) out += "**Made on a busy machine**: " + ctx.busy + "; the prediction inherits their noise.\n";
  out += "comm s: naive's blocking all-reduce phase per epoch; exposed s: this mode's comm past backward; "
         "knee: first K with E < 0.8.\n\n";
  out += t.markdown();
  return out;
}

}  // namespace dpscale::predict
