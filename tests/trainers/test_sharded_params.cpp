// test_sharded_params.cpp — ZeRO stage 3 (train_sharded --shard-stage 3,
// trainers/sync_sharded_params.cpp): parameters sharded too, each layer all-gathered before its
// forward and its backward and released after, gradients reduce-scattered per layer.
//
// The references are test_sharded.cpp's: with SGD + momentum one device's weights within
// weights_compare.h's tolerance (stage 3 changes where a parameter is read from, not a bit of
// it: the all-gather copies the owner's floats), and with AdamW bucketed DDP's weights bit for
// bit at K = 2 and 4 (why one device is no reference for AdamW: test_sharded.cpp). On the MLP
// and on the transformer (whose root units, ln_f and the tied embeddings, stay whole for the
// step), at K = 2 and 4, prefetching 0, 1 and 2 layers ahead.
//
// The bytes: the record's all-gather count is what the strategy gathered in a step, checked
// against the rule worked out by hand for the tiny MLP (below); the memory: what it counted
// resident at its peak, against the same rule, and the resident set the kernel measured
// (peak_rss_bytes) against bucketed DDP's, so a release that returned nothing would fail.
//
// Negative controls: a shard updated one element off (DPSCALE_TEST_SHARD_SKEW=1) and a backward
// that reads its layers without the all-gather (DPSCALE_TEST_SHARD_NO_BACKWARD_GATHER=1: what
// forward released) must both fail the comparison with one device.
//
// Run: ctest -R ShardedParams --output-on-failure
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

// The tiny MLP's layers in the flat buffer (test_sharded.cpp's layout, backward order): unit 0
// = layer 2 (W2, b2) [0, 384), unit 1 = layer 1 [384, 2496), unit 2 = layer 0 [2496, 52736).
constexpr int64_t kN = 52736, kU0 = 384, kU1 = 2496 - 384, kU2 = 52736 - 2496;

const std::vector<std::string> kSgdMomentum = {"--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9",
                                               "--weight-decay", "0.001"};
const std::vector<std::string> kAdamW = {"--optimizer", "adamw", "--lr", "0.002", "--weight-decay", "0.01"};

std::vector<std::string> mlp_args(const std::string& init, const std::string& save, const std::vector<std::string>& optim) {
  return std::vector<std::string>{"--backend", "cpu", "--model", kTinyModel, "--samples", "512", "--batch-size", "256",
                                  "--max-steps", "3", "--init", init, "--save", save, "--quiet"} +
         optim;
}

std::vector<std::string> gpt_args(const std::string& init, const std::string& save, const std::vector<std::string>& optim) {
  return std::vector<std::string>{"--backend", "cpu", "--model", "gpt-tiny", "--seq-len", "16", "--samples", "16",
                                  "--batch-size", "8", "--max-steps", "3", "--init", init, "--save", save,
                                  "--quiet", "--gemm", "openblas"} +
         optim;
}

std::vector<std::string> stage3(int prefetch) {
  return {"--shard-stage", "3", "--prefetch-units", std::to_string(prefetch)};
}

struct Case {
  int k, prefetch;
};

class ShardedParams : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedParams, MlpTrainsOneDevicesWeightsAndCountsItsLayers) {
  const Case c = GetParam();
  ScratchDir dir("sharded3");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + mlp_args(init, dir.file("single.safetensors"), kSgdMomentum), 60);
  const auto sh = record_of(
      mpirun_argv(c.k, "train_sharded", mlp_args(init, dir.file("s3.safetensors"), kSgdMomentum) + stage3(c.prefetch)), 120);
  ASSERT_EQ(sh["steps"], 3);
  EXPECT_EQ(sh["replicas_agree"], true);
  EXPECT_EQ(sh["shard_stage"], 3);
  EXPECT_EQ(sh["prefetch_units"], c.prefetch);
  EXPECT_EQ(sh["n_buckets"], 3) << "one unit per layer";
  const Comparison cmp =
      compare_weights(read_weights(init), read_weights(dir.file("single.safetensors")), read_weights(dir.file("s3.safetensors")), 3);
  EXPECT_TRUE(cmp.pass) << "stage 3 K=" << c.k << " prefetch " << c.prefetch << " vs one device:\n" << cmp.report;
  std::printf("stage 3 K=%d prefetch %d: vs one device, worst diff/tol %.3g\n", c.k, c.prefetch, cmp.worst_ratio);

  // A step gathers every layer for forward (input layer first: unit 2, 1, 0), then in backward
  // (unit 0, 1, 2) all but unit 0, which forward ended with and kept; unit 2 (layer 0) only when
  // prefetched, as layer 0's backward reads no weight (the input needs no gradient).
  const int64_t gathered = kN + kU1 + (c.prefetch >= 1 ? kU2 : 0);
  EXPECT_EQ(sh["allgather_bytes_per_step"], 4 * gathered);
  EXPECT_EQ(sh["reduce_scatter_bytes_per_step"], 4 * kN);
  EXPECT_EQ(sh["allreduce_bytes_per_step"], 4 + 4) << "the loss slot and the finite-check flag";
  // Parameters resident at the peak: the shard (N/K) and the rest of the layers whole at once —
  // the one computing and the prefetched ones: without prefetch the largest alone (unit 2),
  // with one units 1 and 2 together (forward's first two, backward's last two), with two all.
  const int64_t rest0 = kU0 - kU0 / c.k, rest1 = kU1 - kU1 / c.k, rest2 = kU2 - kU2 / c.k;
  const int64_t params = kN / c.k + (c.prefetch == 0 ? rest2 : c.prefetch == 1 ? rest1 + rest2 : rest0 + rest1 + rest2);
  EXPECT_EQ(sh["param_bytes_per_rank"], 4 * params);
  // Gradients: the shard, and the layers written and not yet reduce-scattered (when a call
  // completes is the comm thread's timing): at least the largest, at most all; + the loss slot.
  EXPECT_GE(sh["grad_bytes_per_rank"], 4 * (kN / c.k + rest2 + 1));
  EXPECT_LE(sh["grad_bytes_per_rank"], 4 * (kN + 1));
  EXPECT_EQ(sh["optim_bytes_per_rank"], 4 * kN / c.k) << "SGD momentum for the shard";
  EXPECT_GT(sh["peak_rss_bytes"], 0);
}

INSTANTIATE_TEST_SUITE_P(KAndPrefetch, ShardedParams,
                         ::testing::Values(Case{2, 0}, Case{2, 1}, Case{2, 2}, Case{4, 1}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return "K" + std::to_string(i.param.k) + "_prefetch" + std::to_string(i.param.prefetch);
                         });

// AdamW at K = 2 and 4: bucketed DDP's bits (at K = 2 a sum of two floats is one addition
// whoever does it; at 4, with --allreduce native the library reduce-scatters each block in the
// order it all-reduces it, as test_sharded.cpp argues for stage 2).
TEST(ShardedParamsAdamW, BucketedDdpsBitsAtK2And4) {
  ScratchDir dir("sharded3-adamw");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  for (const int k : {2, 4}) {
    record_of(mpirun_argv(k, "train_ddp_bucketed", mlp_args(init, dir.file("ddp.safetensors"), kAdamW)), 120);
    const auto sh = record_of(mpirun_argv(k, "train_sharded", mlp_args(init, dir.file("s3.safetensors"), kAdamW) + stage3(1)), 120);
    EXPECT_EQ(sh["optim_bytes_per_rank"], 8 * kN / k);
    EXPECT_TRUE(read_weights(dir.file("s3.safetensors")) == read_weights(dir.file("ddp.safetensors")))
        << "stage 3 AdamW at K = " << k << ": not bucketed DDP's weights bit for bit";
  }
}

// The transformer: the root's units (ln_f, the embeddings with the tied head) whole for the
// step, the blocks gathered and released around them.
TEST(ShardedParamsGpt, GptTinyTrainsOneDevicesWeights) {
  ScratchDir dir("sharded3-gpt");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, "gpt-tiny", 1234);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + gpt_args(init, dir.file("single.safetensors"), kSgdMomentum), 60);
  const Weights w0 = read_weights(init), ws = read_weights(dir.file("single.safetensors"));
  for (const Case c : {Case{2, 0}, Case{2, 1}, Case{4, 2}}) {
    SCOPED_TRACE("K=" + std::to_string(c.k) + " prefetch " + std::to_string(c.prefetch));
    const std::string out = dir.file("s3_" + std::to_string(c.k) + "_" + std::to_string(c.prefetch) + ".safetensors");
    const auto sh = record_of(mpirun_argv(c.k, "train_sharded", gpt_args(init, out, kSgdMomentum) + stage3(c.prefetch)), 120);
    EXPECT_EQ(sh["replicas_agree"], true);
    const Comparison cmp = compare_weights(w0, ws, read_weights(out), 3);
    EXPECT_TRUE(cmp.pass) << cmp.report;
    std::printf("gpt-tiny stage 3 K=%d prefetch %d: vs one device, worst diff/tol %.3g\n", c.k, c.prefetch, cmp.worst_ratio);
  }
}

// The controls: each must move the weights off one device's.
TEST(ShardedParamsControls, AShardOffByOneAndABackwardWithoutItsAllGatherFail) {
  ScratchDir dir("sharded3-neg");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + mlp_args(init, dir.file("single.safetensors"), kSgdMomentum), 60);
  const Weights w0 = read_weights(init), ws = read_weights(dir.file("single.safetensors"));
  for (const std::string hook : {"DPSCALE_TEST_SHARD_SKEW=1", "DPSCALE_TEST_SHARD_NO_BACKWARD_GATHER=1"}) {
    SCOPED_TRACE(hook);
    const std::string out = dir.file("neg.safetensors");
    std::filesystem::remove(out);
    std::vector<std::string> argv = mpirun_argv(2, "train_sharded", mlp_args(init, out, kSgdMomentum) + stage3(1));
    argv.insert(argv.begin() + 1, {"-x", hook});
    const ProcessResult r = run(argv, 120);
    ASSERT_FALSE(r.timed_out) << describe(argv, r);
    if (std::filesystem::exists(out)) {
      const Comparison cmp = compare_weights(w0, ws, read_weights(out), 3);
      EXPECT_FALSE(cmp.pass) << hook << " passed:\n" << cmp.report;
      std::printf("%s: worst diff/tol %.3g\n", hook.c_str(), cmp.worst_ratio);
    } else {
      EXPECT_EQ(r.exit_code, 1) << describe(argv, r);  // replicas that disagree: no checkpoint
    }
  }
}

// What the kernel measured: a rank of stage 3 holds less than a rank of bucketed DDP by what
// the count says it released. SGD without momentum (no optimizer state), no prefetch, a model
// of five like layers whose buffers dwarf the process's own memory: 784-1536×5-10 (10.6 M
// floats, 42 MB a buffer), so a rank holds its half and one layer's other half at a time.
// Bucketed holds parameters and gradients whole (2 × 4N); stage 3 its count of both. Both on
// our ring (--allreduce ring): Open MPI's own in-place collectives copy their input into
// temporaries of the call's size, a bucket's or a layer's, which would enter the difference.
// With the heap policy on (comm/heap_policy.h, the default) start-up's freed host copy of the
// weights stays resident in both runs and holds the ring's scratch in both; what differs is
// what stage 3 released. `--gemm openblas`: `--gemm auto`'s first run on a machine measures the
// libraries in buffers of its own, which the heap then keeps resident in that run alone. The
// measured saving must be the counted one within 10 % (measured: 100.4–101.6 % of it in three
// runs); a release that returned nothing would measure none of it.
TEST(ShardedParamsMemory, TheResidentSetFallsByTheCountedSaving) {
  const std::vector<std::string> base = {"--backend", "cpu", "--model", "784,1536,1536,1536,1536,1536,10", "--samples", "256",
                                         "--batch-size", "64", "--max-steps", "4", "--epochs", "1", "--quiet",
                                         "--optimizer", "sgd", "--momentum", "0", "--allreduce", "ring",
                                         "--gemm", "openblas"};
  const auto ddp = record_of(mpirun_argv(2, "train_ddp_bucketed", base), 180);
  const auto s3 = record_of(mpirun_argv(2, "train_sharded", base + stage3(0)), 180);
  const double counted = (ddp["param_bytes_per_rank"].get<double>() + ddp["grad_bytes_per_rank"].get<double>()) -
                         (s3["param_bytes_per_rank"].get<double>() + s3["grad_bytes_per_rank"].get<double>());
  const double measured = ddp["peak_rss_bytes"].get<double>() - s3["peak_rss_bytes"].get<double>();
  std::printf("peak RSS: bucketed %.1f MiB, stage 3 %.1f MiB; saving measured %.1f MiB, counted %.1f MiB (%.1f %%)\n",
              ddp["peak_rss_bytes"].get<double>() / 1048576, s3["peak_rss_bytes"].get<double>() / 1048576,
              measured / 1048576, counted / 1048576, 100 * measured / counted);
  ASSERT_GT(counted, 20e6);
  EXPECT_NEAR(measured, counted, 0.1 * counted);
}

}  // namespace
}  // namespace dpscale::test
