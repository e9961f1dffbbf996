// test_dp_exactness.cpp — K ranks train the same weights as one device (textbook 15.1 §3).
//
// From one --init checkpoint, each data-parallel mode under `mpirun -np K` (K = 2 and 4,
// oversubscribed on a 2-core machine) and train_single_gpu take the same 3 SGD steps over the
// same global batches; the saved weights must agree up to float summation order, and the
// global loss of every epoch must be the single-device loss. Negative controls show the
// comparison is tight: one step more, a 1 % different learning rate, other initial weights or
// other data (another --seed) all fail it.
//
// Run: ctest -R DpExactness --output-on-failure
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

// 2·batch samples = 2 steps per epoch; 3 steps = one full epoch and one of a single step, so
// the per-epoch losses cover both a 2-step and a 1-step mean. The default 3 warm-up steps stay
// on: they run forward, backward and the all-reduces but must not update.
std::vector<std::string> common_args(const std::string& init, const std::string& save, int max_steps = 3,
                                     int batch = 256) {
  // The CPU backend for both: this suite checks MPI (tests/trainers/test_dp_nccl.cpp does NCCL).
  return {"--backend", "cpu", "--model", kTinyModel, "--samples", std::to_string(2 * batch), "--batch-size",
          std::to_string(batch), "--max-steps", std::to_string(max_steps), "--lr", "0.05", "--init", init, "--save",
          save, "--quiet"};
}

std::vector<std::string> with_seed(std::vector<std::string> args, const std::string& seed) {
  args.insert(args.end(), {"--seed", seed});
  return args;
}

struct Mode {
  std::string exe;
  std::vector<std::string> extra;
};

Mode mode_named(const std::string& name) {
  if (name == "naive") return {"train_dp_naive", {}};
  if (name == "naive_fused") return {"train_dp_naive", {"--fused"}};
  if (name == "interleaved") return {"train_dp_interleaved", {}};
  // Cap 0.05 MiB, first bucket 0.001 MiB: four buckets on the tiny model
  // ({W2} {b2,W1,b1} {W0} {b0 + loss slot}, see test_buckets.cpp).
  if (name == "bucketed") return {"train_ddp_bucketed", {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"}};
  throw std::invalid_argument(name);
}

// Runs train_single_gpu; returns its record.
nlohmann::json run_single(const std::vector<std::string>& args) {
  return record_of(std::vector<std::string>{bin("train_single_gpu")} + args, 60);
}

nlohmann::json run_dp(const std::string& mode, int k, const std::vector<std::string>& args) {
  const Mode m = mode_named(mode);
  return record_of(mpirun_argv(k, m.exe, args + m.extra), 120);
}

struct Case {
  std::string mode;
  int k;
  int batch = 256;
  std::vector<std::string> shared = {};  // options for both runs (single and DP)
  std::vector<std::string> dp = {};      // options for the DP run only
  std::string tag = "";                  // test-name suffix
};

// Readable parameter values in test names and failure messages.
void PrintTo(const Case& c, std::ostream* os) { *os << c.mode << " K=" << c.k << " batch " << c.batch << c.tag; }

class DpExactness : public ::testing::TestWithParam<Case> {};

TEST_P(DpExactness, SameWeightsAndLossAsOneDevice) {
  const Case c = GetParam();
  ScratchDir dir("exact");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  const auto single = run_single(common_args(init, dir.file("single.safetensors"), 3, c.batch) + c.shared);
  const auto dp = run_dp(c.mode, c.k, common_args(init, dir.file("dp.safetensors"), 3, c.batch) + c.shared + c.dp);
  ASSERT_EQ(dp["world_size"], c.k);
  ASSERT_EQ(dp["local_batch"], c.batch / c.k);
  ASSERT_EQ(dp["steps"], 3);
  ASSERT_EQ(single["steps"], 3);

  const Weights w0 = read_weights(init);
  const Weights ws = read_weights(dir.file("single.safetensors"));
  const Weights wd = read_weights(dir.file("dp.safetensors"));
  const Comparison cmp = compare_weights(w0, ws, wd, 3);
  EXPECT_TRUE(cmp.pass) << c.mode << " K=" << c.k << " vs train_single_gpu:\n" << cmp.report;
  std::printf("%s K=%d: worst diff/tol %.3g\n%s", c.mode.c_str(), c.k, cmp.worst_ratio, cmp.report.c_str());

  // loss_global is the single-device loss of the same batches, epoch by epoch. Both are float
  // sums of B per-row losses scaled by 1/B (DP: K partial sums, then the
  // all-reduce): they agree to a few ε · loss (measured: ~1e-7 relative). 1e-5 relative leaves
  // ample room and still sees any shard or scale mistake.
  const auto lg = dp["loss_global"].get<std::vector<double>>();
  const auto ls = single["loss_global"].get<std::vector<double>>();
  const auto l0 = dp["loss_rank0"].get<std::vector<double>>();
  ASSERT_EQ(lg.size(), 2u);  // 2 steps, then 1
  ASSERT_EQ(ls.size(), lg.size());
  ASSERT_EQ(l0.size(), lg.size());
  constexpr double kLossRelTol = 1e-5;
  for (size_t e = 0; e < lg.size(); ++e) {
    EXPECT_NEAR(lg[e], ls[e], kLossRelTol * std::fabs(ls[e])) << "epoch " << e + 1;
    // rank 0's own shard is another sample of rows: on random data its mean loss differs from
    // the global mean by O(1/sqrt(B/K)) of the loss' spread — measured 7e-4 to 2e-3 relative
    // for K = 2 and 4 here — so it must fail the comparison loss_global passes, by a wide
    // margin. Only "in general": a shard can land close by chance (K = 3, epoch 2: 3e-5), so
    // the deterministic K = 2 and 4 runs carry this check.
    if (c.k == 2 || c.k == 4) {
      EXPECT_GT(std::fabs(l0[e] - lg[e]), 10 * kLossRelTol * std::fabs(lg[e]))
          << "loss_rank0 is as close to the global loss as loss_global, epoch " << e + 1;
    }
    std::printf("epoch %zu: loss single %.9g  global %.9g (rel diff %.2e)  rank0 %.9g (rel diff %.2e)\n", e + 1,
                ls[e], lg[e], std::fabs(lg[e] - ls[e]) / ls[e], l0[e], std::fabs(l0[e] - lg[e]) / lg[e]);
  }
  EXPECT_EQ(dp["losses"], dp["loss_global"]);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DpExactness,
    ::testing::Values(Case{"naive", 2}, Case{"naive", 4}, Case{"naive_fused", 2}, Case{"naive_fused", 4},
                      Case{"interleaved", 2}, Case{"interleaved", 4}, Case{"bucketed", 2}, Case{"bucketed", 4},
                      // Odd K (local batch 85) and the workshop's own all-reduce algorithms.
                      Case{"interleaved", 3, 255, {}, {"--allreduce", "ring"}, "_ring"},
                      Case{"bucketed", 3, 255, {}, {"--allreduce", "star"}, "_star"},
                      // Momentum and weight decay: the update is still applied alike on every rank.
                      Case{"bucketed", 2, 256, {"--momentum", "0.9", "--weight-decay", "0.001"}, {}, "_momentum"}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.mode + "_K" + std::to_string(i.param.k) + i.param.tag; });

// K = 1: the same GEMMs over the same rows and an all-reduce that adds nothing — the DP loop
// must reproduce train_single_gpu bit for bit, in every mode.
TEST(DpExactnessK1, BitIdenticalToOneDevice) {
  ScratchDir dir("exact-k1");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  const auto single = run_single(common_args(init, dir.file("single.safetensors")));
  const Weights ws = read_weights(dir.file("single.safetensors"));
  for (const std::string mode : {"naive", "interleaved", "bucketed"}) {
    const std::string out = dir.file(mode + ".safetensors");
    const auto dp = run_dp(mode, 1, common_args(init, out));
    EXPECT_TRUE(read_weights(out) == ws) << mode << " with K = 1 is not bit-identical to train_single_gpu";
    EXPECT_EQ(dp["loss_global"], single["loss_global"]) << mode;
    EXPECT_EQ(dp["loss_rank0"], dp["loss_global"]) << mode << ": with one rank, rank 0's shard is the batch";
  }
}

// The tolerance (weights_compare.h) is tight: runs that differ from the reference by a little must fail it.
TEST(DpExactnessControls, ToleranceRejectsNearMisses) {
  ScratchDir dir("exact-neg");
  const std::string init = dir.file("init.safetensors");
  const std::string other_init = dir.file("other.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  write_random_checkpoint(other_init, kTinyModel, 999);
  run_single(common_args(init, dir.file("single.safetensors")));
  const Weights w0 = read_weights(init);
  const Weights ws = read_weights(dir.file("single.safetensors"));

  // The positive: interleaved K = 2 passes (as in the suite above).
  run_dp("interleaved", 2, common_args(init, dir.file("dp.safetensors")));
  const Comparison ok = compare_weights(w0, ws, read_weights(dir.file("dp.safetensors")), 3);
  EXPECT_TRUE(ok.pass) << ok.report;

  // One step more: the extra update is about a third of what 3 steps moved.
  run_dp("interleaved", 2, common_args(init, dir.file("dp4.safetensors"), 4));
  const Comparison extra_step = compare_weights(w0, ws, read_weights(dir.file("dp4.safetensors")), 3);
  EXPECT_FALSE(extra_step.pass) << "one step more passed:\n" << extra_step.report;
  EXPECT_GT(extra_step.worst_ratio, 100.0) << extra_step.report;

  // A learning rate 1 % off: weights move 1 % more than the reference, 100x the tolerance.
  auto args = common_args(init, dir.file("dplr.safetensors"));
  *std::find(args.begin(), args.end(), "0.05") = "0.0505";
  run_dp("interleaved", 2, args);
  const Comparison lr = compare_weights(w0, ws, read_weights(dir.file("dplr.safetensors")), 3);
  EXPECT_FALSE(lr.pass) << "a 1% different lr passed:\n" << lr.report;
  EXPECT_GT(lr.worst_ratio, 10.0) << lr.report;

  // Other initial weights (a different seed of the checkpoint).
  run_dp("interleaved", 2, common_args(other_init, dir.file("dpseed.safetensors")));
  const Comparison seed = compare_weights(w0, ws, read_weights(dir.file("dpseed.safetensors")), 3);
  EXPECT_FALSE(seed.pass) << "other initial weights passed:\n" << seed.report;
  // Same initial weights, another --seed: the synthetic data (drawn from --seed) differs.
  run_dp("interleaved", 2, with_seed(common_args(init, dir.file("dpdata.safetensors")), "43"));
  const Comparison data = compare_weights(w0, ws, read_weights(dir.file("dpdata.safetensors")), 3);
  EXPECT_FALSE(data.pass) << "other data (--seed 43) passed:\n" << data.report;
  EXPECT_GT(data.worst_ratio, 10.0) << data.report;
  std::printf("controls: worst diff/tol  pass %.3g | +1 step %.3g | lr+1%% %.3g | other init %.3g | other data %.3g\n",
              ok.worst_ratio, extra_step.worst_ratio, lr.worst_ratio, seed.worst_ratio, data.worst_ratio);
}

}  // namespace
}  // namespace dpscale::test
