// test_dp_exactness_gpt.cpp — K ranks train the same transformer weights as one device.
//
// The MLP's exactness test (test_dp_exactness.cpp) for gpt-tiny: from one --init checkpoint, each
// data-parallel mode under `mpirun -np K` (K = 2 and 4, oversubscribed) and train_single_gpu take
// the same 3 SGD steps over the same global batches of synthetic tokens (--seq-len 16); the saved
// weights must agree within weights_compare.h's tolerance (1e-4 of what training moved each
// tensor + 2·T·ε·max|w|: the same argument — DP changes only the summation order of each
// gradient's rows and of the ranks' partial sums — for the 28 tensors of the transformer, the tied
// embedding's gradient summed over the head's GEMM and the embedding's scatter-add on every rank),
// and the global loss of every epoch the single-device loss to 1e-5 relative. Negative controls:
// one step more, a 1 % different learning rate, other data (another --seed) must fail it.
//
// Run: ctest -R DpExactnessGpt --output-on-failure
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

const std::string kGpt = "gpt-tiny";
constexpr int kBatch = 8;

std::vector<std::string> gpt_args(const std::string& init, const std::string& save, int max_steps = 3) {
  return {"--backend", "cpu", "--model", kGpt, "--seq-len", "16", "--samples", std::to_string(2 * kBatch),
          "--batch-size", std::to_string(kBatch), "--max-steps", std::to_string(max_steps), "--lr", "0.1",
          "--init", init, "--save", save, "--quiet", "--gemm", "openblas"};
}

struct Mode {
  std::string name, exe;
  std::vector<std::string> extra;
};

const std::vector<Mode>& modes() {
  // Bucketed: cap 0.05 MiB, first bucket 0.001 MiB: the tied embedding (64 KiB) alone in the last
  // bucket with wpe and the loss slot, a dozen buckets before it.
  static const std::vector<Mode> m = {
      {"naive", "train_dp_naive", {}},
      {"interleaved", "train_dp_interleaved", {}},
      {"bucketed", "train_ddp_bucketed", {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"}},
  };
  return m;
}

struct Fixture {
  ScratchDir dir{"exact-gpt"};
  std::string init = dir.file("init.safetensors");
  nlohmann::json single;
  Weights w0, ws;
  Fixture() {
    write_random_checkpoint(init, kGpt, 1234);
    single = record_of(std::vector<std::string>{bin("train_single_gpu")} + gpt_args(init, dir.file("single.safetensors")), 60);
    w0 = read_weights(init);
    ws = read_weights(dir.file("single.safetensors"));
  }
  Comparison run(const Mode& m, int k, const std::vector<std::string>& args, const std::string& out,
                 nlohmann::json* record = nullptr) {
    const auto r = record_of(mpirun_argv(k, m.exe, args + m.extra), 120);
    if (record) *record = r;
    return compare_weights(w0, ws, read_weights(dir.file(out)), 3);
  }
};

TEST(DpExactnessGpt, EveryModeAtK2AndK4TrainsTheSingleDeviceWeights) {
  Fixture f;
  ASSERT_EQ(f.single["steps"], 3);
  ASSERT_EQ(f.w0.size(), 28u);  // 12 per block, 2 blocks, ln_f, wpe, wte: the head is wte
  const auto ls = f.single["loss_global"].get<std::vector<double>>();
  for (const Mode& m : modes()) {
    for (int k : {2, 4}) {
      const std::string out = m.name + std::to_string(k) + ".safetensors";
      nlohmann::json dp;
      const Comparison c = f.run(m, k, gpt_args(f.init, f.dir.file(out)), out, &dp);
      EXPECT_TRUE(c.pass) << m.name << " K=" << k << ":\n" << c.report;
      std::printf("%s K=%d: worst diff/tol %.3g\n", m.name.c_str(), k, c.worst_ratio);
      EXPECT_EQ(dp["local_batch"], kBatch / k);
      const auto lg = dp["loss_global"].get<std::vector<double>>();
      ASSERT_EQ(lg.size(), ls.size());
      for (size_t e = 0; e < lg.size(); ++e) EXPECT_NEAR(lg[e], ls[e], 1e-5 * ls[e]) << m.name << " K=" << k;
    }
  }
}

// --accum-steps 2 (the micro-batches' gradients added on each rank, DDP's no_sync) and the link
// emulation (which only holds each all-reduce longer) train the same weights as one device
// accumulating alike.
TEST(DpExactnessGpt, AccumulationAndLinkEmulationTrainTheSingleDeviceWeights) {
  ScratchDir dir("exact-gpt-accum");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kGpt, 1234);
  const std::vector<std::string> accum = {"--accum-steps", "2"};
  record_of(std::vector<std::string>{bin("train_single_gpu")} + gpt_args(init, dir.file("single.safetensors")) + accum, 60);
  const Weights w0 = read_weights(init), ws = read_weights(dir.file("single.safetensors"));
  for (const Mode& m : modes()) {
    const std::string out = dir.file(m.name + ".safetensors");
    const auto dp = record_of(mpirun_argv(2, m.exe, gpt_args(init, out) + accum + m.extra +
                                                       std::vector<std::string>{"--link", "50:300", "--link-dilation", "2"}),
                              120);
    EXPECT_EQ(dp["accum_steps"], 2);
    const Comparison c = compare_weights(w0, ws, read_weights(out), 3);
    EXPECT_TRUE(c.pass) << m.name << " with --accum-steps 2 and a link:\n" << c.report;
    std::printf("%s K=2, accum 2, link 50:300: worst diff/tol %.3g\n", m.name.c_str(), c.worst_ratio);
  }
}

TEST(DpExactnessGpt, ToleranceRejectsNearMisses) {
  Fixture f;
  const Mode& m = modes()[1];  // interleaved
  const Comparison ok = f.run(m, 2, gpt_args(f.init, f.dir.file("ok.safetensors")), "ok.safetensors");
  EXPECT_TRUE(ok.pass) << ok.report;
  const Comparison extra = f.run(m, 2, gpt_args(f.init, f.dir.file("x4.safetensors"), 4), "x4.safetensors");
  EXPECT_FALSE(extra.pass) << "one step more passed:\n" << extra.report;
  auto args = gpt_args(f.init, f.dir.file("lr.safetensors"));
  *std::find(args.begin(), args.end(), "0.1") = "0.101";
  const Comparison lr = f.run(m, 2, args, "lr.safetensors");
  EXPECT_FALSE(lr.pass) << "a 1% different lr passed:\n" << lr.report;
  const Comparison data = f.run(m, 2, gpt_args(f.init, f.dir.file("d.safetensors")) + std::vector<std::string>{"--seed", "43"},
                                "d.safetensors");
  EXPECT_FALSE(data.pass) << "other data (--seed 43) passed:\n" << data.report;
  std::printf("gpt controls: worst diff/tol  pass %.3g | +1 step %.3g | lr+1%% %.3g | other data %.3g\n", ok.worst_ratio,
              extra.worst_ratio, lr.worst_ratio, data.worst_ratio);
}

}  // namespace
}  // namespace dpscale::test
