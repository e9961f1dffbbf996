// test_sharded_gpt.cpp — the sharded trainer and --optimizer adamw on the transformer: the
// optimizer, the finite-check flag it reports into and the shards are the Model's, not the
// MLP's, so train_sharded must train gpt-tiny as it trains the MLP (test_sharded.cpp).
//
// The same two references as for the MLP: with SGD + momentum, one device's weights within
// weights_compare.h's tolerance (sharding changes who updates an element, not its arithmetic);
// with AdamW, bucketed DDP's weights at the same K bit for bit (AdamW's first step is sign-like,
// so one device is no reference: test_sharded.cpp says why). Stages 1 and 2 at K = 2 and 4; the
// record's optimizer state is the buffer's 1/K. Negative control: each rank updating its block one
// element off (DPSCALE_TEST_SHARD_SKEW=1) is neither one device's weights nor DDP's bits.
//
// Run: ctest -R ShardedGpt --output-on-failure
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

const std::string kGpt = "gpt-tiny";

// Cap 0.05 MiB, first bucket 0.001 MiB: a dozen units, the tied embedding in the last
// (as test_dp_exactness_gpt's bucketed runs).
const std::vector<std::string> kCaps = {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"};
const std::vector<std::string> kSgdMomentum = {"--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9",
                                               "--weight-decay", "0.001"};
const std::vector<std::string> kAdamW = {"--optimizer", "adamw", "--lr", "0.002", "--weight-decay", "0.01"};

std::vector<std::string> gpt_args(const std::string& init, const std::string& save, const std::vector<std::string>& optim) {
  return std::vector<std::string>{"--backend", "cpu", "--model", kGpt, "--seq-len", "16", "--samples", "16",
                                  "--batch-size", "8", "--max-steps", "3", "--init", init, "--save", save,
                                  "--quiet", "--gemm", "openblas"} +
         optim;
}

std::vector<std::string> stage_args(int stage) {
  return kCaps + std::vector<std::string>{"--shard-stage", std::to_string(stage)};
}

struct Fixture {
  ScratchDir dir{"sharded-gpt"};
  std::string init = dir.file("init.safetensors");
  Weights w0, single_sgd;
  Fixture() {
    write_random_checkpoint(init, kGpt, 1234);
    record_of(std::vector<std::string>{bin("train_single_gpu")} + gpt_args(init, dir.file("single.safetensors"), kSgdMomentum), 60);
    w0 = read_weights(init);
    single_sgd = read_weights(dir.file("single.safetensors"));
  }
  Weights ddp_adamw(int k) {
    const std::string out = dir.file("ddp" + std::to_string(k) + ".safetensors");
    record_of(mpirun_argv(k, "train_ddp_bucketed", gpt_args(init, out, kAdamW) + kCaps), 120);
    return read_weights(out);
  }
};

TEST(ShardedGpt, StagesTrainOneDevicesWeightsWithSgdAndDdpsBitsWithAdamW) {
  Fixture f;
  ASSERT_EQ(f.w0.size(), 28u);
  for (const int k : {2, 4}) {
    const Weights ddp = f.ddp_adamw(k);
    for (const int stage : {1, 2}) {
      SCOPED_TRACE("stage " + std::to_string(stage) + " K=" + std::to_string(k));
      const std::string sgd_out = f.dir.file("sgd.safetensors");
      const auto rec = record_of(mpirun_argv(k, "train_sharded", gpt_args(f.init, sgd_out, kSgdMomentum) + stage_args(stage)), 120);
      EXPECT_EQ(rec["replicas_agree"], true);
      EXPECT_EQ(rec["shard_stage"], stage);
      // SGD's momentum: one float per element of the rank's 1/K of the buffer.
      const int64_t buffer_bytes = rec["param_bytes_per_rank"].get<int64_t>();
      EXPECT_EQ(rec["optim_bytes_per_rank"], buffer_bytes / k);
      const Comparison c = compare_weights(f.w0, f.single_sgd, read_weights(sgd_out), 3);
      EXPECT_TRUE(c.pass) << "SGD + momentum vs train_single_gpu:\n" << c.report;
      std::printf("gpt stage %d K=%d sgd: vs one device, worst diff/tol %.3g\n", stage, k, c.worst_ratio);

      const std::string adamw_out = f.dir.file("adamw.safetensors");
      const auto ra = record_of(mpirun_argv(k, "train_sharded", gpt_args(f.init, adamw_out, kAdamW) + stage_args(stage)), 120);
      EXPECT_EQ(ra["optimizer"], "adamw");
      EXPECT_EQ(ra["optim_bytes_per_rank"], 2 * buffer_bytes / k);
      EXPECT_TRUE(read_weights(adamw_out) == ddp) << "AdamW: not bucketed DDP's weights bit for bit";
    }
  }
}

TEST(ShardedGpt, AShardOneElementOffFailsBothReferences) {
  Fixture f;
  const Weights ddp = f.ddp_adamw(2);
  for (const auto& [optim, name] : {std::pair{kSgdMomentum, "sgd"}, std::pair{kAdamW, "adamw"}}) {
    const std::string out = f.dir.file(std::string("skew-") + name + ".safetensors");
    std::vector<std::string> argv = mpirun_argv(2, "train_sharded", gpt_args(f.init, out, optim) + stage_args(2));
    argv.insert(argv.begin() + 1, {"-x", "DPSCALE_TEST_SHARD_SKEW=1"});
    const ProcessResult r = run(argv, 120);
    ASSERT_FALSE(r.timed_out) << describe(argv, r);
    if (!std::filesystem::exists(out)) {
      EXPECT_EQ(r.exit_code, 1) << describe(argv, r);  // the replicas disagreed: also a failure found
      continue;
    }
    if (std::string(name) == "sgd") {
      const Comparison c = compare_weights(f.w0, f.single_sgd, read_weights(out), 3);
      EXPECT_FALSE(c.pass) << "a shard one element off passed against one device:\n" << c.report;
      std::printf("gpt shard off by one (sgd): worst diff/tol %.3g\n", c.worst_ratio);
    } else {
      EXPECT_FALSE(read_weights(out) == ddp) << "AdamW one element off gave DDP's bits";
    }
  }
}

}  // namespace
}  // namespace dpscale::test
