// test_results_file.cpp — reading what trainers print and what sweeps write: RESULTS_JSON lines
// good and broken, sweep lines round-tripped, truncated last lines skipped with a warning,
// foreign lines refused with their line number, and report/compare/plot leaving files untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "harness/results/results_file.h"
#include "harness/sweep/run_outcome.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;
using test::sweep_line;

TEST(HarnessResults, FindsAndParsesAGoodResultsLine) {
  const RunRecord r = make_record(pt("small", "naive", 2, {}, "pcie4"), 0.5, 0.2);
  const std::string out = "some banner\n" + format_results_line(r) + "\ntrailing chatter\n";
  const auto j = find_results_json(out);
  ASSERT_TRUE(j.has_value());
  const RunRecord back = record_from_json(*j);
  EXPECT_EQ(back.mode, "naive");
  EXPECT_EQ(back.world_size, 2);
  EXPECT_DOUBLE_EQ(back.avg_epoch_s, 0.5);
  EXPECT_DOUBLE_EQ(*back.comm_s, 0.2);
  EXPECT_FALSE(back.exposed_comm_s.has_value());
}

TEST(HarnessResults, BrokenResultsLinesFailWithAReason) {
  const SweepRun p = pt("small", "single", 1);
  ProcessResult proc;
  proc.exit_code = 0;

  proc.out = "RESULTS_JSON: {\"schema\": \"dpscale.result/1\", \"mode\": \"sin";  // cut short
  EXPECT_EQ(judge_run(proc, p.point, 10).reason, "no RESULTS_JSON line in the output");

  proc.out = "nothing to see\n";
  EXPECT_EQ(judge_run(proc, p.point, 10).reason, "no RESULTS_JSON line in the output");

  nlohmann::ordered_json j = to_json(make_record(p, 1.0));
  j.erase("avg_epoch_s");
  proc.out = "RESULTS_JSON: " + j.dump() + "\n";
  EXPECT_EQ(judge_run(proc, p.point, 10).reason, "bad RESULTS_JSON record: record has no field 'avg_epoch_s'");

  j = to_json(make_record(p, 1.0));
  j["schema"] = "dpscale.result/0";
  proc.out = "RESULTS_JSON: " + j.dump() + "\n";
  EXPECT_NE(judge_run(proc, p.point, 10).reason.find("schema"), std::string::npos);

  // A record of a different run than the one launched (mpirun gave K singletons, say).
  proc.out = format_results_line(make_record(p, 1.0)) + "\n";
  EXPECT_NE(judge_run(proc, pt("small", "naive", 2).point, 10).reason.find("not the naive K=2 run"), std::string::npos);

  const RunOutcome ok = judge_run(proc, p.point, 10);
  ASSERT_TRUE(ok.record.has_value());
  EXPECT_TRUE(ok.reason.empty());
}

TEST(HarnessResults, ProcessFailuresBecomeReasons) {
  const SweepRun p = pt("small", "single", 1);
  ProcessResult r;
  r.exit_code = 2;
  r.err = "# banner\ntrain_single_gpu: --epochs must be at least 1 (got 0)\n\n";
  EXPECT_EQ(judge_run(r, p.point, 10).reason, "exit status 2: train_single_gpu: --epochs must be at least 1 (got 0)");
  r = {};
  r.timed_out = true;
  r.term_signal = 15;
  EXPECT_EQ(judge_run(r, p.point, 90).reason, "timed out after 90 s (process group killed)");
  r = {};
  r.term_signal = 9;
  EXPECT_NE(judge_run(r, p.point, 90).reason.find("killed by signal 9"), std::string::npos);
  r = {};
  r.exit_code = 0;
  r.out = format_results_line(make_record(p, 1.0));  // a record does not rescue a killed run
  r.timed_out = true;
  EXPECT_FALSE(judge_run(r, p.point, 5).record.has_value());
}

TEST(HarnessResults, SweepLinesRoundTrip) {
  const SweepRun p = pt("large", "bucketed", 4, 2.5, "pcie4", 1);
  const RunRecord rec = make_record(p, 0.25, 0.05, 35211786);
  const ResultsFile f = parse_results(sweep_line(p, rec) + sweep_line(pt("large", "naive", 4, {}, "pcie4"), {}, "exit status 1: boom"),
                                      "x.jsonl");
  ASSERT_EQ(f.entries.size(), 2u);
  const SweepEntry& a = f.entries[0];
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.line_no, 1);
  EXPECT_EQ(a.point.model, "large");
  EXPECT_STREQ(a.point.mode.name(), "bucketed");
  EXPECT_EQ(a.point.world_size, 4);
  EXPECT_EQ(*a.point.bucket_cap_mb(), 2.5);
  EXPECT_EQ(a.point.link(), "pcie4");
  EXPECT_EQ(a.repeat, 1);
  EXPECT_EQ(a.run.run_id, "test/large-bucketed-k4-cap2.5-pcie4-r1");
  EXPECT_EQ(a.record->n_params, 35211786);
  EXPECT_DOUBLE_EQ(*a.record->exposed_comm_s, 0.05);
  const SweepEntry& b = f.entries[1];
  EXPECT_FALSE(b.ok);
  EXPECT_FALSE(b.record.has_value());
  EXPECT_EQ(b.reason, "exit status 1: boom");
  EXPECT_EQ(b.line_no, 2);
}

TEST(HarnessResults, BareTrainerRecordsAreAccepted) {
  const RunRecord rec = make_record(pt("medium", "interleaved", 2, {}, "nvlink"), 0.3, 0.01);
  const ResultsFile f = parse_results(to_json(rec).dump() + "\n", "bare.jsonl");
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_STREQ(f.entries[0].point.mode.name(), "interleaved");
  EXPECT_EQ(f.entries[0].point.link(), "nvlink");
  EXPECT_FALSE(f.entries[0].point.bucket_cap_mb().has_value());
}

TEST(HarnessResults, TruncatedLinesAreSkippedWithAWarning) {
  const SweepRun p = pt("small", "single", 1);
  const std::string good = sweep_line(p, make_record(p, 1.0));
  const std::string cut = good.substr(0, good.size() / 2);  // a sweep killed mid-write
  const ResultsFile f = parse_results(good + cut, "t.jsonl");
  ASSERT_EQ(f.entries.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "t.jsonl:2: truncated line skipped (an interrupted sweep?)");
  // After a --resume the cut line is followed by new lines: still skipped, not fatal.
  const SweepRun again = pt("small", "single", 1, {}, "none", 1);  // the next repeat: another run id
  const ResultsFile g = parse_results(good + cut + "\n" + sweep_line(again, make_record(again, 1.0)), "t.jsonl");
  EXPECT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(g.warnings.size(), 1u);
}

TEST(HarnessResults, ForeignLinesAreRefusedWithTheirLineNumber) {
  const SweepRun p = pt("small", "single", 1);
  const std::string good = sweep_line(p, make_record(p, 1.0));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good + "hello world\n", "f.jsonl:2: not a results line (not JSON)"},
      {good + "[1, 2, 3]\n", "f.jsonl:2: not a results line: not a JSON object"},
      {"{\"foo\": 1}\n" + good, "f.jsonl:1: not a results line: neither a sweep line"},
      {good + "{\"status\": \"maybe\", \"point\": {}}\n", "f.jsonl:2: not a results line: 'status' is 'maybe'"},
      {"{\"status\": \"ok\", \"point\": {\"model\": \"small\", \"mode\": \"single\", \"world_size\": 1, \"link\": \"none\"}}\n",
       "f.jsonl:1: not a results line: record has no field 'schema'"},
      {good + "{\"broken\": tru}\n", "f.jsonl:2: not a results line (not JSON)"},
      // Valid JSON syntax, but a number no double holds (found by fuzz_results_line).
      {good + "{\"status\": \"ok\", \"avg_epoch_s\": 2.3e15059967041}\n", "f.jsonl:2: not a results line (a number out of range)"},
  };
  for (const auto& [text, msg] : cases) {
    SCOPED_TRACE(text);
    try {
      parse_results(text, "f.jsonl");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(msg, 0), 0u) << e.what();
    }
  }
}

TEST(HarnessResults, ReportCompareAndPlotNeverRewriteTheFile) {
  test::ScratchDir dir;
  const SweepRun s = pt("small", "single", 1), n = pt("small", "naive", 2);
  const std::string good = sweep_line(s, make_record(s, 1.0)) + sweep_line(n, make_record(n, 0.8, 0.3));
  const std::string text = good + good.substr(0, 40);  // with a truncated last line
  const std::string path = dir.file("r.jsonl");
  test::write_file(path, text);
  const auto mtime = std::filesystem::last_write_time(path);

  const ProcessResult rep = test::dpscale({"report", path});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.err.find("r.jsonl:3: truncated line skipped"), std::string::npos) << rep.err;
  EXPECT_EQ(test::dpscale({"compare", path, path}).exit_code, 0);
  test::write_file(dir.file("plot.py"), "import sys\nsys.exit(0)\n");
  EXPECT_EQ(test::dpscale({"plot", path, "--out", dir.file("charts"), "--script", dir.file("plot.py")}).exit_code, 0);

  EXPECT_EQ(test::read_file(path), text);
  EXPECT_EQ(std::filesystem::last_write_time(path), mtime);
}

TEST(HarnessResults, BadResultsFilesExit2WithOneLine) {
  test::ScratchDir dir;
  test::write_file(dir.file("foreign.jsonl"), "# not ours\n");
  test::write_file(dir.file("empty.jsonl"), "");
  for (const auto& [args, msg] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"report", dir.file("missing.jsonl")}, "cannot read the results file"},
           {{"report", dir.file("foreign.jsonl")}, "foreign.jsonl:1: not a results line"},
           {{"report", dir.file("empty.jsonl")}, "no runs in the file"},
           {{"compare", dir.file("foreign.jsonl"), dir.file("empty.jsonl")}, "foreign.jsonl:1"},
           {{"report", dir.file("foreign.jsonl"), "--format", "xml"}, "foreign.jsonl:1"},
           {{"plot", dir.file("missing.jsonl")}, "cannot read the results file"},
           {{"frobnicate"}, "dpscale: "},
       }) {
    SCOPED_TRACE(args[0]);
    const ProcessResult r = test::dpscale(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(msg), std::string::npos) << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  }
}

// A successful run already in the file (two sweeps that shared it before the --out
// lock) is counted once; a failed line and its successful retry are both kept.
TEST(HarnessResults, ASuccessfulRunIsNeverCountedTwice) {
  const SweepRun a = pt("small", "naive", 2), b = pt("small", "naive", 4);
  const std::string line_a = sweep_line(a, make_record(a, 0.5, 0.1));
  const std::string text = sweep_line(a, std::nullopt, "exit status 3: boom") + line_a + sweep_line(b, make_record(b, 0.4, 0.1)) +
                           sweep_line(a, make_record(a, 0.9, 0.1)) + line_a;
  const ResultsFile f = parse_results(text, "x.jsonl");
  ASSERT_EQ(f.entries.size(), 3u);
  EXPECT_FALSE(f.entries[0].ok);
  EXPECT_DOUBLE_EQ(f.entries[1].record->avg_epoch_s, 0.5) << "the first one counts";
  EXPECT_EQ(f.entries[2].point.world_size, 4);
  ASSERT_EQ(f.warnings.size(), 2u);
  EXPECT_EQ(f.warnings[0], "x.jsonl:4: test/small-naive-k2-r0 is already in line 2; duplicate skipped");
  EXPECT_EQ(f.warnings[1], "x.jsonl:5: test/small-naive-k2-r0 is already in line 2; duplicate skipped");
  // Control: repeats are different run ids, all kept.
  const SweepRun r1 = pt("small", "naive", 2, {}, "none", 1);
  EXPECT_EQ(parse_results(line_a + sweep_line(r1, make_record(r1, 0.5, 0.1)), "y").entries.size(), 2u);
}

// The repair --resume makes: a cut-off tail is cut off; a complete line without its newline gets one.
TEST(HarnessResults, RepairTornTailCutsOnlyACutOffLine) {
  test::ScratchDir dir;
  const SweepRun a = pt("small", "single", 1);
  const std::string good = sweep_line(a, make_record(a, 0.5));
  const std::string path = dir.file("r.jsonl");
  test::write_file(path, good + good.substr(0, 40));
  EXPECT_EQ(repair_torn_tail(path), 40u);
  EXPECT_EQ(test::read_file(path), good);
  EXPECT_EQ(repair_torn_tail(path), 0u) << "nothing more to repair";
  EXPECT_EQ(test::read_file(path), good);
  test::write_file(path, good + good.substr(0, good.size() - 1));  // whole, only the newline missing
  EXPECT_EQ(repair_torn_tail(path), 0u);
  EXPECT_EQ(test::read_file(path), good + good);
  test::write_file(path, good.substr(0, 10));  // the only line, cut
  EXPECT_EQ(repair_torn_tail(path), 10u);
  EXPECT_EQ(test::read_file(path), "");
}

// A record no run can produce — a negative, zero or missing (null) epoch time, a negative comm
// time — is refused by every reader with one line naming the file, the line and the field,
// before any table, speedup or chart is computed from it; the file is left as it was.
TEST(HarnessResults, ImpossibleNumbersAreRefusedByEveryReader) {
  test::ScratchDir dir;
  test::write_file(dir.file("fake.py"), "import sys\nsys.exit(0)\n");
  const SweepRun s = pt("small", "single", 1), n = pt("small", "naive", 2);
  const std::string good = sweep_line(s, make_record(s, 1.0)) + sweep_line(n, make_record(n, 0.6, 0.1));
  RunRecord negative = make_record(n, 0.6, 0.1), zero = negative, missing = negative, comm = negative;
  negative.epoch_times_s = {-1.2};
  zero.avg_epoch_s = 0;
  missing.epoch_times_s = {std::nan("")};  // written as null
  comm.comm_s = -0.1;
  const SweepRun n1 = pt("small", "naive", 2, std::nullopt, "none", 1);
  for (const auto& [record, says] : std::vector<std::pair<RunRecord, std::string>>{
           {negative, "record field 'epoch_times_s' must be a positive number (got -1.2)"},
           {zero, "record field 'avg_epoch_s' must be a positive number (got 0)"},
           {missing, "record field 'epoch_times_s' must be a positive number (got null)"},
           {comm, "record field 'comm_s' must be a non-negative number (got -0.1)"}}) {
    SCOPED_TRACE(says);
    const std::string path = dir.file("bad.jsonl");
    const std::string text = good + sweep_line(n1, record);
    test::write_file(path, text);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"report", path}, {"compare", path, path}, {"compare", path, path, "--tolerance", "0.1"},
          {"plot", path, "--out", dir.file("charts"), "--script", dir.file("fake.py")},
          {"predict", "--from", path, "--link", "pcie4"}}) {
      SCOPED_TRACE(args[0] + (args.size() > 3 ? " " + args[3] : ""));
      const ProcessResult r = test::dpscale(args);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find("bad.jsonl:3: not a results line: " + says), std::string::npos) << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(test::read_file(path), text);
      EXPECT_FALSE(std::filesystem::exists(dir.file("charts"))) << "plot made its --out for a file it refused";
    }
  }
  // Control: the good lines alone are read by all of them.
  test::write_file(dir.file("good.jsonl"), good);
  EXPECT_EQ(test::dpscale({"report", dir.file("good.jsonl")}).exit_code, 0);
  EXPECT_EQ(test::dpscale({"compare", dir.file("good.jsonl"), dir.file("good.jsonl"), "--tolerance", "0.1"}).exit_code, 0);
}

}  // namespace
}  // namespace dpscale
