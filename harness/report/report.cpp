// report.cpp — the report in Markdown, CSV and JSON.
#include "harness/report/report.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "contract/option_values.h"
#include "contract/modes.h"
#include "contract/schema_doc.h"
#include "harness/report/diagnosis_report.h"
#include "harness/common/table.h"
#include "core/errors.h"
#include "core/median.h"

namespace dpscale {

namespace {

using nlohmann::ordered_json;

ordered_json opt_json(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }
ordered_json spread_json(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string cap_text(const Point& p) { return p.bucket_cap_mb() ? format_number(*p.bucket_cap_mb()) : ""; }

std::vector<Point> points_of(const Analysis& a) {
  std::vector<Point> points;
  for (const PointStats& p : a.points) points.push_back(p.point);
  return points;
}

// "412.3 MiB (134.3+134.3+143.7)": what one rank holds, in MiB; "—" where the record says nothing.
std::string memory_cell(const RunRecord& r) {
  if (r.param_bytes_per_rank <= 0) return "—";
  const auto mib = [](int64_t b) { return fmt_fixed(static_cast<double>(b) / (1024.0 * 1024.0), 1); };
  return mib(r.param_bytes_per_rank + r.grad_bytes_per_rank + r.optim_bytes_per_rank) + " MiB (" +
         mib(r.param_bytes_per_rank) + "+" + mib(r.grad_bytes_per_rank) + "+" + mib(r.optim_bytes_per_rank) + ")";
}

// The measured peak RSS of a point: the median over the repeats that read it (a kernel reading
// varies run to run, unlike the counted bytes); 0 where none did, as the record says "unread".
int64_t peak_rss_median(const PointStats& p) {
  std::vector<double> read;
  for (const RunRecord& r : p.repeats) {
    if (r.peak_rss_bytes > 0) read.push_back(static_cast<double>(r.peak_rss_bytes));
  }
  return static_cast<int64_t>(median(read));
}

std::string markdown(const Analysis& a, const std::string& source) {
  const bool any_repeat = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.runs > 1; });
  // A column per setting the file's points differ in (an axis the sweep varied), only then.
  const KeyColumns cols = key_columns(points_of(a));
  // A transformer's tokens/s beside samples/s, where the file has one (MLP rows: "—").
  const bool any_tokens = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.tokens.has_value(); });
  Table t;
  t.header = {"Model", "Mode", "K"};
  for (const std::string& h : key_headers(cols)) t.header.push_back(h);
  for (const char* h : {"Params", "Avg Epoch", "Comm Time", "Throughput"}) t.header.push_back(h);
  if (any_tokens) t.header.push_back("Tokens/s");
  for (const char* h : {"Speedup", "E=S/K", "Comm %", "γ", "Naive Amdahl"}) t.header.push_back(h);
  // Memory per rank (the records' *_bytes_per_rank: parameters, gradients, optimizer state), where
  // the records hold it (older ones do not).
  const bool any_memory = std::any_of(a.points.begin(), a.points.end(), [](auto& p) { return p.first.param_bytes_per_rank > 0; });
  if (any_memory) t.header.push_back("Mem/rank (P+G+O)");
  if (any_repeat) t.header.push_back("Runs (± spread)");
  t.right.assign(t.header.size(), true);
  t.right[0] = t.right[1] = false;
  if (cols.link) t.right[cols.cap ? 4 : 3] = false;

  std::string last_model;
  for (const PointStats& p : a.points) {
    std::vector<std::string> r = {p.point.model == last_model ? "" : p.point.model, p.point.mode->label,
                                  std::to_string(p.point.world_size)};
    last_model = p.point.model;
    for (const std::string& cell : key_cells(p.point, cols)) r.push_back(cell);
    r.push_back(fmt_params(p.n_params));
    r.push_back(fmt_fixed(p.epoch_s.median, 4) + "s");
    r.push_back(p.comm_s ? fmt_fixed(p.comm_s->median, 4) + "s" : "—");
    r.push_back(fmt_thousands(p.throughput.median) + "/s");
    if (any_tokens) r.push_back(p.tokens ? fmt_thousands(p.tokens->median) + "/s" : "—");
    r.push_back(fmt_opt(p.speedup, 2, "×"));
    r.push_back(fmt_opt(p.efficiency, 2));
    r.push_back(p.comm_fraction ? fmt_percent(*p.comm_fraction) : "—");
    r.push_back(fmt_opt(p.gamma, 2));
    r.push_back(fmt_opt(p.amdahl_max, 2, "×"));
    if (any_memory) r.push_back(memory_cell(p.first));
    if (any_repeat) {
      r.push_back(std::to_string(p.runs) + (p.runs > 1 ? " (±" + fmt_percent(p.throughput.half_range(), 1) + ")" : ""));
    }
    t.rows.push_back(std::move(r));
  }

  std::string out = "# dpscale report: " + source + "\n\n";
  out += a.points.empty() ? "No successful runs.\n" : t.markdown();
  if (any_tokens) out += "\nThroughput: samples/s; Tokens/s: a transformer's samples/s times its tokens per sample.";
  out += "\nSpeedup: throughput against the single run of the same model. E = S/K. Comm %: comm time / avg\n"
         "epoch (naive: the blocking all-reduce; interleaved/bucketed: the exposed wait). γ = comm/compute\n"
         "(naive). Naive Amdahl = 1/((1-f) + f/K), f = T1/(T1 + naive comm at K): the ceiling of naive DP,\n"
         "whose comm cannot overlap; interleaved and bucketed hide comm and can pass it.\n";
  if (any_repeat) out += "Repeats: medians; ± is half the throughput range over the repeats.\n";
  if (any_memory) {
    out += "Mem/rank: MiB one rank holds of parameters + gradients + optimizer state (the sharded stages hold the\n"
           "optimizer state for 1/K of the buffer: docs/sharded.md).\n";
  }

  // One line per model: the headline the workshop draws from its table.
  std::map<std::string, const PointStats*> best;
  std::vector<std::string> models;
  for (const PointStats& p : a.points) {
    if (!p.point.mode->data_parallel || !p.speedup) continue;
    if (!best.count(p.point.model)) models.push_back(p.point.model);
    if (!best[p.point.model] || *p.speedup > *best[p.point.model]->speedup) best[p.point.model] = &p;
  }
  if (!models.empty()) out += "\nBest data-parallel speedup per model:\n";
  for (const std::string& m : models) {
    const PointStats& p = *best[m];
    const Point& k = p.point;
    out += "  " + m + ": " + fmt_fixed(*p.speedup, 2) + "× (" + k.mode->label + ", K=" + std::to_string(k.world_size) +
           (k.bucket_cap_mb() ? ", cap " + format_number(*k.bucket_cap_mb()) + " MB" : "") +
           (k.nodes > 0 ? ", " + k.placement() : "") + "), E = " + fmt_fixed(*p.efficiency, 2) +
           (*p.speedup < 1 ? " — slower than one device" : "") + "\n";
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
  const std::vector<std::string> varying = key_columns(points_of(a)).settings;
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
    std::vector<std::string> row = {"ok", p.point.model, p.point.mode.name(), std::to_string(p.point.world_size),
                                    cap_text(p.point), p.point.link()};
    for (const std::string& key : varying) row.push_back(setting_text(p.point, key));
    const std::vector<std::string> rest = {std::to_string(p.n_params), std::to_string(p.runs), format_number(p.epoch_s.median),
                      format_number(p.epoch_s.min), format_number(p.epoch_s.max),
                      num(p.comm_s ? std::optional<double>(p.comm_s->median) : std::nullopt),
                      format_number(p.compute_s.median), format_number(p.throughput.median),
                      format_number(p.throughput.min), format_number(p.throughput.max), num(p.speedup),
                      num(p.efficiency), num(p.comm_fraction), num(p.gamma), num(p.amdahl_max),
                      p.point.placement(), ""};
    row.insert(row.end(), rest.begin(), rest.end());
    t.rows.push_back(std::move(row));
  }
  for (const FailedRun& r : a.failed) {
    const Point& p = r.entry.point;
    std::vector<std::string> row = {"failed", p.model, p.mode.name(), std::to_string(p.world_size), cap_text(p), p.link()};
    for (const std::string& key : varying) row.push_back(setting_text(p, key));
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
  // What every point's "point" object is (harness/point/point.h): the plotter checks them with it.
  j["point_schema"] = point_schema();
  j["warnings"] = a.warnings;
  // The settings the points differ in: what a chart may put on an axis (docs/RESULTS_FORMAT.md).
  j["axes"] = varying_settings(points_of(a));
  j["points"] = ordered_json::array();
  for (const PointStats& p : a.points) {
    ordered_json o;
    o["point"] = p.point.to_json();
    o["n_params"] = p.n_params;
    o["runs"] = p.runs;
    o["setup"] = setup_json(p.first);
    o["avg_epoch_s"] = spread_json(p.epoch_s);
    o["comm_s"] = opt_spread_json(p.comm_s);
    o["compute_s"] = spread_json(p.compute_s);
    o["comm_busy_s"] = opt_spread_json(p.comm_busy_s);
    o["throughput_samples_per_s"] = spread_json(p.throughput);
    o["throughput_tokens_per_s"] = opt_spread_json(p.tokens);
    o["speedup"] = opt_spread_json(p.speedup_spread);
    o["efficiency"] = opt_spread_json(p.efficiency_spread);
    o["comm_fraction"] = opt_json(p.comm_fraction);
    o["gamma"] = opt_json(p.gamma);
    o["amdahl_max"] = opt_json(p.amdahl_max);
    o["naive_saving"] = opt_spread_json(p.naive_saving);
    o["naive_saving_s"] = opt_json(p.naive_saving_s);
    o["n_buckets"] = opt_json(p.n_buckets);
    o["memory_per_rank"] = {{"param_bytes", p.first.param_bytes_per_rank},
                            {"grad_bytes", p.first.grad_bytes_per_rank},
                            {"optim_bytes", p.first.optim_bytes_per_rank},
                            {"peak_device_bytes", p.first.peak_device_bytes},
                            {"peak_rss_bytes", peak_rss_median(p)}};
    o["loss_global"] = p.loss_global;  // NaN (no finite repeat) is written as null
    o["loss_rank0"] = p.loss_rank0;
    o["final_loss"] = opt_spread_json(p.final_loss);
    o["test_accuracy"] = opt_spread_json(p.test_accuracy);
    o["diagnosis"] = diagnosis_json(p);
    j["points"].push_back(o);
  }
  j["failed"] = ordered_json::array();
  for (const FailedRun& r : a.failed) {
    j["failed"].push_back({{"run_id", r.entry.run.run_id},
                           {"point", r.entry.point.to_json()},
                           {"reason", r.entry.reason},
                           {"duration_s", r.entry.run.duration_s},
                           {"retried_ok", r.retried_ok}});
  }
  return j.dump(2) + "\n";
}

}  // namespace

KeyColumns key_columns(const std::vector<Point>& points) {
  KeyColumns c;
  for (const Point& p : points) {
    c.cap = c.cap || p.bucket_cap_mb();
    c.link = c.link || p.link() != "none";
    c.placement = c.placement || p.nodes > 0;
  }
  for (const std::string& key : varying_settings(points)) {
    if (key != "bucket_cap_mb" && key != "link") c.settings.push_back(key);
  }
  return c;
}

std::vector<std::string> key_headers(const KeyColumns& c) {
  std::vector<std::string> h;
  if (c.cap) h.push_back("Cap MB");
  if (c.link) h.push_back("Link");
  if (c.placement) h.push_back("Nodes×Ranks");
  h.insert(h.end(), c.settings.begin(), c.settings.end());
  return h;
}

std::vector<std::string> key_cells(const Point& p, const KeyColumns& c) {
  std::vector<std::string> r;
  if (c.cap) r.push_back(p.bucket_cap_mb() ? format_number(*p.bucket_cap_mb()) : "—");
  if (c.link) r.push_back(p.link());
  if (c.placement) r.push_back(p.nodes > 0 ? p.placement() : "—");
  for (const std::string& key : c.settings) r.push_back(setting_text(p, key));
  return r;
}

std::string render_report(const Analysis& a, const std::string& source, const std::string& format) {
  if (format == "md") return markdown(a, source);
  if (format == "csv") return csv(a);
  if (format == "json") return json_report(a, source);
  throw InputError("--format must be md, csv or json (got '" + format + "')");
}

}  // namespace dpscale
