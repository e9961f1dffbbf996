// test_history_rows.cpp — the C++ side of `dpscale history`: the rows a results file becomes.
// A row's speedup is the gate's paired sample (the committed CI baseline's undisturbed samples
// equal gate_document's, point by point), its point key and description are the harness
// Point's, its run key names the run (the same line gives the same key under any revision or
// path; no two runs share one), and --rev / --rev-time resolve to a commit of a scratch repository or to a
// label with a UTC time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "core/errors.h"
#include "harness/history/history_rows.h"
#include "harness/history/revision.h"
#include "harness/report/analysis.h"
#include "harness/report/gate.h"
#include "../harness/harness_util.h"

namespace dpscale {
namespace {

using nlohmann::json;

const std::string kBaseline = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
const history::Revision kRev{"r1", "", "2026-01-01T00:00:00Z"};

TEST(HistoryRows, SpeedupsAreTheGatesPairedSamples) {
  const ResultsFile f = read_results(kBaseline);
  GateFiles g;
  g.now_path = kBaseline;
  g.now = f;
  g.bases = {f};
  const json doc = gate_document(g, GateOptions{});
  std::map<std::string, std::vector<double>> gate, rows;
  for (const json& p : doc["points"]) gate[p["describe"]] = p["now"]["samples"].get<std::vector<double>>();
  int disturbed = 0;
  for (const json& r : history::rows_of(f, kRev)) {
    if (r["point"]["mode"] == "single") continue;
    if (!r["disturbed"].is_null()) {
      ++disturbed;
      continue;
    }
    rows[r["describe"]].push_back(r["metrics"]["speedup"].get<double>());
  }
  ASSERT_EQ(gate.size(), 3u);
  EXPECT_GT(disturbed, 0) << "the baseline has disturbed runs: the rows must mark them as the gate leaves them out";
  for (auto& [point, samples] : gate) {
    std::vector<double> mine = rows[point];
    std::sort(mine.begin(), mine.end());
    std::sort(samples.begin(), samples.end());
    EXPECT_EQ(mine, samples) << point;
  }
}

TEST(HistoryRows, PointDescribeAndMetricsComeFromTheHarness) {
  const ResultsFile f = read_results(kBaseline);
  const auto rows = history::rows_of(f, kRev);
  ASSERT_EQ(rows.size(), f.entries.size());  // every line of the baseline is a successful run
  std::map<std::string, std::set<std::string>> keys_of_describe;
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    const SweepEntry& e = f.entries[i];
    const Point& k = e.point;
    EXPECT_EQ(r["describe"], k.describe());
    keys_of_describe[k.describe()].insert(r["point_key"].get<std::string>());
    EXPECT_EQ(json::parse(r["point_key"].get<std::string>()), r["point"]);
    EXPECT_EQ(r["curve"].get<std::string>().find("K="), std::string::npos) << r["curve"];
    EXPECT_EQ(r["machine"]["fingerprint"], e.machine.describe());
    const json& m = r["metrics"];
    EXPECT_DOUBLE_EQ(m["epoch_s"].get<double>(), e.record->avg_epoch_s);
    EXPECT_DOUBLE_EQ(m["throughput"].get<double>(), e.record->throughput_samples_per_s);
    if (e.point.mode == Mode::single) {
      EXPECT_TRUE(m["speedup"].is_null());
      EXPECT_TRUE(m["comm_share"].is_null());
    } else {
      EXPECT_DOUBLE_EQ(m["efficiency"].get<double>(), m["speedup"].get<double>() / e.point.world_size);
      const double comm = e.point.mode == Mode::naive ? *e.record->comm_s : *e.record->exposed_comm_s;
      EXPECT_DOUBLE_EQ(m["comm_share"].get<double>(), comm / e.record->avg_epoch_s);
    }
    EXPECT_TRUE(m["run_delay_share"].is_null());  // the baseline's records carry no run delay
  }
  ASSERT_EQ(keys_of_describe.size(), 4u);  // single, naive, interleaved, bucketed
  for (const auto& [d, keys] : keys_of_describe) EXPECT_EQ(keys.size(), 1u) << d << ": repeats of one point, one key";
}

TEST(HistoryRows, RunKeyNamesTheRunNotTheRevisionOrPath) {
  const ResultsFile f = read_results(kBaseline);
  test::ScratchDir dir;
  test::write_file(dir.file("copy.jsonl"), test::read_file(kBaseline));
  const ResultsFile copy = read_results(dir.file("copy.jsonl"));
  const auto a = history::rows_of(f, kRev);
  const auto b = history::rows_of(copy, {"r2", "", "2027-01-01T00:00:00Z"});
  std::set<std::string> keys;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["run_key"], b[i]["run_key"]);
    keys.insert(a[i]["run_key"].get<std::string>());
  }
  EXPECT_EQ(keys.size(), a.size()) << "two runs share a key";
  // Negative control: a line of another repeat is another run.
  std::string text = test::read_file(kBaseline);
  const auto first = text.substr(0, text.find('\n') + 1);
  std::string other = first;
  const std::string from = "\"repeat\":0", to = "\"repeat\":7";
  other.replace(other.find(from), from.size(), to);
  const auto r0 = history::rows_of(parse_results(first, "a"), kRev), r7 = history::rows_of(parse_results(other, "b"), kRev);
  EXPECT_NE(r0[0]["run_key"], r7[0]["run_key"]);
}

TEST(HistoryRows, IsoTimesAreNormalisedToUtc) {
  EXPECT_EQ(history::utc_iso("2026-11-26T09:30:00+01:00", "t"), "2026-11-26T08:30:00Z");
  EXPECT_EQ(history::utc_iso("2026-11-26T08:30:00-0230", "t"), "2026-11-26T11:00:00Z");
  EXPECT_EQ(history::utc_iso("2026-11-26T08:30:00Z", "t"), "2026-11-26T08:30:00Z");
  EXPECT_EQ(history::utc_iso("2026-11-26T08:30", "t"), "2026-11-26T08:30:00Z");  // no zone: UTC
  for (const char* bad : {"2026-02-30T00:00:00Z", "2026-11-26T25:00:00Z", "yesterday", "", "2026-11-26T08:30:00+1",
                          "2026-11-26T08"}) {
    EXPECT_THROW(history::utc_iso(bad, "--rev-time"), InputError) << bad;
  }
}

// A scratch repository with one commit at a known time, as the working directory.
struct ScratchRepo {
  test::ScratchDir dir;
  std::filesystem::path was = std::filesystem::current_path();
  ScratchRepo() {
    std::filesystem::current_path(dir.path);
    ProcessOptions o;
    o.env = {"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
             "GIT_COMMITTER_DATE=2026-03-04T05:06:07+02:00", "GIT_AUTHOR_DATE=2026-03-04T05:06:07+02:00"};
    for (const std::vector<std::string>& c : std::vector<std::vector<std::string>>{
             {"git", "init", "-q"}, {"git", "commit", "-q", "--allow-empty", "-m", "one"}}) {
      const ProcessResult r = run_process(c, o);
      if (r.exit_code != 0) throw std::runtime_error("git: " + r.err);
    }
  }
  ~ScratchRepo() { std::filesystem::current_path(was); }
};

TEST(HistoryRows, RevResolvesWithGitOrTakesRevTime) {
  ScratchRepo repo;
  const history::Revision head = history::resolve_revision("HEAD", "");
  EXPECT_EQ(head.name, "HEAD");
  EXPECT_EQ(head.commit_id.size(), 40u);
  EXPECT_EQ(head.commit_time, "2026-03-04T03:06:07Z");
  EXPECT_THROW(history::resolve_revision("HEAD", "2026-01-01T00:00:00Z"), InputError);  // git's time orders a commit
  EXPECT_THROW(history::resolve_revision("build-slow5", ""), InputError);    // a label needs its time
  const history::Revision label = history::resolve_revision("build-slow5", "2026-01-01T12:00:00+01:00");
  EXPECT_EQ(label.commit_id, "");
  EXPECT_EQ(label.commit_time, "2026-01-01T11:00:00Z");
  EXPECT_THROW(history::resolve_revision("--all", "2026-01-01T00:00:00Z"), InputError);
}

}  // namespace
}  // namespace dpscale
