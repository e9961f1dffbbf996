// test_bad_options.cpp — bad command-line values: each exits 2 with one line on stderr naming
// the problem, before any heavy work. Also --backend cuda without a GPU, --save into a missing
// directory or onto a directory, a --trace that cannot be written or --trace-steps past the
// last step (refused before training), and a diverging run (non-finite loss).
#include <gtest/gtest.h>

#include <fstream>

#include "models/device.h"
#include "single_run.h"

namespace dpscale {
namespace {

using test::expect_bad_input;
using test::run_trainer;
using test::tiny_run;

// Not bad input, but the other way to exit early: usage on stdout, status 0, no record.
TEST(SingleCli, HelpListsTheOptions) {
  const ProcessResult r = run_trainer({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt : {"--model", "--data", "--batch-size", "--epochs", "--lr", "--max-steps", "--backend",
                          "--init", "--save", "--seed", "--samples", "--warmup-steps"}) {
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt << " missing from --help";
  }
  EXPECT_EQ(r.out.find("RESULTS_JSON"), std::string::npos);
}

TEST(SingleBadOption, UnknownPreset) {
  expect_bad_input(run_trainer(tiny_run({{"--model", "huge"}})), {"--model", "unknown preset 'huge'"});
}

TEST(SingleBadOption, MalformedWidthList) {
  expect_bad_input(run_trainer(tiny_run({{"--model", "784,,10"}})), {"--model", "malformed width list"});
  expect_bad_input(run_trainer(tiny_run({{"--model", "784,abc,10"}})), {"--model", "'abc' is not a whole number"});
  expect_bad_input(run_trainer(tiny_run({{"--model", "784,0,10"}})), {"--model", "width 0", "out of range"});
}

TEST(SingleBadOption, BatchSizeZero) {
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "0"}})), {"--batch-size", "at least 1"});
}

TEST(SingleBadOption, BatchLargerThanData) {
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "256"}, {"--samples", "128"}})),
                   {"--batch-size 256", "larger than the 128 training samples"});
}

TEST(SingleBadOption, NegativeNumbers) {
  expect_bad_input(run_trainer(tiny_run({{"--epochs", "-1"}})), {"--epochs"});
  expect_bad_input(run_trainer(tiny_run({{"--samples", "-5"}})), {"--samples", "negative"});
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "-32"}})), {"--batch-size"});
  expect_bad_input(run_trainer(tiny_run({{"--max-steps", "-2"}})), {"--max-steps", "negative"});
  expect_bad_input(run_trainer(tiny_run({{"--warmup-steps", "-1"}})), {"--warmup-steps", "negative"});
  expect_bad_input(run_trainer(tiny_run({{"--lr", "-0.1"}})), {"--lr", "positive"});
  expect_bad_input(run_trainer(tiny_run({{"--threads", "-1"}})), {"--threads"});
}

// An unsigned option must not wrap a negative number into a huge value.
TEST(SingleBadOption, NegativeSeed) {
  expect_bad_input(run_trainer(tiny_run({{"--seed", "-1"}})), {"--seed"});
}

TEST(SingleBadOption, NonNumericNumbers) {
  expect_bad_input(run_trainer(tiny_run({{"--lr", "abc"}})), {"--lr", "abc"});
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "12x"}})), {"--batch-size", "12x"});
  expect_bad_input(run_trainer(tiny_run({{"--epochs", "two"}})), {"--epochs", "two"});
  expect_bad_input(run_trainer(tiny_run({{"--samples", "1e3"}})), {"--samples", "1e3"});
  expect_bad_input(run_trainer(tiny_run({{"--seed", "x"}})), {"--seed"});
  expect_bad_input(run_trainer(tiny_run({{"--lr", "nan"}})), {"--lr"});
}

TEST(SingleBadOption, NumberOutOfRange) {
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "99999999999"}})), {"--batch-size"});
}

TEST(SingleBadOption, UnknownOptionAndNames) {
  expect_bad_input(run_trainer(tiny_run({{"--bogus", "1"}})), {"--bogus"});
  expect_bad_input(run_trainer(tiny_run({{"--data", "mnist"}})), {"--data", "unknown dataset 'mnist'"});
  expect_bad_input(run_trainer(tiny_run({{"--backend", "gpu"}})), {"--backend", "unknown backend 'gpu'"});
  expect_bad_input(run_trainer(tiny_run({{"--momentum", "1.5"}})), {"--momentum"});
}

TEST(SingleBadOption, SyntheticSamplesTooLargeForMemory) {
  // 10^12 samples of 784 floats: refused up front, not an allocation failure (or the OOM killer).
  expect_bad_input(run_trainer(tiny_run({{"--samples", "1000000000000"}})), {"--samples", "memory"});
}

TEST(SingleBadOption, BackendCudaWithoutGpu) {
  if (cuda_compiled() && cuda_device_count() > 0) GTEST_SKIP() << "a GPU answers on this machine";
  expect_bad_input(run_trainer(tiny_run({{"--backend", "cuda"}})), {"--backend cuda"});
}

class SingleBadSave : public test::TempDirTest {};

TEST_F(SingleBadSave, DirectoryDoesNotExist) {
  const ProcessResult r = run_trainer(tiny_run({{"--save", path("no/such/dir/w.safetensors")}}));
  expect_bad_input(r, {"--save", "does not exist"});  // refused before training, so no banner
  EXPECT_TRUE(entries().empty());
}

// A directory where the checkpoint should go: refused before training, and left alone.
TEST_F(SingleBadSave, TargetIsADirectory) {
  std::filesystem::create_directory(path("ckpt.safetensors"));
  const ProcessResult r = run_trainer(tiny_run({{"--save", path("ckpt.safetensors")}}));
  expect_bad_input(r, {"--save", "ckpt.safetensors", "is a directory"});
  EXPECT_EQ(entries(), std::set<std::string>{"ckpt.safetensors"});
  EXPECT_TRUE(entries("ckpt.safetensors").empty());
}

// Training succeeds, then writing the checkpoint fails half-way (a file-size limit, as a full
// disk would): exit 2, no record, the previous checkpoint intact, no temporary or partial file.
TEST_F(SingleBadSave, FailedWriteLeavesNoPartialFile) {
  const std::string ckpt = path("ckpt.safetensors");
  {
    std::ofstream old(ckpt, std::ios::binary);
    old << "previous checkpoint";
  }
  // The model's checkpoint is ~25 KB; the limit is a few KiB. SIGXFSZ is ignored (inherited across
  // exec) so write() fails with EFBIG instead of the signal killing the trainer.
  std::vector<std::string> argv = {"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"",
                                   test::trainer_path()};
  for (const std::string& a : tiny_run({{"--save", ckpt}})) argv.push_back(a);
  ProcessOptions opts;
  opts.timeout_s = 120;
  const ProcessResult r = run_process(argv, opts);
  expect_bad_input(r, {"--save", "ckpt.safetensors", "failed"}, /*banner_allowed=*/true);
  EXPECT_EQ(entries(), std::set<std::string>{"ckpt.safetensors"});
  std::ifstream in(ckpt, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "previous checkpoint");
}

// --trace is written by rank 0 after the timed epochs: a path that cannot be written is refused
// as the option is parsed — no banner, no training — not found when the training is over.
class SingleBadTrace : public test::TempDirTest {};

TEST_F(SingleBadTrace, AnUnwritableTraceIsRefusedBeforeTraining) {
  std::ofstream(path("blocker")) << "a file where a directory would have to be";
  for (const std::string& trace : {std::string("/proc/dpscale-trace.json"), path(""), path("blocker/trace.json")}) {
    SCOPED_TRACE(trace);
    expect_bad_input(run_trainer(tiny_run({{"--trace", trace}})), {"--trace"});  // no banner allowed
    EXPECT_EQ(entries(), std::set<std::string>{"blocker"});
  }
}

// A --trace-steps range past the run's last timed step would trace nothing (or less than asked):
// refused before training, naming the steps the run has. 128 samples / batch 32 = 4 steps.
TEST_F(SingleBadTrace, TraceStepsPastTheLastStepAreRefusedBeforeTraining) {
  const std::string trace = path("t.json");
  expect_bad_input(run_trainer(tiny_run({{"--trace", trace}, {"--trace-steps", "5:6"}})),
                   {"--trace-steps 5:6 goes past the run's last timed step: it has 4 (4 per epoch x --epochs 1)"});
  expect_bad_input(run_trainer(tiny_run({{"--trace", trace}, {"--trace-steps", "3:4"}, {"--max-steps", "2"}})),
                   {"--trace-steps 3:4", "it has 2", "stopped by --max-steps"});
  EXPECT_TRUE(entries().empty()) << "no trace written";
  // Control: the last steps of the run are traced.
  const ProcessResult ok = run_trainer(tiny_run({{"--trace", trace}, {"--trace-steps", "3:4"}}));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(entries(), std::set<std::string>{"t.json"});
}

TEST(SingleDivergence, NonFiniteLossStopsTraining) {
  const ProcessResult r = run_trainer(tiny_run({{"--lr", "1e30"}, {"--epochs", "5"}}));
  expect_bad_input(r, {"non-finite loss", "--lr"}, /*banner_allowed=*/true);
}

}  // namespace
}  // namespace dpscale
