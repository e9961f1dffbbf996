// diagnosis_report.cpp — medians of the record's diagnosis fields per point, as JSON and Markdown.
#include "harness/report/diagnosis_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "harness/common/table.h"
#include "core/errors.h"

namespace dpscale {

namespace {

using nlohmann::ordered_json;

std::optional<double> median_of(const std::vector<RunRecord>& rs, std::optional<double> RunRecord::*f) {
  std::vector<double> v;
  for (const RunRecord& r : rs) {
    if (r.*f) v.push_back(*(r.*f));
  }
  if (v.empty()) return std::nullopt;
  return spread_of(v).median;
}

// Element-wise medians of a per-rank (or per-unit) list over the repeats that have the same length
// as the first repeat that carries it.
std::vector<double> median_lists(const std::vector<RunRecord>& rs, std::vector<double> RunRecord::*f) {
  size_t n = 0;
  for (const RunRecord& r : rs) {
    if (!(r.*f).empty()) {
      n = (r.*f).size();
      break;
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> v;
    for (const RunRecord& r : rs) {
      if ((r.*f).size() == n) v.push_back((r.*f)[i]);
    }
    out.push_back(spread_of(v).median);
  }
  return out;
}

ordered_json opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

std::string ms(const std::optional<double>& s) { return s ? fmt_fixed(*s * 1e3, 1) + " ms" : "—"; }

// One repeat's straggler: "rank 1 (compute)", "rank 1 contended (compute)" (its excess matched
// by its run delay: not a straggler), "none"; records older than the straggler rule that name a
// rank without a cause: "rank 1".
std::string straggler_of(const RunRecord& r) {
  if (r.contended_rank) {
    return "rank " + std::to_string(*r.contended_rank) + " contended" +
           (r.contended_cause ? " (" + *r.contended_cause + ")" : "");
  }
  if (!r.straggler_rank) return "none";
  return "rank " + std::to_string(*r.straggler_rank) + (r.straggler_cause ? " (" + *r.straggler_cause + ")" : "");
}

// Every repeat's straggler, runs of the same one written once with their count:
// "rank 1 (compute) ×2, none".
std::string stragglers_text(const std::vector<RunRecord>& rs) {
  std::string out;
  for (size_t i = 0; i < rs.size();) {
    size_t j = i;
    while (j < rs.size() && straggler_of(rs[j]) == straggler_of(rs[i])) ++j;
    out += (out.empty() ? "" : ", ") + straggler_of(rs[i]) + (j - i > 1 ? " ×" + std::to_string(j - i) : "");
    i = j;
  }
  return out;
}

}  // namespace

DiagnosisStats diagnosis_stats(const PointStats& p) {
  DiagnosisStats d;
  const std::vector<RunRecord>& rs = p.repeats;
  if (rs.empty()) return d;
  // The label most repeats carry (the first repeat's on a tie), and that repeat's line.
  std::map<std::string, int> votes;
  for (const RunRecord& r : rs) ++votes[r.bottleneck];
  int best = 0;
  for (const RunRecord& r : rs) {
    if (votes[r.bottleneck] > best) {
      best = votes[r.bottleneck];
      d.bottleneck = r.bottleneck;
      d.straggler_rank = r.straggler_rank;
      d.diagnosis = r.diagnosis;
    }
  }
  d.triad_step_s = median_of(rs, &RunRecord::triad_step_s);
  d.compute_only_step_s = median_of(rs, &RunRecord::compute_only_step_s);
  d.comm_only_step_s = median_of(rs, &RunRecord::comm_only_step_s);
  d.exposed_comm_step_s = median_of(rs, &RunRecord::exposed_comm_step_s);
  d.overlap_pct = median_of(rs, &RunRecord::overlap_pct);
  std::vector<double> loader;
  for (const RunRecord& r : rs) loader.push_back(r.loader_s);
  d.loader_s = spread_of(loader).median;
  d.per_rank_compute_s = median_lists(rs, &RunRecord::per_rank_compute_s);
  d.per_rank_wait_s = median_lists(rs, &RunRecord::per_rank_wait_s);
  d.unit_bytes = rs.front().allreduce_unit_bytes;
  d.busbw_gbps = median_lists(rs, &RunRecord::bucket_busbw_gbps);
  d.run_delay_share = median_of(rs, &RunRecord::run_delay_share);
  d.per_rank_run_delay_s = median_lists(rs, &RunRecord::per_rank_run_delay_s);
  d.per_rank_involuntary_switches = median_lists(rs, &RunRecord::per_rank_involuntary_switches);
  return d;
}

namespace {
ordered_json stragglers_json(const std::vector<RunRecord>& rs) {
  ordered_json a = ordered_json::array();
  for (const RunRecord& r : rs) {
    a.push_back({{"rank", r.straggler_rank ? ordered_json(*r.straggler_rank) : ordered_json(nullptr)},
                 {"cause", r.straggler_cause ? ordered_json(*r.straggler_cause) : ordered_json(nullptr)},
                 {"contended_rank", r.contended_rank ? ordered_json(*r.contended_rank) : ordered_json(nullptr)},
                 {"contended_cause", r.contended_cause ? ordered_json(*r.contended_cause) : ordered_json(nullptr)}});
  }
  return a;
}
}  // namespace

ordered_json diagnosis_json(const PointStats& p) {
  const DiagnosisStats d = diagnosis_stats(p);
  const double steps_per_epoch = p.first.steps_per_epoch > 0 ? static_cast<double>(p.first.steps_per_epoch) : 1.0;
  return {{"bottleneck", d.bottleneck.empty() ? ordered_json(nullptr) : ordered_json(d.bottleneck)},
          {"straggler_rank", d.straggler_rank ? ordered_json(*d.straggler_rank) : ordered_json(nullptr)},
          {"diagnosis", d.diagnosis},
          {"stragglers", stragglers_json(p.repeats)},
          {"steps_per_epoch", steps_per_epoch},
          {"triad_step_s", opt(d.triad_step_s)},
          {"compute_only_step_s", opt(d.compute_only_step_s)},
          {"comm_only_step_s", opt(d.comm_only_step_s)},
          {"exposed_comm_step_s", opt(d.exposed_comm_step_s)},
          {"overlap_pct", opt(d.overlap_pct)},
          {"loader_s", d.loader_s},
          {"per_rank_compute_s", d.per_rank_compute_s},
          {"per_rank_wait_s", d.per_rank_wait_s},
          {"allreduce_unit_bytes", d.unit_bytes},
          {"bucket_busbw_gbps", d.busbw_gbps},
          {"run_delay_share", opt(d.run_delay_share)},
          {"per_rank_run_delay_s", d.per_rank_run_delay_s},
          {"per_rank_involuntary_switches", d.per_rank_involuntary_switches}};
}

std::string diagnosis_markdown(const Analysis& a) {
  Table t;
  t.header = {"Model", "Mode", "K", "Link", "Bottleneck", "Straggler per run", "Run delay", "Step (triad)",
              "Compute-only", "Comm-only", "Exposed", "Overlap %", "Loader/epoch", "Diagnosis"};
  t.right.assign(t.header.size(), true);
  t.right[0] = t.right[1] = t.right[3] = t.right[4] = t.right[5] = t.right[13] = false;
  for (const PointStats& p : a.points) {
    const DiagnosisStats d = diagnosis_stats(p);
    if (d.bottleneck.empty()) continue;
    t.rows.push_back({p.point.model, p.point.mode->label, std::to_string(p.point.world_size), p.point.link(),
                      d.bottleneck + (d.bottleneck == "straggler" && d.straggler_rank
                                          ? " (rank " + std::to_string(*d.straggler_rank) + ")" : ""),
                      p.point.mode->data_parallel ? stragglers_text(p.repeats) : "—",
                      d.run_delay_share ? fmt_fixed(100.0 * *d.run_delay_share, 1) + "%" : "—",
                      ms(d.triad_step_s), ms(d.compute_only_step_s), ms(d.comm_only_step_s), ms(d.exposed_comm_step_s),
                      d.overlap_pct ? fmt_fixed(*d.overlap_pct, 0) + "%" : "—", fmt_fixed(d.loader_s, 3) + "s",
                      d.diagnosis});
  }
  if (t.rows.empty()) return "";
  return "\n## Why each run scaled as it did\n\n" + t.markdown() +
         "\nBottleneck: the README's rule (\"Why a run scaled as it did\"), the label most repeats carry.\n"
         "Straggler per run: the rank slower than the others and where it lost its time (compute, loader,\n"
         "link; trainers/diagnosis/straggler.h), each repeat in order; `contended`: that rank's excess was\n"
         "matched by its own run delay (it waited for a CPU), so it is not a straggler. Run delay: the largest\n"
         "rank's time runnable but not running, as a share of the epochs' time (median of the repeats). Triad\n"
         "columns (--triad N): per step, medians; Exposed = step − compute-only; Overlap % = 100·max(0, min(1,\n"
         "1 − exposed/comm-only)).\n";
}

namespace {
struct BenchRow {
  double bytes, busbw;
  std::string name;
};

std::vector<BenchRow> read_bench(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("--bench-allreduce: cannot read '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw InputError("--bench-allreduce: '" + path + "' is not JSON (bench_allreduce --benchmark_format=json)");
  }
  std::vector<BenchRow> all, medians;
  if (j.is_object() && j.contains("benchmarks") && j["benchmarks"].is_array()) {
    for (const auto& b : j["benchmarks"]) {
      if (!b.contains("bytes") || !b.contains("busbw_GBps") || !b["bytes"].is_number() || !b["busbw_GBps"].is_number()) {
        continue;
      }
      BenchRow r{b["bytes"].get<double>(), b["busbw_GBps"].get<double>(), b.value("name", std::string())};
      all.push_back(r);
      if (b.value("aggregate_name", std::string()) == "median") medians.push_back(r);
    }
  }
  if (all.empty()) throw InputError("--bench-allreduce: '" + path + "' has no rows with bytes and busbw_GBps");
  return medians.empty() ? all : medians;
}
}  // namespace

std::string bench_comparison_markdown(const Analysis& a, const std::string& bench_json_path) {
  const std::vector<BenchRow> bench = read_bench(bench_json_path);
  Table t;
  t.header = {"Model", "Mode", "K", "Link", "Unit", "Bytes", "In training GB/s", "bench_allreduce GB/s", "at bytes"};
  t.right.assign(t.header.size(), true);
  t.right[0] = t.right[1] = t.right[3] = false;
  for (const PointStats& p : a.points) {
    const DiagnosisStats d = diagnosis_stats(p);
    for (size_t u = 0; u < d.unit_bytes.size() && u < d.busbw_gbps.size(); ++u) {
      const double bytes = static_cast<double>(d.unit_bytes[u]);
      const BenchRow* best = &bench.front();
      for (const BenchRow& r : bench) {
        if (std::abs(std::log(r.bytes / bytes)) < std::abs(std::log(best->bytes / bytes))) best = &r;
      }
      t.rows.push_back({p.point.model, p.point.mode->label, std::to_string(p.point.world_size), p.point.link(),
                        std::to_string(u), std::to_string(d.unit_bytes[u]), fmt_fixed(d.busbw_gbps[u], 3),
                        fmt_fixed(best->busbw, 3), format_number(best->bytes)});
    }
  }
  return "\n## All-reduce bandwidth: in training vs bench_allreduce (" + bench_json_path + ")\n\n" +
         (t.rows.empty() ? std::string("No run carries bucket_busbw_gbps.\n") : t.markdown()) +
         "\nIn training: each all-reduce unit's median bus bandwidth on rank 0's comm thread, 2(K−1)/K·bytes/s\n"
         "(with link emulation, the emulated link's). bench_allreduce: the row of the nearest message size.\n";
}

}  // namespace dpscale
