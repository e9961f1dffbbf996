// test_finite_step.cpp — the per-step finite check through the real train_single_gpu. A test hook
// (DPSCALE_TEST_INJECT_NONFINITE, trainers/nonfinite_hook.h) puts a real NaN or infinity into the
// all-reduced gradient or into a weight just before the update of step 3; the check, folded into
// the update's own pass, must stop the run at that very step — exit 2, one line naming the tensor,
// the element and the value — as the separate passes before it did. With the check off
// (--finite-check-every 0) the same run must not print that line: the NaN reaches the loss a step
// later instead (negative control). On a GPU the CUDA backend must print the CPU's line word for
// word, and its own negative control must fail that comparison (GPU-gated: skips without one).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/device.h"
#include "single_run.h"

namespace dpscale {
namespace {

using test::expect_bad_input;
using test::lines_of;
using test::tiny_run;

struct Injection {
  std::string hook;  // DPSCALE_TEST_INJECT_NONFINITE
  std::string line;  // what the trainer must print, after "train_single_gpu: "
};

// The hook's element is layers.1.weight[0, 5]; 784,8,10 at 128 samples, batch 32: 4 steps. An
// infinite weight comes out of the update as NaN (the decay term wd·w is 0·inf), and the check
// names the weight the update wrote.
const std::vector<Injection> kInjections = {
    {"gradient:nan:3", "non-finite values at epoch 1, step 3: gradient layers.1.weight[0, 5] is nan"},
    {"gradient:inf:3", "non-finite values at epoch 1, step 3: gradient layers.1.weight[0, 5] is inf"},
    {"weight:nan:3", "non-finite values at epoch 1, step 3: parameter layers.1.weight[0, 5] is nan"},
    {"weight:inf:3", "non-finite values at epoch 1, step 3: parameter layers.1.weight[0, 5] is nan"},
};

ProcessResult run_with(const std::string& backend, const std::string& hook, const std::string& check_every = "1") {
  std::vector<std::string> argv = {test::trainer_path()};
  for (const std::string& a : tiny_run({{"--backend", backend}, {"--finite-check-every", check_every}})) argv.push_back(a);
  ProcessOptions opts;
  opts.timeout_s = 120;
  opts.env = {"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "DPSCALE_TEST_INJECT_NONFINITE=" + hook};
  return run_process(argv, opts);
}

// The trainer's one line, without the program name; "" when there is none.
std::string trainer_line(const ProcessResult& r) {
  for (const std::string& l : lines_of(r.err)) {
    if (l.rfind("train_single_gpu: ", 0) == 0) return l.substr(std::string("train_single_gpu: ").size());
  }
  return "";
}

TEST(SingleFiniteStep, InjectedValueStopsTheRunAtItsStepNamingIt) {
  for (const Injection& in : kInjections) {
    SCOPED_TRACE(in.hook);
    const ProcessResult r = run_with("cpu", in.hook);
    expect_bad_input(r, {in.line}, /*banner_allowed=*/true);
    // Negative control: unchecked, the value goes on into the next step's loss.
    const ProcessResult unchecked = run_with("cpu", in.hook, "0");
    EXPECT_EQ(trainer_line(unchecked).find(in.line), std::string::npos) << unchecked.err;
    EXPECT_NE(trainer_line(unchecked).find("non-finite loss at epoch 1, step 4"), std::string::npos) << unchecked.err;
  }
}

TEST(SingleFiniteStep, MalformedHookIsRefusedNotIgnored) {
  const ProcessResult r = run_with("cpu", "gradient:nan:0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("DPSCALE_TEST_INJECT_NONFINITE"), std::string::npos) << r.err;
}

// The CUDA backend's check (the fused kernel) against the CPU's: the same line for each value.
TEST(SingleFiniteStep, CudaPrintsTheCpusLine) {
  if (!cuda_compiled()) GTEST_SKIP() << "built without the CUDA backend";
  if (cuda_device_count() == 0) GTEST_SKIP() << "needs 1 GPU, 0 answer";
  for (const Injection& in : kInjections) {
    SCOPED_TRACE(in.hook);
    const std::string cpu = trainer_line(run_with("cpu", in.hook));
    ASSERT_EQ(cpu.rfind(in.line, 0), 0u) << cpu;
    const ProcessResult cuda = run_with("cuda", in.hook);
    EXPECT_EQ(cuda.exit_code, 2) << cuda.err;
    EXPECT_EQ(trainer_line(cuda), cpu) << cuda.err;
    // Negative control: the check off on CUDA must not pass the same comparison.
    const ProcessResult unchecked = run_with("cuda", in.hook, "0");
    EXPECT_NE(trainer_line(unchecked), cpu) << unchecked.err;
  }
}

}  // namespace
}  // namespace dpscale
