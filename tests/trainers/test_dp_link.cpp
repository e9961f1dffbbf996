// test_dp_link.cpp — link emulation: an emulated all-reduce takes at least the α-β ring time
//     t(B, K) = 2(K-1) · (α + (B/K)/β) · F
// (the formula, typed in again in dp_support.cpp rather than taken from
// contract/link_model.cpp). Two levels:
//   * MpiCommunicator itself, through dp_link_probe under mpirun (K = 2 and 4, several presets
//     and dilations), with the modelled time chosen well above what the real all-reduce costs
//     here — shown by a control with --link none — so the lower bound tests the hold, not MPI;
//   * each data-parallel trainer with --link eth10: its comm times cover at least
//     steps × the modelled time of one step's all-reduces.
//
// Run: ctest -R DpLink --output-on-failure
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "dp_support.h"
#include "models/mlp_spec.h"
#include "models/param_layout.h"

namespace dpscale::test {
namespace {

nlohmann::json probe(int k, const std::string& link, double dilation, long nbytes, int reps) {
  const std::vector<std::string> argv = {mpiexec(), "--allow-run-as-root", "--oversubscribe", "-np",
                                         std::to_string(k), DPSCALE_LINK_PROBE, link, std::to_string(dilation),
                                         std::to_string(nbytes), std::to_string(reps)};
  const ProcessResult r = run(argv, 120);
  EXPECT_FALSE(r.timed_out) << describe(argv, r);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  return nlohmann::json::parse(r.out);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ProbeCase {
  std::string link;
  double dilation;
  long nbytes;
  int k;
};

void PrintTo(const ProbeCase& c, std::ostream* os) {
  *os << c.link << " x" << c.dilation << ", " << c.nbytes << " B, K=" << c.k;
}

class DpLinkProbe : public ::testing::TestWithParam<ProbeCase> {};

TEST_P(DpLinkProbe, AllreduceTakesAtLeastTheModelledTime) {
  const ProbeCase c = GetParam();
  const int reps = 5;
  const double model = ring_model_seconds(link_preset(c.link), static_cast<double>(c.nbytes), c.k, c.dilation);
  const auto j = probe(c.k, c.link, c.dilation, c.nbytes, reps);
  ASSERT_TRUE(j["sums_ok"].get<bool>()) << "the emulated all-reduce must still sum: " << j.dump();
  const auto times = j["times_s"].get<std::vector<double>>();
  ASSERT_EQ(times.size(), static_cast<size_t>(reps));
  // Timed from before the launch to after the wait, around a hold until start + model: never
  // shorter (1 µs for the clock's rounding).
  for (double t : times) EXPECT_GE(t, model - 1e-6) << "model " << model << " s; " << j.dump();
  // The comm thread's busy time counts the hold too.
  EXPECT_GE(j["busy_s"].get<double>(), reps * model - 1e-5) << j.dump();
  // And not wildly more: a hold counted twice, or F applied twice, would make every repetition
  // too long, so the fastest one is checked. The slack absorbs a busy 2-core machine (the real
  // all-reduce of these sizes takes about a millisecond here).
  EXPECT_LE(*std::min_element(times.begin(), times.end()), 1.5 * model + 0.02) << "model " << model << " s; " << j.dump();
  std::printf("%s F=%g B=%ld K=%d: model %.4f s, median %.4f s\n", c.link.c_str(), c.dilation, c.nbytes, c.k, model,
              median(times));
}

INSTANTIATE_TEST_SUITE_P(
    Presets, DpLinkProbe,
    ::testing::Values(ProbeCase{"eth10", 100.0, 1 << 20, 2},   // 2·(50 µs + 0.5 MiB/1.25 GB/s)·100 = 93.9 ms
                      ProbeCase{"eth10", 100.0, 1 << 20, 4},   // 6·(50 µs + 256 KiB/1.25 GB/s)·100 = 155 ms
                      ProbeCase{"pcie4", 200.0, 4 << 20, 2},   // 2·(10 µs + 2 MiB/25 GB/s)·200 = 37.6 ms
                      ProbeCase{"ib100", 50.0, 2 << 20, 4},    // 6·(5 µs + 512 KiB/12.5 GB/s)·50 = 14.1 ms
                      ProbeCase{"nvlink", 2000.0, 1 << 18, 4}  // 6·(1 µs + 64 KiB/300 GB/s)·2000 = 14.6 ms
                      ),
    [](const ::testing::TestParamInfo<ProbeCase>& i) { return i.param.link + "_K" + std::to_string(i.param.k); });

// Without a link the same all-reduce is far faster than the eth10 model above: so the lower
// bound there measures the emulation's hold, not a slow machine.
TEST(DpLinkProbeControl, RealAllreduceIsFasterThanTheModel) {
  const double model = ring_model_seconds(link_preset("eth10"), 1 << 20, 2, 100.0);
  const auto j = probe(2, "none", 1.0, 1 << 20, 5);
  ASSERT_TRUE(j["sums_ok"].get<bool>());
  EXPECT_LT(median(j["times_s"].get<std::vector<double>>()), model / 3) << j.dump();
}

// One step's modelled comm time, from the layout (and, for bucketed, the record's buckets).
// The loss slot (4 bytes) rides in the call that carries the last tensor backward produces.
double step_model_seconds(const std::string& mode, const nlohmann::json& rec, int k, double dilation) {
  const LinkPreset eth = link_preset("eth10");
  const ParamLayout layout(parse_model(kTinyModel));
  double t = 0.0;
  if (mode == "naive_fused") return ring_model_seconds(eth, static_cast<double>(layout.grad_buffer_count()) * 4, k, dilation);
  if (mode == "bucketed") {
    const auto bytes = rec["bucket_bytes"].get<std::vector<double>>();
    for (size_t i = 0; i < bytes.size(); ++i) t += ring_model_seconds(eth, bytes[i] + (i + 1 == bytes.size() ? 4 : 0), k, dilation);
    return t;
  }
  for (const FlatTensor& tv : layout.tensors()) {
    const bool last = tv.index + 1 == static_cast<int>(layout.tensors().size());
    t += ring_model_seconds(eth, static_cast<double>(tv.nbytes() + (last ? 4 : 0)), k, dilation);
  }
  return t;
}

class DpLinkTrainer : public ::testing::TestWithParam<std::string> {};

TEST_P(DpLinkTrainer, CommTimeCoversTheModelledSteps) {
  const std::string mode = GetParam();
  const int k = 2, steps = 3;
  const double dilation = 10.0;
  std::string exe = mode == "interleaved" ? "train_dp_interleaved" : mode == "bucketed" ? "train_ddp_bucketed" : "train_dp_naive";
  // 1024 samples / 256 = 4 steps per epoch: the 3 steps are one epoch, so the per-epoch
  // averages in the record are the totals of those 3 steps.
  std::vector<std::string> args = {"--backend", "cpu", "--model", kTinyModel, "--samples", "1024", "--batch-size",
                                   "256", "--max-steps", std::to_string(steps), "--link", "eth10", "--link-dilation",
                                   "10", "--quiet"};
  if (mode == "naive_fused") args.push_back("--fused");
  if (mode == "bucketed") args.insert(args.end(), {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"});
  const auto argv = mpirun_argv(k, exe, args);
  const ProcessResult r = run(argv, 120);
  ASSERT_FALSE(r.timed_out) << describe(argv, r);
  ASSERT_EQ(r.exit_code, 0) << describe(argv, r);
  const auto rec = results_json(r.out);
  ASSERT_EQ(rec["steps"], steps);
  ASSERT_EQ(rec["epoch_times_s"].size(), 1u);
  EXPECT_EQ(rec["link"], "eth10");
  EXPECT_DOUBLE_EQ(rec["link_alpha_us"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(rec["link_gbps"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(rec["link_dilation"].get<double>(), dilation);

  const double need = steps * step_model_seconds(mode, rec, k, dilation);
  // comm_busy_s: every all-reduce held at least its modelled time.
  EXPECT_GE(rec["comm_busy_s"].get<double>(), need - 1e-5) << rec.dump();
  // naive blocks on all of them, one after the other: its comm phase covers the model too.
  if (mode == "naive" || mode == "naive_fused") {
    EXPECT_GE(rec["comm_s"].get<double>(), need - 1e-5) << rec.dump();
  }
  // And the epoch cannot be shorter than the comm it waited for.
  EXPECT_GE(rec["avg_epoch_s"].get<double>(), need - 1e-5) << rec.dump();
  std::printf("%s: modelled %.4f s for %d steps; comm_busy_s %.4f, epoch %.4f\n", mode.c_str(), need, steps,
              rec["comm_busy_s"].get<double>(), rec["avg_epoch_s"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Modes, DpLinkTrainer, ::testing::Values("naive", "naive_fused", "interleaved", "bucketed"));

}  // namespace
}  // namespace dpscale::test
