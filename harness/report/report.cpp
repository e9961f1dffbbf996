// report.cpp — the report in Markdown, CSV and JSON.
#include "harness/report/report.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "contract/modes.h"
#include "contract/schema_doc.h"
#include "harness/report/diagnosis_report.h"
#include "harness/common/table.h"
#include "core/errors.h"

namespace dpscale {

namespace {

using nlohmann::ordered_json;

ordered_json opt_json(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }
ordered_json spread_json(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string cap_text(const std::optional<double>& cap) { return cap ? format_number(*cap) : ""; }

std::vector<PointKey> keys_of(const Analysis& a) {
  std::vector<PointKey> keys;
  for (const PointStats& p : a.points) keys.push_back(p.key);
  return keys;
}

std::string markdown(const Analysis& a, const std::string& source) {
  const bool any_cap = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.key.bucket_cap_mb; });
  const bool any_link = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.key.link != "none"; });
  const bool any_placement =
      std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return !p.key.placement.empty(); });
  const bool any_repeat = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.runs > 1; });

  // A column per setting the file's points differ in (an axis the sweep varied), only then.
  const std::vector<std::string> varying = varying_settings(keys_of(a));
  Table t;
  t.header = {"Model", "Mode", "K"};
  if (any_cap) t.header.push_back("Cap MB");
  if (any_link) t.header.push_back("Link");
  if (any_placement) t.header.push_back("Nodes×Ranks");
  for (const std::string& key : varying) t.header.push_back(key);
  for (const char* h : {"Params", "Avg Epoch", "Comm Time", "Throughput", "Speedup", "E=S/K", "Comm %", "γ",
                        "Naive Amdahl"}) {
    t.header.push_back(h);
  }
  if (any_repeat) t.header.push_back("Runs (± spread)");
  t.right.assign(t.header.size(), true);
  t.right[0] = t.right[1] = false;
  if (any_link) t.right[any_cap ? 4 : 3] = false;

  std::string last_model;
  for (const PointStats& p : a.points) {
    std::vector<std::string> r = {p.key.model == last_model ? "" : p.key.model, mode_label(p.key.mode),
                                  std::to_string(p.key.world_size)};
    last_model = p.key.model;
    if (any_cap) r.push_back(p.key.bucket_cap_mb ? format_number(*p.key.bucket_cap_mb) : "—");
    if (any_link) r.push_back(p.key.link);
    if (any_placement) r.push_back(p.key.placement.empty() ? "—" : p.key.placement);
    for (const std::string& key : varying) r.push_back(setting_text(p.key, key));
    r.push_back(fmt_params(p.n_params));
    r.push_back(fmt_fixed(p.epoch_s.median, 4) + "s");
    r.push_back(p.comm_s ? fmt_fixed(p.comm_s->median, 4) + "s" : "—");
    r.push_back(fmt_thousands(p.throughput.median) + "/s");
    r.push_back(fmt_opt(p.speedup, 2, "×"));
    r.push_back(fmt_opt(p.efficiency, 2));
    r.push_back(p.comm_fraction ? fmt_percent(*p.comm_fraction) : "—");
    r.push_back(fmt_opt(p.gamma, 2));
    r.push_back(fmt_opt(p.amdahl_max, 2, "×"));
    if (any_repeat) {
      r.push_back(std::to_string(p.runs) + (p.runs > 1 ? " (±" + fmt_percent(p.throughput.half_range(), 1) + ")" : ""));
    }
    t.rows.push_back(std::move(r));
  }

  std::string out = "# dpscale report: " + source + "\n\n";
  out += a.points.empty() ? "No successful runs.\n" : t.markdown();
  out += "\nSpeedup: throughput against the single run of the same model. E = S/K. Comm %: comm time / avg\n"
         "epoch (naive: the blocking all-reduce; interleaved/bucketed: the exposed wait). γ = comm/compute\n"
         "(naive). Naive Amdahl = 1/((1-f) + f/K), f = T1/(T1 + naive comm at K): the ceiling of naive DP,\n"
         "whose comm cannot overlap; interleaved and bucketed hide comm and can pass it.\n";
  if (any_repeat) out += "Repeats: medians; ± is half the throughput range over the repeats.\n";

  // One line per model: the headline the workshop draws from its table.
  std::map<std::string, const PointStats*> best;
  std::vector<std::string> models;
  for (const PointStats& p : a.points) {
    if (!mode_named(p.key.mode).data_parallel || !p.speedup) continue;
    if (!best.count(p.key.model)) models.push_back(p.key.model);
    if (!best[p.key.model] || *p.speedup > *best[p.key.model]->speedup) best[p.key.model] = &p;
  }
  if (!models.empty()) out += "\nBest data-parallel speedup per model:\n";
  for (const std::string& m : models) {
    const PointStats& p = *best[m];
    out += "  " + m + ": " + fmt_fixed(*p.speedup, 2) + "× (" + mode_label(p.key.mode) + ", K=" +
           std::to_string(p.key.world_size) + (p.key.bucket_cap_mb ? ", cap " + format_number(*p.key.bucket_cap_mb) + " MB" : "") +
           (p.key.placement.empty() ? "" : ", " + p.key.placement) + "), E = " + fmt_fixed(*p.efficiency, 2) + (*p.speedup < 1 ? " — slower than one device" : "") + "\n";
  }

  out += diagnosis_markdown(a);

  if (!a.failed.empty()) {
    Table f;
    f.header = {"Run", "Reason", "After"};
    f.right = {false, false, true};
    for (const FailedRun& r : a.failed) {
      const SweepEntry& e = r.entry;
      const std::string id = e.run.run_id.empty() ? e.point.describe() : e.run.run_id;
      f.rows.push_back({id, e.reason + (r.retried_ok ? " (a later run succeeded)" : ""),
                        fmt_fixed(e.run.duration_s, 1) + "s"});
    }
    out += "\nFailed runs (" + std::to_string(a.failed.size()) + "):\n\n" + f.markdown();
  }
  return out;
}

std::string csv(const Analysis& a) {
  const std::vector<std::string> varying = varying_settings(keys_of(a));
  Table t;
  t.header = {"status", "model", "mode", "world_size", "bucket_cap_mb", "link"};
  t.header.insert(t.header.end(), varying.begin(), varying.end());
  for (const char* h : {"n_params", "runs",
              "avg_epoch_s", "avg_epoch_s_min", "avg_epoch_s_max", "comm_s", "compute_s",
              "throughput_samples_per_s", "throughput_min", "throughput_max", "speedup", "efficiency",
              "comm_fraction", "gamma", "amdahl_max", "placement", "reason"}) {
    t.header.push_back(h);
  }
  auto num = [](const std::optional<double>& v) { return v ? format_number(*v) : std::string(); };
  for (const PointStats& p : a.points) {
    std::vector<std::string> row = {"ok", p.key.model, p.key.mode, std::to_string(p.key.world_size),
                                    cap_text(p.key.bucket_cap_mb), p.key.link};
    for (const std::string& key : varying) row.push_back(setting_text(p.key, key));
    const std::vector<std::string> rest = {std::to_string(p.n_params), std::to_string(p.runs), format_number(p.epoch_s.median),
                      format_number(p.epoch_s.min), format_number(p.epoch_s.max),
                      num(p.comm_s ? std::optional<double>(p.comm_s->median) : std::nullopt),
                      format_number(p.compute_s.median), format_number(p.throughput.median),
                      format_number(p.throughput.min), format_number(p.throughput.max), num(p.speedup),
                      num(p.efficiency), num(p.comm_fraction), num(p.gamma), num(p.amdahl_max),
                      p.key.placement, ""};
    row.insert(row.end(), rest.begin(), rest.end());
    t.rows.push_back(std::move(row));
  }
  for (const FailedRun& r : a.failed) {
    const SweepPoint& p = r.entry.point;
    std::vector<std::string> row = {"failed", p.model, p.mode, std::to_string(p.world_size), cap_text(p.bucket_cap_mb),
                                    p.link};
    for (const std::string& key : varying) row.push_back(setting_text(PointKey::of(p), key));
    row.resize(t.header.size() - 2);
    row.push_back(p.placement());
    row.push_back(r.entry.reason);
    t.rows.push_back(std::move(row));
  }
  return t.csv();
}

// The setup a point's first repeat ran with: what the charts print at their foot and check is
// the same across the points they compare.
ordered_json setup_json(const RunRecord& r) {
  return {{"backend", r.backend},         {"device_name", r.device_name},     {"global_batch", r.global_batch},
          {"n_samples", r.n_samples},     {"epochs", r.epochs},               {"link_alpha_us", opt_json(r.link_alpha_us)},
          {"link_gbps", opt_json(r.link_gbps)}, {"link_dilation", r.link_dilation}};
}

ordered_json opt_spread_json(const std::optional<Spread>& s) { return s ? spread_json(*s) : ordered_json(nullptr); }

// docs/RESULTS_FORMAT.md ("The report JSON") documents every field; plots/ reads this and only this.
std::string json_report(const Analysis& a, const std::string& source) {
  ordered_json j;
  j["schema"] = kReportSchema;
  j["file"] = source;
  // The mode table (contract/modes.cpp), so the plotter names modes as the tables do.
  j["modes"] = contract_json()["modes"];
  // The trainer options' defaults (the plotter's display cap is bucket_cap_mb's).
  j["option_defaults"] = option_defaults_json();
  j["warnings"] = a.warnings;
  // The settings the points differ in: what a chart may put on an axis (docs/RESULTS_FORMAT.md).
  j["axes"] = varying_settings(keys_of(a));
  j["points"] = ordered_json::array();
  for (const PointStats& p : a.points) {
    ordered_json o;
    o["model"] = p.key.model;
    o["mode"] = p.key.mode;
    o["world_size"] = p.key.world_size;
    o["bucket_cap_mb"] = opt_json(p.key.bucket_cap_mb);
    o["link"] = p.key.link;
    o["placement"] = p.key.placement;
    ordered_json settings = ordered_json::object();
    for (const auto& [key, value] : p.key.settings) settings[key] = value;
    o["settings"] = settings;
    o["n_params"] = p.n_params;
    o["runs"] = p.runs;
    o["setup"] = setup_json(p.first);
    o["avg_epoch_s"] = spread_json(p.epoch_s);
    o["comm_s"] = opt_spread_json(p.comm_s);
    o["compute_s"] = spread_json(p.compute_s);
    o["comm_busy_s"] = opt_spread_json(p.comm_busy_s);
    o["throughput_samples_per_s"] = spread_json(p.throughput);
    o["speedup"] = opt_spread_json(p.speedup_spread);
    o["efficiency"] = opt_spread_json(p.efficiency_spread);
    o["comm_fraction"] = opt_json(p.comm_fraction);
    o["gamma"] = opt_json(p.gamma);
    o["amdahl_max"] = opt_json(p.amdahl_max);
    o["naive_saving"] = opt_spread_json(p.naive_saving);
    o["naive_saving_s"] = opt_json(p.naive_saving_s);
    o["n_buckets"] = opt_json(p.n_buckets);
    o["loss_global"] = p.loss_global;  // NaN (no finite repeat) is written as null
    o["loss_rank0"] = p.loss_rank0;
    o["final_loss"] = opt_spread_json(p.final_loss);
    o["test_accuracy"] = opt_spread_json(p.test_accuracy);
    o["diagnosis"] = diagnosis_json(p);
    j["points"].push_back(o);
  }
  j["failed"] = ordered_json::array();
  for (const FailedRun& r : a.failed) {
    const SweepPoint& p = r.entry.point;
    j["failed"].push_back({{"run_id", r.entry.run.run_id},
                           {"model", p.model},
                           {"mode", p.mode},
                           {"world_size", p.world_size},
                           {"bucket_cap_mb", opt_json(p.bucket_cap_mb)},
                           {"link", p.link},
                           {"placement", p.placement()},
                           {"reason", r.entry.reason},
                           {"duration_s", r.entry.run.duration_s},
                           {"retried_ok", r.retried_ok}});
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::string render_report(const Analysis& a, const std::string& source, const std::string& format) {
  if (format == "md") return markdown(a, source);
  if (format == "csv") return csv(a);
  if (format == "json") return json_report(a, source);
  throw InputError("--format must be md, csv or json (got '" + format + "')");
}

}  // namespace dpscale
