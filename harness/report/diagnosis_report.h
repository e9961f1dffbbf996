// diagnosis_report.h — the report's part that says why a run scaled as it did: per point,
// medians over repeats of the triad (compute-only, comm-only, exposed, overlap %), the loader
// and per-rank times, and the bottleneck label (the most frequent over repeats) with the
// diagnosis line of a repeat that carries it; per-unit bus bandwidth (medians); what the ranks
// lost to contention (run delay share and per-rank run delay, medians; the contended rank per run).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/report/analysis.h"

namespace dpscale {

struct DiagnosisStats {
  std::string bottleneck;  // "" for records that carry no diagnosis fields
  std::optional<int> straggler_rank;
  std::string diagnosis;
  std::optional<double> triad_step_s, compute_only_step_s, comm_only_step_s, exposed_comm_step_s, overlap_pct;
  double loader_s = 0.0;
  std::vector<double> per_rank_compute_s, per_rank_wait_s;  // per rank: median over repeats
  std::vector<int64_t> unit_bytes;
  std::vector<double> busbw_gbps;  // per unit: median over repeats
  std::optional<double> run_delay_share;  // median over the repeats that carry it
  std::vector<double> per_rank_run_delay_s, per_rank_involuntary_switches;  // per rank: median over repeats
};

DiagnosisStats diagnosis_stats(const PointStats& p);

// The report JSON's "diagnosis" object of a point (docs/RESULTS_FORMAT.md).
nlohmann::ordered_json diagnosis_json(const PointStats& p);

// The Markdown section "Why each run scaled as it did"; "" when no point has a label.
std::string diagnosis_markdown(const Analysis& a);

// `dpscale report --bench-allreduce FILE`: each data-parallel point's per-unit bus bandwidth
// beside bench_allreduce's (its Google Benchmark JSON: rows with "bytes" and "busbw_GBps"; the
// median aggregate where repetitions made one) at the nearest message size. Markdown. Throws
// InputError naming the file when it cannot be read or holds no such rows.
std::string bench_comparison_markdown(const Analysis& a, const std::string& bench_json_path);

}  // namespace dpscale
