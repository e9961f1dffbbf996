// test_resume.cpp — `dpscale sweep --resume` against fake trainers (fake_sweep.h): it runs only
// what the file does not hold, needs --resume to touch an existing file, repairs a cut-off last
// line of its own file, and refuses — byte for byte unchanged, before anything runs — a file
// made by another config, a text file that is not a results file, a one-line text file, and a
// file that holds nothing but a cut-off line (the repair comes only after the whole file and
// the config are accepted).
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/report/analysis.h"
#include "harness/results/results_file.h"
#include "fake_sweep.h"

namespace dpscale {
namespace {

TEST(HarnessSweep, ResumeRunsOnlyWhatIsNotDone) {
  FakeSweep f;
  f.behave("naive", "fail");
  EXPECT_EQ(f.sweep().exit_code, 1);
  EXPECT_EQ(f.called().size(), 4u);

  f.behave("naive", "ok");
  std::filesystem::remove(f.calls);
  const ProcessResult again = f.sweep({"--resume"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  ASSERT_EQ(f.called().size(), 1u) << "only the failed run is run again";
  EXPECT_EQ(f.called()[0].substr(0, 6), "naive ");
  EXPECT_NE(again.err.find("(3 already done there)"), std::string::npos) << again.err;

  const Analysis a = analyse(read_results(f.out));
  EXPECT_EQ(a.points.size(), 4u);
  ASSERT_EQ(a.failed.size(), 1u);
  EXPECT_TRUE(a.failed[0].retried_ok);

  std::filesystem::remove(f.calls);
  const std::string before = read_file(f.out);
  EXPECT_EQ(f.sweep({"--resume"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(f.calls)) << "a finished sweep resumes to nothing";
  EXPECT_EQ(read_file(f.out), before);
}

TEST(HarnessSweep, AnExistingOutNeedsResume) {
  FakeSweep f;
  write_file(f.out, "keep me\n");
  const ProcessResult r = f.sweep();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists: pass --resume"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(f.out), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(f.calls));
}

TEST(HarnessSweep, ResumeAfterACutOffLineStartsANewLine) {
  FakeSweep f;
  const SweepRun s = pt("small", "single", 1);
  RunInfo info;
  info.config = "fake";
  info.run_id = s.run_id("fake");
  info.config_hash = config_hash(load_config(f.config));
  const std::string good = make_sweep_line(s.point, s.repeat, info, {}, make_record(s, 0.5), "").dump() + "\n";
  write_file(f.out, good + good.substr(0, 50));  // the next run was being written when killed
  const ProcessResult r = f.sweep({"--resume"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(f.called().size(), 3u) << "single was done";
  // --resume repairs the file (one message), so no later read warns about it.
  EXPECT_NE(r.err.find("out.jsonl: removed a cut-off last line (50 bytes, left by an interrupted sweep)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const ResultsFile rf = read_results(f.out);
  EXPECT_EQ(rf.entries.size(), 4u);
  EXPECT_TRUE(rf.warnings.empty());
  EXPECT_EQ(lines_of(read_file(f.out)).size(), 4u);
  EXPECT_EQ(read_file(f.out).substr(0, good.size()), good);
}

TEST(HarnessSweep, ResumeRefusesAFileMadeByAnotherConfig) {
  FakeSweep f;
  ASSERT_EQ(f.sweep().exit_code, 0);
  const std::string before = read_file(f.out);
  const auto first = nlohmann::json::parse(lines_of(before)[0]);
  ASSERT_EQ(first["run"]["config_hash"].get<std::string>().size(), 16u);

  // Other trainer options: the same run ids would be measured differently.
  write_file(f.config, R"({"name": "fake", "models": ["small"], "modes": ["single", "naive", "interleaved", "bucketed"],
                           "world_sizes": [2], "bucket_caps_mb": [1], "link": "pcie4", "options": {"lr": 0.5}})");
  ProcessResult r = f.sweep({"--resume"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("out.jsonl:1 was made with other options, link or backend (config hash "), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  // Another config altogether.
  write_file(f.config, R"({"name": "other", "models": ["small"], "modes": ["single"]})");
  r = f.sweep({"--resume"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("out.jsonl:1 was made by config 'fake', not 'other'"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(f.out), before) << "a refused resume writes nothing";

  // Control: the same settings with one more world size extend the sweep.
  write_file(f.config, R"({"name": "fake", "models": ["small"], "modes": ["single", "naive", "interleaved", "bucketed"],
                           "world_sizes": [2, 4], "bucket_caps_mb": [1], "link": "pcie4", "timeout_s": 30})");
  std::filesystem::remove(f.calls);
  r = f.sweep({"--resume"});
  EXPECT_NE(r.err.find("(4 already done there)"), std::string::npos) << r.err;
  EXPECT_EQ(f.called().size(), 3u) << "the K=4 points only";
}


// A line of config "fake" for run `p`, with this config's hash: what a sweep of it writes.
std::string own_line(const FakeSweep& f, const SweepRun& p) {
  RunInfo info;
  info.config = "fake";
  info.run_id = p.run_id("fake");
  info.config_hash = config_hash(load_config(f.config));
  return make_sweep_line(p.point, p.repeat, info, {}, make_record(p, 0.5), "").dump() + "\n";
}

// Every refusal: exit 2, one line saying why, the file as it was to the byte, no run started.
void expect_refused_unchanged(FakeSweep& f, const std::string& contents, const std::string& why) {
  write_file(f.out, contents);
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--resume"}, {"--resume", "--dry-run"}}) {
    const ProcessResult r = f.sweep(extra);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_EQ(read_file(f.out), contents) << "a refused file is left byte for byte";
    EXPECT_FALSE(std::filesystem::exists(f.calls)) << "nothing ran";
    EXPECT_FALSE(std::filesystem::exists(f.out + ".lock"));
  }
}

TEST(HarnessResume, AnotherConfigsFileWithACutOffLineIsRefusedUncut) {
  FakeSweep f;
  const SweepRun s = pt("small", "single", 1);
  RunInfo info;
  info.config = "other";
  info.run_id = s.run_id("other");
  const std::string line = make_sweep_line(s.point, s.repeat, info, {}, make_record(s, 0.5), "").dump() + "\n";
  expect_refused_unchanged(f, line + line.substr(0, 60), "was made by config 'other', not 'fake'");
}

TEST(HarnessResume, ATextFileThatIsNotResultsIsRefusedWhole) {
  FakeSweep f;
  // Its last line has no newline: it was what --resume once cut before saying "not a results line".
  expect_refused_unchanged(f, "notes about the run\nmore notes", "out.jsonl:1: not a results line");
  // One line, no newline: once emptied, and then the sweep ran into it.
  expect_refused_unchanged(f, "hello", "out.jsonl:1: not a results line");
  // A results file whose last line is a sentence, not a record cut short.
  expect_refused_unchanged(f, own_line(f, pt("small", "single", 1)) + "not JSON at all", "out.jsonl:2: not a results line");
}

TEST(HarnessResume, AFileOfNothingButACutOffLineIsRefused) {
  FakeSweep f;
  const std::string line = own_line(f, pt("small", "single", 1));
  // Which config wrote it cannot be told from the part that survived.
  expect_refused_unchanged(f, line.substr(0, 60), "holds no complete line of config 'fake'");

  // Control: the same cut-off line after a complete line of this config is repaired, and only
  // then does the sweep append.
  write_file(f.out, line + line.substr(0, 60));
  const ProcessResult r = f.sweep({"--resume"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed a cut-off last line (60 bytes"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(f.out).substr(0, line.size()), line);
  EXPECT_EQ(lines_of(read_file(f.out)).size(), 4u);
}

}  // namespace
}  // namespace dpscale
