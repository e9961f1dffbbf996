// test_dp_accum.cpp — gradient accumulation (--accum-steps N, DDP's no_sync) is exactly one
// device at batch N × batch-size.
//
// From one --init checkpoint, train_single_gpu at batch N·B and every data-parallel mode at
// batch B with --accum-steps N (K ranks) take the same 3 optimizer steps over the same N·B rows
// each; weights must agree within weights_compare.h's tolerance and the per-epoch global loss
// within 1e-5 relative, as the exactness suite asks of plain DP. Negative controls
// (DpAccumControls.NearMissesFail): the same DP run without accumulation (3 steps of B rows)
// fails against single at 2B, and the accumulated run (K = 2, N = 2 at batch B) that matches
// single at 2B fails against single at batch B by more than 10× the tolerance — the comparison
// can tell the accumulated batch from the micro-batch.
// The record says accum_steps, counts optimizer steps and every micro-batch in the throughput.
//
// Run: ctest -R DpAccum --output-on-failure
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

// `samples` rows, batch `batch`, 3 optimizer steps at lr 0.05 from `init`.
std::vector<std::string> args(const std::string& init, const std::string& save, int samples, int batch) {
  return {"--backend", "cpu",         "--model", kTinyModel, "--samples",  std::to_string(samples), "--batch-size",
          std::to_string(batch),      "--max-steps", "3",  "--lr",        "0.05", "--init", init, "--save", save,
          "--quiet"};
}

struct Case {
  std::string exe;
  int k;
  int n;  // accum steps
  std::vector<std::string> extra = {};   // the DP run's only
  std::vector<std::string> shared = {};  // both runs
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.exe << " K=" << c.k << " N=" << c.n; }

class DpAccum : public ::testing::TestWithParam<Case> {};

TEST_P(DpAccum, SameAsOneDeviceAtTheAccumulatedBatch) {
  const Case c = GetParam();
  constexpr int kB = 128;
  const int samples = 2 * c.n * kB;  // 2 optimizer steps per epoch; 3 steps = 2 epochs
  ScratchDir dir("accum");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 4321);
  const auto single = record_of(std::vector<std::string>{bin("train_single_gpu")} +
                                    args(init, dir.file("single.safetensors"), samples, c.n * kB) + c.shared,
                                120);
  const std::vector<std::string> accum = {"--accum-steps", std::to_string(c.n)};
  const auto dp = record_of(
      mpirun_argv(c.k, c.exe, args(init, dir.file("dp.safetensors"), samples, kB) + accum + c.extra + c.shared), 180);
  EXPECT_EQ(dp["accum_steps"], c.n);
  EXPECT_EQ(dp["steps"], 3);
  EXPECT_EQ(dp["steps_per_epoch"], 2);
  EXPECT_EQ(dp["global_batch"], kB);
  EXPECT_EQ(single["accum_steps"], 1);
  // Every micro-batch counts: steps · B · N rows over the epochs' time.
  double total = 0.0;
  for (double t : dp["epoch_times_s"].get<std::vector<double>>()) total += t;
  EXPECT_NEAR(dp["throughput_samples_per_s"].get<double>(), 3.0 * kB * c.n / total, 1e-9 * 3.0 * kB * c.n / total);

  const Weights w0 = read_weights(init);
  const Weights ws = read_weights(dir.file("single.safetensors"));
  const Comparison cmp = compare_weights(w0, ws, read_weights(dir.file("dp.safetensors")), 3);
  EXPECT_TRUE(cmp.pass) << c.exe << " K=" << c.k << " N=" << c.n << " vs train_single_gpu at batch " << c.n * kB
                        << ":\n"
                        << cmp.report;
  std::printf("%s K=%d N=%d: worst diff/tol %.3g\n", c.exe.c_str(), c.k, c.n, cmp.worst_ratio);
  const auto lg = dp["loss_global"].get<std::vector<double>>();
  const auto ls = single["loss_global"].get<std::vector<double>>();
  ASSERT_EQ(lg.size(), ls.size());
  for (size_t e = 0; e < lg.size(); ++e) EXPECT_NEAR(lg[e], ls[e], 1e-5 * std::fabs(ls[e])) << "epoch " << e + 1;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DpAccum,
    ::testing::Values(Case{"train_dp_naive", 2, 2}, Case{"train_dp_naive", 2, 3, {"--fused"}},
                      Case{"train_dp_interleaved", 2, 2}, Case{"train_dp_interleaved", 4, 3, {"--allreduce", "ring"}},
                      // Four buckets on the tiny model (test_dp_exactness.cpp): launched only in the
                      // last micro-batch's backward.
                      Case{"train_ddp_bucketed", 2, 2, {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"}},
                      Case{"train_ddp_bucketed", 4, 2, {}, {"--momentum", "0.9"}},
                      // One rank: accumulation alone.
                      Case{"train_dp_interleaved", 1, 4}),
    [](const ::testing::TestParamInfo<Case>& i) {
      // Built by appending: GCC 12's -Wrestrict misfires on `"_" + std::to_string(...)` here.
      std::string name = i.param.exe.substr(i.param.exe.rfind('_') + 1);
      name.append("_K").append(std::to_string(i.param.k)).append("_N").append(std::to_string(i.param.n));
      if (!i.param.extra.empty() || !i.param.shared.empty()) name.append("_").append(std::to_string(i.index));
      return name;
    });

// The comparison can fail: accumulation against runs that differ from it by a little.
TEST(DpAccumControls, NearMissesFail) {
  constexpr int kB = 128;
  ScratchDir dir("accum-neg");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 4321);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + args(init, dir.file("single.safetensors"), 4 * kB, 2 * kB),
            120);
  const Weights w0 = read_weights(init);
  const Weights ws = read_weights(dir.file("single.safetensors"));
  // Positive: K = 2 at batch B, N = 2.
  record_of(mpirun_argv(2, "train_dp_interleaved",
                        args(init, dir.file("ok.safetensors"), 4 * kB, kB) + std::vector<std::string>{"--accum-steps", "2"}),
            120);
  const Comparison ok = compare_weights(w0, ws, read_weights(dir.file("ok.safetensors")), 3);
  EXPECT_TRUE(ok.pass) << ok.report;
  // No accumulation: 3 steps of B rows each (other rows, smaller batches).
  record_of(mpirun_argv(2, "train_dp_interleaved", args(init, dir.file("plain.safetensors"), 4 * kB, kB)), 120);
  const Comparison plain = compare_weights(w0, ws, read_weights(dir.file("plain.safetensors")), 3);
  EXPECT_FALSE(plain.pass) << "DP without accumulation passed:\n" << plain.report;
  EXPECT_GT(plain.worst_ratio, 10.0);
  // One device with --accum-steps 2 at batch B is the same as one device at 2B (no ranks).
  record_of(std::vector<std::string>{bin("train_single_gpu")} + args(init, dir.file("single-acc.safetensors"), 4 * kB, kB) +
                std::vector<std::string>{"--accum-steps", "2"},
            120);
  const Comparison single_acc = compare_weights(w0, ws, read_weights(dir.file("single-acc.safetensors")), 3);
  EXPECT_TRUE(single_acc.pass) << single_acc.report;
  // The reference must matter: the same accumulated run against one device at batch B (3 steps
  // of B rows, no accumulation) differs by far more than the tolerance — it took steps of other
  // rows, half as many per step. So the match with single at 2B above is the accumulation's.
  record_of(std::vector<std::string>{bin("train_single_gpu")} + args(init, dir.file("single-b.safetensors"), 4 * kB, kB),
            120);
  const Comparison at_b = compare_weights(w0, read_weights(dir.file("single-b.safetensors")),
                                          read_weights(dir.file("ok.safetensors")), 3);
  EXPECT_FALSE(at_b.pass) << "accumulation at batch B matched one device at batch B:\n" << at_b.report;
  EXPECT_GT(at_b.worst_ratio, 10.0);
  std::printf("controls: worst diff/tol  accum %.3g | no accum %.3g | single accum %.3g | accum vs single at B %.3g\n",
              ok.worst_ratio, plain.worst_ratio, single_acc.worst_ratio, at_b.worst_ratio);
}

// no_sync: the micro-batches before the last communicate nothing. With an emulated link of
// α = 50 ms, every all-reduce is held at least 2(K−1)α = 100 ms (K = 2), so an epoch of 2
// optimizer steps × 6 tensors (interleaved: one all-reduce per tensor) keeps the comm thread
// busy ≈ 12 × 0.1 s = 1.2 s whatever N — and 3× that if each of N = 3 micro-batches
// all-reduced. Bucketed with one bucket: 2 all-reduces, 0.2 s. (A busy time also holds the wait
// for a late peer, tens of ms on this loaded machine: α is large enough to dwarf it.)
TEST(DpAccumControls, AllReducesOnlyInTheLastMicroBatch) {
  struct Want {
    std::string exe;
    std::vector<std::string> extra;
    int calls_per_step;
  };
  for (const Want& w : {Want{"train_dp_interleaved", {}, 6}, Want{"train_ddp_bucketed", {"--bucket-cap-mb", "25"}, 1},
                        Want{"train_dp_naive", {"--fused"}, 1}}) {
    const auto r = record_of(mpirun_argv(2, w.exe,
                                         std::vector<std::string>{"--backend", "cpu", "--model", kTinyModel, "--samples", "768", "--batch-size",
                                          "128", "--accum-steps", "3", "--epochs", "1", "--warmup-steps", "0",
                                          "--link", "50000:100", "--quiet"} +
                                             w.extra),
                             120);
    EXPECT_EQ(r["steps"], 2);
    EXPECT_EQ(r["allreduce_calls_per_step"], w.calls_per_step) << w.exe;
    const double modelled = 2.0 * w.calls_per_step * 2 * 50e-3;  // steps × calls × 2(K−1)α
    const double busy = r["comm_busy_s"].get<double>();
    EXPECT_GE(busy, 0.95 * modelled) << w.exe;
    EXPECT_LT(busy, 1.6 * modelled) << w.exe << ": all-reduces in the micro-batches before the last?";
    std::printf("%s N=3: comm_busy_s %.3f s, modelled for one sync per step %.3f s\n", w.exe.c_str(), busy, modelled);
  }
}

// More micro-batches than the data holds: one line, exit 2.
TEST(DpAccumControls, TooManyMicroBatchesRefused) {
  const auto r = run({bin("train_single_gpu"), "--backend", "cpu", "--model", kTinyModel, "--samples", "512",
                      "--batch-size", "256", "--accum-steps", "3", "--quiet"},
                     60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--accum-steps 3 x --batch-size 256 = 768 rows per optimizer step"), std::string::npos) << r.err;
  const auto z = run({bin("train_single_gpu"), "--backend", "cpu", "--model", kTinyModel, "--accum-steps", "0"}, 60);
  EXPECT_EQ(z.exit_code, 2) << z.err;
  EXPECT_NE(z.err.find("--accum-steps"), std::string::npos) << z.err;
}

}  // namespace
}  // namespace dpscale::test
