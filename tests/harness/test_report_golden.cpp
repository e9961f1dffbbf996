// test_report_golden.cpp — every committed results file still reads, and its report renders as
// it did: tests/harness/golden/ holds `dpscale report FILE` (md) and `--format csv` of each, as
// the harness rendered them before the point had one type. The files span every age of the
// sweep line (bare argv with absolute paths, no settings, a cap and a link beside the model,
// axes, placements, reruns, failed runs), so the reader of each older form is held here.
//
// A golden is named after its file, '/' written as "__": experiments__axes__data__accum-steps.md is the
// report of experiments/axes/data/accum-steps.jsonl. A deliberate change of the report's text renders the
// goldens again (the command is in tests/harness/golden/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "harness/report/analysis.h"
#include "harness/report/report.h"
#include "harness/results/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(test::kSource) / "tests" / "harness" / "golden";

// "experiments__axes__data__accum-steps" -> "experiments/axes/data/accum-steps.jsonl"
std::string results_path(const std::string& stem) {
  std::string p = stem;
  for (size_t at; (at = p.find("__")) != std::string::npos;) p.replace(at, 2, "/");
  return p + ".jsonl";
}

std::set<std::string> golden_stems() {
  std::set<std::string> stems;
  for (const auto& e : fs::directory_iterator(kGolden)) {
    if (e.path().extension() == ".md" && e.path().filename() != "README.md") stems.insert(e.path().stem().string());
  }
  return stems;
}

TEST(HarnessReportGolden, EveryCommittedResultsFileRendersAsBefore) {
  const std::set<std::string> stems = golden_stems();
  ASSERT_GE(stems.size(), 40u) << "the goldens are missing";
  for (const std::string& stem : stems) {
    const std::string rel = results_path(stem);
    SCOPED_TRACE(rel);
    ASSERT_TRUE(fs::exists(fs::path(test::kSource) / rel)) << "a golden without its results file";
    // The report names the file as it was given: relative to the source tree.
    ResultsFile f = read_results((fs::path(test::kSource) / rel).string());
    f.path = rel;
    const Analysis a = analyse(f);
    for (const char* format : {"md", "csv"}) {
      const std::string want = test::read_file((kGolden / (stem + "." + format)).string());
      const std::string got = render_report(a, rel, format);
      EXPECT_EQ(got, want) << format << " differs";
    }
  }
}

// The goldens are what they say: an edit to a committed file's numbers shows (negative control).
TEST(HarnessReportGolden, AChangedNumberIsCaught) {
  const std::string rel = "experiments/axes/data/accum-steps.jsonl";
  std::string text = test::read_file((fs::path(test::kSource) / rel).string());
  const std::string from = "\"avg_epoch_s\":";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + from.size(), "1");  // 0.86 s -> 10.86 s in the first run
  const Analysis a = analyse(parse_results(text, rel));
  EXPECT_NE(render_report(a, rel, "md"), test::read_file((kGolden / "experiments__axes__data__accum-steps.md").string()));
}

}  // namespace
}  // namespace dpscale
