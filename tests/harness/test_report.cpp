// test_report.cpp — report arithmetic on a hand-made file built from the workshop's own XLarge
// numbers (speedup, E = S/K, comm %, γ, the Amdahl ceiling the workshop derives), medians and
// spread over repeats, failed runs listed apart, the three output formats, and what the JSON
// carries for the charts (plots/ draws the report's numbers and computes none of its own).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/report/analysis.h"
#include "harness/report/report.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;
using test::sweep_line;

// The workshop's XLarge rows (4x A100): single 0.5956 s; naive 4G 0.2898 s with 0.0940 s comm;
// interleaved 4G 0.2485 s. Throughputs follow from 32768 samples per epoch.
std::string workshop_xlarge() {
  const SweepRun s = pt("xlarge", "single", 1), n = pt("xlarge", "naive", 4), i = pt("xlarge", "interleaved", 4);
  return sweep_line(s, make_record(s, 0.5956, {}, 51993098)) + sweep_line(n, make_record(n, 0.2898, 0.0940, 51993098)) +
         sweep_line(i, make_record(i, 0.2485, 0.0100, 51993098));
}

TEST(HarnessReport, WorkshopArithmetic) {
  const Analysis a = analyse(parse_results(workshop_xlarge(), "w.jsonl"));
  ASSERT_EQ(a.points.size(), 3u);
  const PointStats& single = a.points[0];
  const PointStats& naive = a.points[1];
  const PointStats& inter = a.points[2];
  EXPECT_STREQ(naive.point.mode.name(), "naive");

  EXPECT_NEAR(*single.speedup, 1.0, 1e-12);
  EXPECT_FALSE(single.comm_fraction.has_value());
  EXPECT_FALSE(single.amdahl_max.has_value());

  // S = T(K)/T(1) = 0.5956 / 0.2898 (equal samples per epoch), E = S/4.
  EXPECT_NEAR(*naive.speedup, 0.5956 / 0.2898, 1e-9);
  EXPECT_NEAR(*naive.efficiency, 0.5956 / 0.2898 / 4, 1e-9);
  EXPECT_NEAR(*naive.comm_fraction, 0.0940 / 0.2898, 1e-9);           // the workshop's chart 3: 32%
  EXPECT_NEAR(*naive.gamma, 0.0940 / (0.2898 - 0.0940), 1e-9);        // γ = comm / compute
  // The workshop: f = 0.596 / (0.596 + 0.094) = 0.86, S_max = 1 / ((1 - f) + f / 4) ≈ 2.8.
  const double f = 0.5956 / (0.5956 + 0.0940);
  EXPECT_NEAR(*naive.amdahl_max, 1.0 / ((1 - f) + f / 4), 1e-9);
  EXPECT_NEAR(*naive.amdahl_max, 2.839, 1e-3);
  EXPECT_NEAR(*inter.speedup, 2.3968, 1e-4);                          // the workshop's 2.40x
  EXPECT_NEAR(*inter.amdahl_max, *naive.amdahl_max, 1e-12);           // one ceiling per (model, K)
  EXPECT_NEAR(*inter.comm_fraction, 0.0100 / 0.2485, 1e-9);           // exposed wait / epoch
  EXPECT_FALSE(inter.gamma.has_value()) << "γ is defined on naive's separate phases only";
}

TEST(HarnessReport, MarkdownShowsTheWorkshopsColumns) {
  const Analysis a = analyse(parse_results(workshop_xlarge(), "w.jsonl"));
  const std::string md = render_report(a, "w.jsonl", "md");
  EXPECT_NE(md.find("| Model  | Mode        |   K | Params | Avg Epoch | Comm Time | Throughput | Speedup | E=S/K | Comm % |    γ | Naive Amdahl |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| xlarge | Single      |   1 |  52.0M |   0.5956s |         — |   55,017/s |   1.00× |  1.00 |      — |    — |            — |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("|        | Naive DP    |   4 |  52.0M |   0.2898s |   0.0940s |  113,071/s |   2.06× |  0.51 |    32% | 0.48 |        2.84× |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("xlarge: 2.40× (Interleaved, K=4), E = 0.60"), std::string::npos) << md;
  EXPECT_EQ(md.find("Failed runs"), std::string::npos);
}

// A transformer's rows carry tokens/s beside samples/s (its record's tokens_per_s); an MLP's do not.
TEST(HarnessReport, TransformerRowsHaveTokensPerSecond) {
  auto gpt = [](const SweepRun& p, double epoch_s, std::optional<double> comm_s) {
    RunRecord r = make_record(p, epoch_s, comm_s, 120576);
    r.widths = {};
    r.seq_len = 64;
    r.tokens_per_s = r.throughput_samples_per_s * 64;
    return r;
  };
  const SweepRun s = pt("gpt-tiny", "single", 1), n = pt("gpt-tiny", "naive", 2), m = pt("small", "single", 1);
  const std::string file = sweep_line(m, make_record(m, 0.25)) + sweep_line(s, gpt(s, 0.5, {})) +
                           sweep_line(n, gpt(n, 0.4, 0.1));
  const Analysis a = analyse(parse_results(file, "g.jsonl"));
  ASSERT_EQ(a.points.size(), 3u);
  EXPECT_FALSE(a.points[0].tokens.has_value());
  ASSERT_TRUE(a.points[1].tokens.has_value());
  EXPECT_DOUBLE_EQ(a.points[1].tokens->median, 32768.0 / 0.5 * 64);
  const std::string md = render_report(a, "g.jsonl", "md");
  EXPECT_NE(md.find("| Throughput |    Tokens/s | Speedup |"), std::string::npos) << md;
  // 32768 samples in 0.5 s: 65,536 samples/s, 64 tokens each.
  EXPECT_NE(md.find("|   65,536/s | 4,194,304/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("|   81,920/s | 5,242,880/s |   1.25× |"), std::string::npos) << md;
  EXPECT_NE(md.find("|  131,072/s |           — |"), std::string::npos) << md;  // the MLP
  const auto j = nlohmann::json::parse(render_report(a, "g.jsonl", "json"));
  EXPECT_TRUE(j["points"][0]["throughput_tokens_per_s"].is_null());
  EXPECT_DOUBLE_EQ(j["points"][2]["throughput_tokens_per_s"]["median"].get<double>(), 32768.0 / 0.4 * 64);
  // An MLP-only file has no such column (every committed report stays as it was).
  EXPECT_EQ(render_report(analyse(parse_results(sweep_line(m, make_record(m, 0.25)), "m.jsonl")), "m.jsonl", "md")
                .find("Tokens/s"),
            std::string::npos);
}

TEST(HarnessReport, SpeedupIsAgainstTheSameModelsSingleRun) {
  const SweepRun s1 = pt("small", "single", 1), s2 = pt("large", "single", 1);
  const SweepRun n1 = pt("small", "naive", 2), n2 = pt("large", "naive", 2), orphan = pt("medium", "naive", 2);
  const std::string text = sweep_line(s1, make_record(s1, 1.0)) + sweep_line(s2, make_record(s2, 10.0)) +
                           sweep_line(n1, make_record(n1, 2.0, 1.5)) + sweep_line(n2, make_record(n2, 5.0, 1.0)) +
                           sweep_line(orphan, make_record(orphan, 3.0, 1.0));
  const Analysis a = analyse(parse_results(text, "m.jsonl"));
  EXPECT_NEAR(*a.find(n1.point)->speedup, 0.5, 1e-12);
  EXPECT_NEAR(*a.find(n2.point)->speedup, 2.0, 1e-12);
  EXPECT_NEAR(*a.find(n2.point)->efficiency, 1.0, 1e-12);
  EXPECT_FALSE(a.find(orphan.point)->speedup.has_value()) << "no single run of medium in the file";
  EXPECT_FALSE(a.find(orphan.point)->amdahl_max.has_value());
}

TEST(HarnessReport, RepeatsGiveMediansAndSpread) {
  std::string text;
  for (int r = 0; r < 3; ++r) {
    const SweepRun s = pt("small", "single", 1, {}, "none", r), n = pt("small", "naive", 2, {}, "none", r);
    text += sweep_line(s, make_record(s, 1.0));
    // epochs 0.5, 0.4, 1.0 -> throughputs 65536, 81920, 32768; median 65536 (the 0.5 s run)
    const double e[] = {0.5, 0.4, 1.0};
    text += sweep_line(n, make_record(n, e[r], e[r] / 2));
  }
  const Analysis a = analyse(parse_results(text, "r.jsonl"));
  ASSERT_EQ(a.points.size(), 2u);
  const PointStats& n = a.points[1];
  EXPECT_EQ(n.runs, 3);
  EXPECT_DOUBLE_EQ(n.epoch_s.median, 0.5);
  EXPECT_DOUBLE_EQ(n.throughput.median, 65536);
  EXPECT_DOUBLE_EQ(n.throughput.min, 32768);
  EXPECT_DOUBLE_EQ(n.throughput.max, 81920);
  EXPECT_NEAR(*n.speedup, 2.0, 1e-12);
  EXPECT_NEAR(n.speedup_spread->min, 1.0, 1e-12);
  EXPECT_NEAR(n.speedup_spread->max, 2.5, 1e-12);
  EXPECT_NEAR(*n.comm_fraction, 0.5, 1e-12);
  EXPECT_NEAR(n.throughput.half_range(), (81920.0 - 32768.0) / 2 / 65536, 1e-12);
  const std::string md = render_report(a, "r.jsonl", "md");
  EXPECT_NE(md.find("3 (±37.5%)"), std::string::npos) << md;
  EXPECT_EQ(spread_of({4, 1, 3, 2}).median, 2.5);
}

TEST(HarnessReport, FailedRunsAreListedApart) {
  const SweepRun s = pt("small", "single", 1), n = pt("small", "naive", 2), i = pt("small", "interleaved", 2);
  const std::string text = sweep_line(s, make_record(s, 1.0)) + sweep_line(n, {}, "timed out after 60 s (process group killed)") +
                           sweep_line(i, {}, "exit status 1: boom") + sweep_line(i, make_record(i, 0.7, 0.1));
  const Analysis a = analyse(parse_results(text, "f.jsonl"));
  EXPECT_EQ(a.points.size(), 2u);  // single, and interleaved (which succeeded on a retry)
  ASSERT_EQ(a.failed.size(), 2u);
  EXPECT_FALSE(a.failed[0].retried_ok);
  EXPECT_TRUE(a.failed[1].retried_ok);
  ASSERT_EQ(a.failed_points.size(), 1u);
  EXPECT_STREQ(a.failed_points[0].mode.name(), "naive");
  const std::string md = render_report(a, "f.jsonl", "md");
  const auto table_end = md.find("Failed runs (2):");
  ASSERT_NE(table_end, std::string::npos) << md;
  EXPECT_GT(md.find("test/small-naive-k2-r0 | timed out after 60 s (process group killed)"), table_end) << md;
  EXPECT_NE(md.find("exit status 1: boom (a later run succeeded)"), std::string::npos) << md;
}

TEST(HarnessReport, CsvAndJsonCarryTheSameNumbers) {
  const Analysis a = analyse(parse_results(workshop_xlarge() + sweep_line(pt("xlarge", "bucketed", 4, 25.0), {}, "exit status 1: x"),
                                           "w.jsonl"));
  const auto csv = test::lines_of(render_report(a, "w.jsonl", "csv"));
  ASSERT_EQ(csv.size(), 5u);  // header, 3 points, 1 failed
  EXPECT_EQ(csv[0].substr(0, 53), "status,model,mode,world_size,bucket_cap_mb,link,n_par");
  EXPECT_EQ(csv[2].substr(0, 30), "ok,xlarge,naive,4,,none,519930");
  EXPECT_NE(csv[2].find(",2.0552"), std::string::npos) << csv[2];
  EXPECT_EQ(csv[4].substr(0, 27), "failed,xlarge,bucketed,4,25");
  EXPECT_EQ(csv[4].substr(csv[4].size() - 17), ",exit status 1: x");

  const auto j = nlohmann::json::parse(render_report(a, "w.jsonl", "json"));
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_NEAR(j["points"][1]["speedup"]["median"].get<double>(), 0.5956 / 0.2898, 1e-9);
  EXPECT_NEAR(j["points"][1]["gamma"].get<double>(), 0.0940 / (0.2898 - 0.0940), 1e-9);
  EXPECT_TRUE(j["points"][0]["comm_s"].is_null());
  ASSERT_EQ(j["failed"].size(), 1u);
  EXPECT_EQ(j["failed"][0]["point"]["settings"]["bucket_cap_mb"], "25");
  EXPECT_THROW(render_report(a, "w.jsonl", "xml"), InputError);
}

// The chart-only numbers of the JSON, on repeats chosen so each median is a different repeat's.
TEST(HarnessReport, JsonCarriesWhatTheChartsDraw) {
  std::string text;
  const double naive_epoch[] = {1.0, 1.2, 0.9}, bucket_epoch[] = {0.6, 0.8, 0.5};
  const double rank0[][2] = {{2.0, 1.5}, {2.2, 1.1}, {1.8, 1.3}};
  for (int r = 0; r < 3; ++r) {
    const SweepRun s = pt("small", "single", 1, {}, "none", r), n = pt("small", "naive", 2, {}, "none", r),
                     b = pt("small", "bucketed", 2, 25.0, "none", r);
    text += sweep_line(s, make_record(s, 2.0));
    text += sweep_line(n, make_record(n, naive_epoch[r], 0.4));
    RunRecord rb = make_record(b, bucket_epoch[r], 0.1 * (r + 1));
    rb.n_buckets = 3 + r;  // 3, 4, 5: median 4
    rb.loss_global = {2.3 + 0.1 * r, 2.1};
    rb.loss_rank0 = {rank0[r][0], rank0[r][1]};
    text += sweep_line(b, rb);
  }
  ResultsFile f = parse_results(text, "c.jsonl");
  // A diverged epoch (NaN, which no record line can hold: it is written as null) and one epoch
  // more than the others, put in after reading.
  f.entries.back().record->loss_global = {std::nan(""), 2.0, 1.9};
  const auto j = nlohmann::json::parse(render_report(analyse(f), "c.jsonl", "json"));
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_EQ(j["file"], "c.jsonl");
  EXPECT_TRUE(j["warnings"].empty());
  ASSERT_EQ(j["points"].size(), 3u);
  const auto& b = j["points"][2];
  EXPECT_EQ(b["runs"], 3);
  EXPECT_EQ(b["setup"]["backend"], "cpu");
  EXPECT_EQ(b["setup"]["global_batch"], 1024);
  // E = S/K with its spread: throughputs 32768/0.6, /0.8, /0.5 against single's 32768/2.0
  EXPECT_NEAR(b["efficiency"]["median"].get<double>(), 2.0 / 0.6 / 2, 1e-12);
  EXPECT_NEAR(b["efficiency"]["min"].get<double>(), 2.0 / 0.8 / 2, 1e-12);
  EXPECT_NEAR(b["efficiency"]["max"].get<double>(), 2.0 / 0.5 / 2, 1e-12);
  // saving against naive's median epoch (1.0 s): the slowest repeat saves least
  EXPECT_NEAR(b["naive_saving"]["median"].get<double>(), 1 - 0.6 / 1.0, 1e-12);
  EXPECT_NEAR(b["naive_saving"]["min"].get<double>(), 1 - 0.8 / 1.0, 1e-12);
  EXPECT_NEAR(b["naive_saving"]["max"].get<double>(), 1 - 0.5 / 1.0, 1e-12);
  EXPECT_NEAR(b["naive_saving_s"].get<double>(), 0.4, 1e-12);
  EXPECT_NEAR(b["comm_s"]["median"].get<double>(), 0.2, 1e-12);      // the exposed wait
  EXPECT_NEAR(b["comm_busy_s"]["max"].get<double>(), 0.3, 1e-12);
  EXPECT_EQ(b["n_buckets"].get<double>(), 4.0);
  // per-epoch medians, as long as the shortest repeat; a NaN is left out of its epoch's median
  ASSERT_EQ(b["loss_rank0"].size(), 2u);
  EXPECT_DOUBLE_EQ(b["loss_rank0"][0].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(b["loss_rank0"][1].get<double>(), 1.3);
  ASSERT_EQ(b["loss_global"].size(), 2u);
  EXPECT_DOUBLE_EQ(b["loss_global"][0].get<double>(), 2.35);  // of 2.3 and 2.4, NaN left out
  EXPECT_DOUBLE_EQ(b["loss_global"][1].get<double>(), 2.1);
  const auto& n = j["points"][1];
  EXPECT_TRUE(n["naive_saving"].is_null()) << "naive is the reference, not compared with itself";
  EXPECT_TRUE(n["n_buckets"].is_null());
  EXPECT_TRUE(j["points"][0]["comm_busy_s"].is_null());
  EXPECT_NEAR(j["points"][0]["efficiency"]["median"].get<double>(), 1.0, 1e-12);
}

TEST(HarnessReport, JsonCarriesTheFilesWarnings) {
  const SweepRun s = pt("small", "single", 1);
  const std::string line = sweep_line(s, make_record(s, 1.0));
  const Analysis a = analyse(parse_results(line + line.substr(0, 50), "t.jsonl"));
  const auto j = nlohmann::json::parse(render_report(a, "t.jsonl", "json"));
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0], "t.jsonl:2: truncated line skipped (an interrupted sweep?)");
}

}  // namespace
}  // namespace dpscale
