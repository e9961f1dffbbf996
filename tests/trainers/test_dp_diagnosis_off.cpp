// test_dp_diagnosis_off.cpp — the diagnosis options touch timing only: the final weights (--save)
// are bit-identical with and without them, for each data-parallel mode under mpirun -np 2:
//   --loader-delay-ms 0 --prefetch 2   the loader's staged copies instead of the dataset in place
//   --inject-delay 1:20                a sleep on rank 1
//   --triad 2                          six extra steps after the epochs, weights restored
//   --trace FILE                       the trace's hooks
// and a negative control: one more step (--max-steps) does change them, so the comparison can
// fail. (test_dp_exactness checks the default run against train_single_gpu, without any diagnosis option.)
//
// Run: ctest -R DpDiagnosisOff --output-on-failure
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dp_support.h"

namespace dpscale::test {
namespace {

const std::vector<std::string> kArgs = {"--backend", "cpu", "--model", kTinyModel, "--samples", "2048",
                                        "--batch-size", "512", "--epochs", "2", "--momentum", "0.9", "--quiet"};

Weights trained(const ScratchDir& dir, const std::string& exe, const std::string& tag,
                const std::vector<std::string>& extra) {
  const std::string path = dir.file(tag + ".safetensors");
  record_of(mpirun_argv(2, exe, kArgs + std::vector<std::string>{"--save", path} + extra), 180);
  return read_weights(path);
}

class DpDiagnosisOff : public ::testing::TestWithParam<std::string> {};

TEST_P(DpDiagnosisOff, OptionsChangeNoWeight) {
  const std::string exe = GetParam();
  ScratchDir dir("diag_off");
  const Weights base = trained(dir, exe, "base", {});
  const std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
      {"loader", {"--loader-delay-ms", "0", "--prefetch", "2"}},
      {"delay", {"--inject-delay", "1:20"}},
      {"triad", {"--triad", "2"}},
      {"trace", {"--trace", dir.file("t.json"), "--trace-steps", "2:3"}},
  };
  for (const auto& [tag, extra] : variants) {
    SCOPED_TRACE(tag);
    EXPECT_TRUE(trained(dir, exe, tag, extra) == base) << "weights differ with " << tag;
  }
  // Negative control: 7 steps instead of 8 leave different weights.
  EXPECT_FALSE(trained(dir, exe, "short", {"--max-steps", "7"}) == base);
}

// With --accum-steps 2 a step trains on two global batches: the loader must hand each
// micro-batch its own rows, in the loop's order (an epoch is steps × 2 batches, not steps).
TEST(DpDiagnosisOffAccum, LoaderFeedsEveryMicroBatchItsRows) {
  ScratchDir dir("diag_off_accum");
  const std::vector<std::string> accum = {"--accum-steps", "2"};
  const Weights base = trained(dir, "train_dp_naive", "base", accum);
  for (const std::string prefetch : {"0", "2"}) {
    SCOPED_TRACE("--prefetch " + prefetch);
    EXPECT_TRUE(trained(dir, "train_dp_naive", "loader" + prefetch,
                        accum + std::vector<std::string>{"--loader-delay-ms", "1", "--prefetch", prefetch}) == base)
        << "the loader's batches are not the micro-batches' rows";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, DpDiagnosisOff,
                         ::testing::Values("train_dp_naive", "train_dp_interleaved", "train_ddp_bucketed"),
                         [](const auto& info) { return std::string(info.param).substr(6); });

}  // namespace
}  // namespace dpscale::test
