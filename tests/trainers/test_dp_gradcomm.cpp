// test_dp_gradcomm.cpp — --grad-comm bf16|fp16: gradients cross the link as 2-byte values.
//
// From one --init checkpoint, K = 2 runs of 3 steps at lr 0.5 with fp32, bf16 and fp16, for each
// all-reduce algorithm (native: the library with a user MPI_Op; ring and star: ours, summed in
// fp32). The record says the format and half the bytes. The weights' distance from fp32's,
// relative to how far training moved them (worst tensor), is bounded per format by its unit
// roundoff u = 2^-p, p its significant bits: bf16 8 (u = 2^-8 = 0.39 %), fp16 11 (u = 2^-11 =
// 0.049 %). Each gradient is rounded at most twice on its way (a rank's value or partial sum,
// then the sum), and 3 steps compound it, so the distance is a small multiple of u:
//     u/32 < distance < 32·u     (measured on this checkpoint: bf16 0.74–10.6 u, fp16 0.74–0.87 u)
// The lower bound says the rounding happened at that format's scale (a format silently ignored
// gives 0); and fp16, 3 bits finer, must land well below bf16 (8x in theory, at least 2x
// asserted): a fp16 path that rounds as bf16 does fails that. The 8x holds while gradients stay in
// fp16's normal range (>= 2^-14); below it fp16's spacing is a fixed 2^-24, and with other
// checkpoints, whose first-layer gradients are tinier, fp16 drifts as far as bf16 (seen) —
// fp16 needs loss scaling there, which --grad-comm does not do.
// The loss slot crosses in fp32 and step 1 starts from the same weights in every run, so the
// first epoch's global loss matches fp32's to 1e-5 relative (its second step sees weights a few
// u apart: measured below 1e-6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dp_support.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

std::vector<std::string> args(const std::string& init, const std::string& save) {
  return {"--backend", "cpu",  "--model", kTinyModel, "--samples", "512", "--batch-size", "256", "--max-steps",
          "3",         "--lr", "0.5",     "--init",   init,        "--save", save,         "--quiet"};
}

// The 2-byte formats and their unit roundoff u = 2^-p for p significant bits (implicit bit
// included): a value rounded to nearest is within u of itself, relatively.
struct Format {
  std::string name;
  double u;
};
const std::vector<Format> kFormats = {{"bf16", 0x1p-8}, {"fp16", 0x1p-11}};

// One all-reduce algorithm, three runs from the same checkpoint: fp32, bf16, fp16.
class DpGradComm : public ::testing::TestWithParam<std::string> {};

TEST_P(DpGradComm, HalfTheBytesAndTheErrorOfEachFormat) {
  const std::string algo = GetParam();
  ScratchDir dir("gradcomm");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 99);
  const Weights w0 = read_weights(init);
  const std::vector<std::string> a = {"--allreduce", algo};
  const auto r32 = record_of(mpirun_argv(2, "train_dp_interleaved", args(init, dir.file("fp32.safetensors")) + a), 120);
  EXPECT_EQ(r32["grad_comm"], "fp32");
  const int64_t n = r32["n_params"].get<int64_t>();
  EXPECT_EQ(r32["allreduce_bytes_per_step"], (n + 1) * 4);
  const Weights w32 = read_weights(dir.file("fp32.safetensors"));
  const double l32 = r32["loss_global"][0].get<double>();

  std::map<std::string, double> rel;
  for (const Format& f : kFormats) {
    SCOPED_TRACE(algo + " " + f.name);
    const std::string save = dir.file(f.name + ".safetensors");
    const auto r = record_of(
        mpirun_argv(2, "train_dp_interleaved", args(init, save) + a + std::vector<std::string>{"--grad-comm", f.name}), 120);
    EXPECT_EQ(r["grad_comm"], f.name);
    EXPECT_EQ(r["allreduce_bytes_per_step"], n * 2 + 4);  // gradients in 2 bytes, the loss slot in 4
    rel[f.name] = worst_relative(w0, w32, read_weights(save));
    std::printf("%s %s: worst |w - w_fp32| / |w_fp32 - w0| = %.3g (u = %.3g: %.3g u)\n", algo.c_str(), f.name.c_str(),
                rel[f.name], f.u, rel[f.name] / f.u);
    EXPECT_GT(rel[f.name], f.u / 32) << "no rounding at this format's scale: was the format applied?";
    EXPECT_LT(rel[f.name], 32 * f.u);
    // Step 1 starts from the same weights, and the loss slot crosses in fp32.
    const double l = r["loss_global"][0].get<double>();
    std::printf("%s %s: first epoch's loss %.9g, fp32 %.9g (relative %.2g)\n", algo.c_str(), f.name.c_str(), l, l32,
                std::fabs(l - l32) / l32);
    EXPECT_NEAR(l, l32, 1e-5 * l32);
  }
  // fp16 keeps 3 more significant bits than bf16 (11 against 8): its error must be well below
  // bf16's (8x in theory; at least 2x here). A fp16 path that rounds as bf16 does fails this.
  EXPECT_LT(rel["fp16"], rel["bf16"] / 2) << algo;
}

INSTANTIATE_TEST_SUITE_P(Algos, DpGradComm, ::testing::Values("native", "ring", "star"),
                         [](const auto& i) { return i.param; });

// The bytes of a bucketed step in a 2-byte format, counted where the record counts them: every
// bucket, every all-reduce of the step and the step's total in the wire format (the loss slot in
// 4 bytes), and so each all-reduce's bus bandwidth — the bytes it sent over the time it took. On
// the link 0:0.001 (α 0, β = 1 MB/s) the emulation holds an all-reduce of B wire bytes at K = 2
// for 2·(B/2)/β, 100 ms for the largest bf16 bucket, far longer than the real all-reduce even on
// a loaded machine, so that bucket's busbw (B/t at K = 2) is β, or a little less when the machine
// adds time; counting fp32's bytes for bf16 gradients reports 2β. The fp32 run beside it is the
// control: same link, same busbw, twice the bytes.
TEST(DpGradCommBytes, BucketsAndTheirBusbwCountTheWireBytes) {
  const double beta_gbps = 0.001;
  const std::vector<std::string> run = {"--backend", "cpu", "--model", kTinyModel, "--samples", "1024",
                                        "--batch-size", "256", "--epochs", "1", "--quiet", "--bucket-cap-mb", "0.05",
                                        "--first-bucket-mb", "0.001", "--link", "0:0.001"};
  // The tiny model's buckets at these caps (test_dp_record.cpp): 1280, 8576, 200704, 256 bytes in fp32.
  const std::vector<int64_t> fp32_buckets = {1280, 8576, 200704, 256};
  for (const std::string fmt : {"fp32", "bf16"}) {
    SCOPED_TRACE(fmt);
    const auto j = record_of(mpirun_argv(2, "train_ddp_bucketed", run + std::vector<std::string>{"--grad-comm", fmt}), 120);
    const int64_t per = fmt == "fp32" ? 4 : 2;  // bytes per gradient element on the wire
    std::vector<int64_t> buckets, units;
    for (int64_t b : fp32_buckets) buckets.push_back(b / 4 * per);
    units = buckets;
    units.back() += 4;  // the loss slot rides in the last bucket's all-reduce, in fp32
    int64_t step = 0;
    for (int64_t u : units) step += u;
    EXPECT_EQ(j["bucket_bytes"].get<std::vector<int64_t>>(), buckets);
    EXPECT_EQ(j["allreduce_unit_bytes"].get<std::vector<int64_t>>(), units);
    EXPECT_EQ(j["allreduce_bytes_per_step"].get<int64_t>(), step);
    const auto busbw = j["bucket_busbw_gbps"].get<std::vector<double>>();
    ASSERT_EQ(busbw.size(), units.size());
    std::printf("%s: largest bucket %lld wire bytes, busbw %.5f GB/s (the link's β %.5f)\n", fmt.c_str(),
                static_cast<long long>(units[2]), busbw[2], beta_gbps);
    EXPECT_LE(busbw[2], 1.1 * beta_gbps) << "busbw above the emulated link's β: bytes counted that were not sent";
    EXPECT_GT(busbw[2], 0.5 * beta_gbps) << "busbw far below β: the hold or the bytes are off";
  }
}

// A word that is no format: one line naming the flag, exit 2; single has no such option.
TEST(DpGradCommControls, BadFormatRefused) {
  const auto r = run(mpirun_argv(2, "train_dp_naive", {"--backend", "cpu", "--grad-comm", "fp8"}), 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--grad-comm"), std::string::npos) << r.err;
  const auto s = run({bin("train_single_gpu"), "--backend", "cpu", "--grad-comm", "bf16"}, 60);
  EXPECT_EQ(s.exit_code, 2) << s.err;
}

}  // namespace
}  // namespace dpscale::test
