// test_plot.cpp — `dpscale plot` hands FILE and --out DIR to the plotter and passes its exit
// status on; with the real plots/plot_results.py (when it exists), charts come out in pairs.
#include <gtest/gtest.h>

#include <set>

#include "harness_util.h"

namespace dpscale {
namespace {

// A stand-in plotter that records its arguments and exits with the status in $FAKE_EXIT.
const char* kFakePlotter = R"(import os, sys
with open(os.path.join(os.path.dirname(sys.argv[0]), "argv.txt"), "w") as f:
    f.write("\n".join(sys.argv[1:]))
if os.environ.get("FAKE_EXIT", "0") == "2":
    print("plot_results.py: bad input", file=sys.stderr)
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
)";

TEST(HarnessPlot, PassesFileAndOutDirAndTheExitStatus) {
  test::ScratchDir dir;
  const std::string results = test::kSource + "/results/baselines/ci-cpu.jsonl";
  test::write_file(dir.file("fake.py"), kFakePlotter);
  const std::string out = dir.file("charts/deep");
  ProcessResult r = test::dpscale({"plot", results, "--out", out, "--script", dir.file("fake.py")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(dir.file("argv.txt")), results + "\n--out\n" + out);
  EXPECT_TRUE(std::filesystem::is_directory(out));

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

TEST(HarnessPlot, TheRealPlotterWritesPngSvgPairs) {
  const std::string script = test::kSource + "/plots/plot_results.py";
  if (!std::filesystem::exists(script)) GTEST_SKIP() << script << " is not there yet";
  test::ScratchDir dir;
  const ProcessResult r =
      test::dpscale({"plot", test::kSource + "/results/baselines/ci-cpu.jsonl", "--out", dir.file("out")}, 300);
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
