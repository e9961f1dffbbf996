// test_plot.cpp — `dpscale plot` reads FILE, hands the plotter its report JSON (exactly what
// `dpscale report FILE --format json` prints) and --out DIR, and passes its exit status on; a bad
// results file is refused before the plotter runs; with the real plots/plot_results.py (when it
// exists), charts come out in pairs. Also the truncated-line rule the plotter relies on, held
// against every prefix of a real line (it moved here with the reading of results files).
#include <gtest/gtest.h>

#include <set>

#include "harness/results/results_file.h"
#include "harness_util.h"
#include "core/errors.h"

namespace dpscale {
namespace {

// A stand-in plotter that records its arguments, keeps a copy of the report it was given (the
// original is a temporary file) and exits with the status in $FAKE_EXIT.
const char* kFakePlotter = R"(import os, shutil, sys
here = os.path.dirname(sys.argv[0])
with open(os.path.join(here, "argv.txt"), "w") as f:
    f.write("\n".join(sys.argv[1:]))
shutil.copyfile(sys.argv[1], os.path.join(here, "report.json"))
if os.environ.get("FAKE_EXIT", "0") == "2":
    print("plot_results.py: bad input", file=sys.stderr)
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
)";

const std::string kFixture = test::kSource + "/tests/plots/fixture.jsonl";

TEST(HarnessPlot, HandsTheReportJsonAndOutDirAndPassesTheExitStatusOn) {
  test::ScratchDir dir;
  const std::string results = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
  test::write_file(dir.file("fake.py"), kFakePlotter);
  const std::string out = dir.file("charts/deep");
  ProcessResult r = test::dpscale({"plot", results, "--out", out, "--script", dir.file("fake.py")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto argv = test::lines_of(test::read_file(dir.file("argv.txt")));
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[1], "--out");
  EXPECT_EQ(argv[2], out);
  EXPECT_NE(argv[0], results);
  EXPECT_FALSE(std::filesystem::exists(argv[0])) << "the temporary report is removed afterwards";
  const ProcessResult rep = test::dpscale({"report", results, "--format", "json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(test::read_file(dir.file("report.json")), rep.out) << "the plotter gets the report, byte for byte";
  EXPECT_TRUE(std::filesystem::is_directory(out));

  r = test::dpscale({"plot", results, "--out", out, "--format", "svg", "--script", dir.file("fake.py")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::lines_of(test::read_file(dir.file("argv.txt"))).back(), "svg");

  ProcessOptions o;
  o.env = {"FAKE_EXIT=2"};
  r = run_process({test::kDpscale, "plot", results, "--out", out, "--script", dir.file("fake.py")}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("plot_results.py: bad input"), std::string::npos) << r.err;
  o.env = {"FAKE_EXIT=7"};
  r = run_process({test::kDpscale, "plot", results, "--out", out, "--script", dir.file("fake.py")}, o);
  EXPECT_EQ(r.exit_code, 1);

  r = test::dpscale({"plot", results, "--script", dir.file("absent.py")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("absent.py not found"), std::string::npos) << r.err;
}

TEST(HarnessPlot, ABadResultsFileIsRefusedBeforeThePlotterRuns) {
  test::ScratchDir dir;
  test::write_file(dir.file("fake.py"), kFakePlotter);
  test::write_file(dir.file("t.csv"), "model,mode\nsmall,naive\n");
  std::string failed_only;
  for (const std::string& l : test::lines_of(test::read_file(kFixture))) {
    if (l.find("\"status\":\"failed\"") != std::string::npos) failed_only += l + "\n";
  }
  ASSERT_FALSE(failed_only.empty());
  test::write_file(dir.file("failed.jsonl"), failed_only);
  const std::pair<std::string, std::string> cases[] = {
      {dir.file("t.csv"), "t.csv:1: not a results line"},
      {dir.file("failed.jsonl"), "no successful runs to plot (1 failed)"},
      {dir.file("absent.jsonl"), "absent.jsonl: cannot read the results file (no such file)"},
      {dir.file(""), "(it is a directory)"},
  };
  for (const auto& [file, says] : cases) {
    const ProcessResult r = test::dpscale({"plot", file, "--out", dir.file("out"), "--script", dir.file("fake.py")});
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("argv.txt"))) << "the plotter must not run for " << file;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << "nothing created for " << file;
  }
}

// Every prefix of a real line is a line cut short by a killed sweep: skipped with a warning.
TEST(HarnessPlot, EveryPrefixOfALineCountsAsTruncated) {
  const std::string line = test::lines_of(test::read_file(kFixture)).front();
  ASSERT_GT(line.size(), 1000u);
  for (size_t n = 1; n < line.size(); ++n) {
    const ResultsFile f = parse_results(line.substr(0, n), "p.jsonl");
    ASSERT_EQ(f.warnings.size(), 1u) << line.substr(n > 30 ? n - 30 : 0, 30);
    EXPECT_TRUE(f.entries.empty());
  }
  EXPECT_EQ(parse_results(line, "p.jsonl").entries.size(), 1u);  // the whole line is not
}

// A line that is wrong inside, rather than short, is an error, not a truncated line.
TEST(HarnessPlot, CorruptLinesAreNotTruncated) {
  std::string line = test::lines_of(test::read_file(kFixture)).front();
  std::string single_quoted = line;
  single_quoted.replace(single_quoted.find("\"mode\""), 6, "'mode'");
  std::string no_colon = line;
  no_colon.replace(no_colon.find(':'), 1, " ");
  for (const std::string& bad : {no_colon, line + "x", line.substr(0, line.size() - 1) + "]",
                                 std::string("not json"), single_quoted}) {
    EXPECT_THROW(parse_results(bad, "c.jsonl"), InputError) << bad.substr(0, 40);
  }
}

TEST(HarnessPlot, TheRealPlotterWritesPngSvgPairs) {
  const std::string script = test::kSource + "/plots/plot_results.py";
  if (!std::filesystem::exists(script)) GTEST_SKIP() << script << " is not there yet";
  test::ScratchDir dir;
  const ProcessResult r =
      test::dpscale({"plot", test::kSource + "/.ci/baseline/ci-cpu.jsonl", "--out", dir.file("out")}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> png, svg;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("out"))) {
    const std::string head = test::read_file(e.path().string()).substr(0, 256);
    if (e.path().extension() == ".png") {
      png.insert(e.path().stem().string());
      EXPECT_EQ(head.substr(1, 3), "PNG") << e.path();
    } else if (e.path().extension() == ".svg") {
      svg.insert(e.path().stem().string());
      EXPECT_NE(head.find("<svg"), std::string::npos) << e.path();
    }
  }
  EXPECT_GE(png.size(), 3u) << "epoch time, speedup, throughput at least";
  EXPECT_EQ(png, svg) << "every chart as PNG and SVG";
}

}  // namespace
}  // namespace dpscale
