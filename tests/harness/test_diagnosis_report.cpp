// test_diagnosis_report.cpp — the diagnosis in the harness: "triad" is a config key that reaches every
// data-parallel run (and not single, which has no all-reduce to switch off); the report shows
// the triad's columns and the bottleneck label, with medians over repeats and the label most
// repeats carry (on repeats where the first's, the last's, the mean and the median all differ);
// records without the diagnosis fields (older sweeps) still report.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "harness/report/analysis.h"
#include "harness/report/diagnosis_report.h"
#include "harness/report/report.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;
using test::sweep_line;

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(HarnessDiagnosis, TriadConfigKeyReachesEveryDataParallelRun) {
  const SweepConfig c = parse_config(
      R"({"models": ["784,64,10"], "modes": ["single", "naive", "interleaved", "bucketed"], "world_sizes": [2],
          "options": {"triad": 4, "loader_delay_ms": 20, "prefetch": 2}})",
      "t.json");
  const auto runs = expand(c, 1);
  ASSERT_EQ(runs.size(), 4u);
  const auto single = runs[0].args;
  EXPECT_FALSE(has(single, "--triad"));
  EXPECT_TRUE(has(single, "--loader-delay-ms"));  // a loader is any trainer's
  for (size_t i = 1; i < 4; ++i) {
    const auto args = runs[i].args;
    const auto at = std::find(args.begin(), args.end(), "--triad");
    ASSERT_NE(at, args.end()) << runs[i].point.mode.name();
    EXPECT_EQ(*(at + 1), "4");
  }
  try {
    parse_config(R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2], "options": {"triad": -1}})", "b.json");
    FAIL() << "a negative triad must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("triad"), std::string::npos) << e.what();
  }
}

RunRecord diagnosed(const SweepRun& p, double epoch, double comm, const std::string& label, double overlap) {
  RunRecord r = make_record(p, epoch, comm);
  r.bottleneck = label;
  r.diagnosis = label + "-bound: repeat " + std::to_string(p.repeat);
  r.triad_steps = 4;
  r.triad_step_s = 0.30;
  r.compute_only_step_s = 0.20;
  r.comm_only_step_s = 0.25;
  r.exposed_comm_step_s = 0.10;
  r.overlap_pct = overlap;
  r.per_rank_compute_s = {0.5, 0.6};
  r.per_rank_wait_s = {0.2, 0.1};
  return r;
}

const nlohmann::json& point_of(const nlohmann::json& report, const std::string& mode) {
  for (const auto& p : report["points"]) {
    if (p["point"]["mode"] == mode) return p;
  }
  throw std::runtime_error("no point of mode " + mode + " in the report");
}

std::string row_of(const std::string& md, const std::string& needle) {
  for (const std::string& l : test::lines_of(md)) {
    if (l.find("Why") == std::string::npos && l.find(needle) != std::string::npos) return l;
  }
  return "";
}

// The repeats' labels and overlaps are chosen so that each plausible wrong summary gives another
// answer than the documented one (the label most repeats carry, the first repeat's on a tie; the
// median overlap):
//   bucketed     compute, communication, communication; overlap 10, 40, 100 %
//                → communication (the first repeat's label is the minority), overlap 40 %
//                  (the mean is (10 + 40 + 100) / 3 = 50 %; first 10 %, last 100 %)
//   interleaved  communication, communication, loader; overlap 30, 90, 0 %
//                → communication (the last repeat's label is the minority), overlap 30 %
//                  (mean 40 %)
//   naive        loader, compute (a tie) → loader, the first repeat's (compute sorts first by name)
TEST(HarnessDiagnosis, ReportShowsTheTriadAndTheLabel) {
  const SweepRun s = pt("small", "single", 1);
  auto rep = [](const std::string& mode, int repeat) {
    return pt("small", mode, 2, mode == "bucketed" ? std::optional<double>(25.0) : std::nullopt, "none", repeat);
  };
  struct Repeat {
    std::string mode, label;
    double overlap;
  };
  const std::vector<Repeat> repeats = {
      {"bucketed", "compute", 10.0},          {"bucketed", "communication", 40.0},
      {"bucketed", "communication", 100.0},   {"interleaved", "communication", 30.0},
      {"interleaved", "communication", 90.0}, {"interleaved", "loader", 0.0},
      {"naive", "loader", 0.0},               {"naive", "compute", 0.0}};
  std::string text = sweep_line(s, make_record(s, 1.0));
  std::map<std::string, int> next_repeat;
  for (const Repeat& r : repeats) {
    const SweepRun p = rep(r.mode, next_repeat[r.mode]++);
    text += sweep_line(p, diagnosed(p, 0.6 + 0.1 * p.repeat, 0.1, r.label, r.overlap));
  }
  const Analysis a = analyse(parse_results(text, "d.jsonl"));
  const auto j = nlohmann::json::parse(render_report(a, "d.jsonl", "json"));

  const auto& b = point_of(j, "bucketed")["diagnosis"];
  EXPECT_EQ(b["bottleneck"], "communication");
  EXPECT_EQ(b["diagnosis"], "communication-bound: repeat 1");  // a line of a repeat that carries the label
  EXPECT_DOUBLE_EQ(b["overlap_pct"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(b["compute_only_step_s"].get<double>(), 0.20);
  EXPECT_EQ(b["per_rank_compute_s"].size(), 2u);

  const auto& i = point_of(j, "interleaved")["diagnosis"];
  EXPECT_EQ(i["bottleneck"], "communication");
  EXPECT_EQ(i["diagnosis"], "communication-bound: repeat 0");
  EXPECT_DOUBLE_EQ(i["overlap_pct"].get<double>(), 30.0);

  const auto& n = point_of(j, "naive")["diagnosis"];
  EXPECT_EQ(n["bottleneck"], "loader");
  EXPECT_EQ(n["diagnosis"], "loader-bound: repeat 0");

  // The single run of a record without the diagnosis fields: no label, no row.
  const auto& single = point_of(j, "single")["diagnosis"]["bottleneck"];
  EXPECT_TRUE(single.is_null() || single == "");

  // The Markdown table says the same, row by row.
  const std::string md = render_report(a, "d.jsonl", "md");
  EXPECT_NE(md.find("Why each run scaled as it did"), std::string::npos) << md;
  const std::string brow = row_of(md, "communication-bound: repeat 1");
  EXPECT_NE(brow.find("| communication"), std::string::npos) << md;
  EXPECT_NE(brow.find(" 40% |"), std::string::npos) << brow;
  EXPECT_NE(row_of(md, "communication-bound: repeat 0").find(" 30% |"), std::string::npos) << md;
  EXPECT_NE(row_of(md, "loader-bound: repeat 0").find("| loader"), std::string::npos) << md;
}

TEST(HarnessDiagnosis, RecordsWithoutTheFieldsStillRead) {
  const SweepRun n = pt("small", "naive", 2);
  nlohmann::json j = to_json(make_record(n, 1.0, 0.5));
  for (const char* f : {"bottleneck", "per_rank_compute_s", "loader_s", "overlap_pct", "bucket_busbw_gbps"}) j.erase(f);
  const RunRecord r = record_from_json(j);
  EXPECT_EQ(r.bottleneck, "");
  EXPECT_TRUE(r.per_rank_compute_s.empty());
  EXPECT_FALSE(r.overlap_pct);
}

// The contention a run's ranks lost: the run delay share (median of the repeats: 5%, 20%, 35% →
// 20%, where the mean would be 20% too but the first 5% and the last 35%), each repeat's
// contended rank beside the stragglers, and the per-rank run delay in the JSON.
TEST(HarnessDiagnosis, ReportShowsRunDelayAndTheContendedRank) {
  const SweepRun s = pt("small", "single", 1);
  std::string text = sweep_line(s, make_record(s, 1.0));
  const double shares[] = {0.05, 0.35, 0.20};
  for (int i = 0; i < 3; ++i) {
    const SweepRun p = pt("small", "naive", 2, std::nullopt, "none", i);
    RunRecord r = diagnosed(p, 0.6, 0.1, "compute", 0.0);
    r.run_delay_share = shares[i];
    r.per_rank_run_delay_s = {0.01 * (i + 1), 0.1 * (i + 1)};
    if (i == 0) {
      r.contended_rank = 1;
      r.contended_cause = "compute";
    }
    if (i == 1) {
      r.straggler_rank = 0;
      r.straggler_cause = "loader";
    }
    text += sweep_line(p, r);
  }
  const Analysis a = analyse(parse_results(text, "d.jsonl"));
  const auto j = nlohmann::json::parse(render_report(a, "d.jsonl", "json"));
  const auto& d = point_of(j, "naive")["diagnosis"];
  EXPECT_DOUBLE_EQ(d["run_delay_share"].get<double>(), 0.20);
  ASSERT_EQ(d["per_rank_run_delay_s"].size(), 2u);
  EXPECT_DOUBLE_EQ(d["per_rank_run_delay_s"][1].get<double>(), 0.2);
  ASSERT_EQ(d["stragglers"].size(), 3u);
  EXPECT_EQ(d["stragglers"][0]["contended_rank"], 1);
  EXPECT_EQ(d["stragglers"][0]["contended_cause"], "compute");
  EXPECT_TRUE(d["stragglers"][0]["rank"].is_null());
  EXPECT_EQ(d["stragglers"][1]["rank"], 0);
  EXPECT_TRUE(d["stragglers"][1]["contended_rank"].is_null());

  const std::string md = render_report(a, "d.jsonl", "md");
  const std::string row = row_of(md, "compute-bound: repeat 0");
  EXPECT_NE(row.find("| rank 1 contended (compute), rank 0 (loader), none |"), std::string::npos) << md;
  EXPECT_NE(row.find(" 20.0% |"), std::string::npos) << row;
  // A record without the fields: no figure, not 0%.
  EXPECT_TRUE(point_of(j, "single")["diagnosis"]["run_delay_share"].is_null());
}

// --bench-allreduce: each unit's bandwidth beside bench_allreduce's row of the nearest size
// (the median aggregate where there is one); a bad file is refused with exit 2.
TEST(HarnessDiagnosis, BenchAllreduceBesideTheTrainingsBandwidth) {
  test::ScratchDir dir;
  const SweepRun s = pt("small", "single", 1), b = pt("small", "bucketed", 2, 25.0);
  RunRecord rb = make_record(b, 0.6, 0.1);
  rb.bottleneck = "compute";
  rb.allreduce_unit_bytes = {1000, 1000000};
  rb.bucket_busbw_gbps = {0.125, 3.5};
  test::write_file(dir.file("r.jsonl"), sweep_line(s, make_record(s, 1.0)) + sweep_line(b, rb));
  test::write_file(dir.file("bench.json"), R"({"benchmarks": [
      {"name": "a/1024", "bytes": 1024, "busbw_GBps": 0.5},
      {"name": "a/1024_median", "aggregate_name": "median", "bytes": 1024, "busbw_GBps": 0.25},
      {"name": "a/1048576_median", "aggregate_name": "median", "bytes": 1048576, "busbw_GBps": 7.75}]})");
  const ProcessResult r = test::dpscale({"report", dir.file("r.jsonl"), "--bench-allreduce", dir.file("bench.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("in training vs bench_allreduce"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0.125 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0.250 |"), std::string::npos) << r.out;  // the median, not the 0.5 row
  EXPECT_NE(r.out.find(" 7.750 |"), std::string::npos) << r.out;  // 1 MB -> the 1 MiB row
  test::write_file(dir.file("bad.json"), "{\"benchmarks\": []}");
  const ProcessResult bad = test::dpscale({"report", dir.file("r.jsonl"), "--bench-allreduce", dir.file("bad.json")});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--bench-allreduce"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace dpscale
