// test_dp_record.cpp — the RESULTS_JSON record of each data-parallel mode under mpirun -np 2:
// every field the record documents, with values that follow from the configuration (not just present),
// and exactly one RESULTS_JSON line in mpirun's stdout (only rank 0 prints).
//
// Run: ctest -R DpRecord --output-on-failure
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

struct RecordCase {
  std::string name;
  std::string exe;
  std::vector<std::string> extra;
};

ProcessResult run_np2(const RecordCase& c, std::vector<std::string> args, std::vector<std::string>* argv_out) {
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  *argv_out = mpirun_argv(2, c.exe, args);
  return run(*argv_out, 120);
}

void PrintTo(const RecordCase& c, std::ostream* os) { *os << c.name; }

class DpRecord : public ::testing::TestWithParam<RecordCase> {};

TEST_P(DpRecord, HasEveryFieldAndOnlyRankZeroPrints) {
  const RecordCase c = GetParam();
  const int k = 2;
  std::vector<std::string> argv;
  // 1024 samples / 256 = 4 steps per epoch; 2 epochs.
  const ProcessResult r = run_np2(
      c, {"--backend", "cpu", "--model", kTinyModel, "--samples", "1024", "--batch-size", "256", "--epochs", "2"}, &argv);
  ASSERT_FALSE(r.timed_out) << describe(argv, r);
  ASSERT_EQ(r.exit_code, 0) << describe(argv, r);
  EXPECT_EQ(count_results_lines(r.out), 1) << "exactly one RESULTS_JSON line (rank 0's):\n" << describe(argv, r);
  EXPECT_EQ(count_occurrences(r.out + r.err, "RESULTS_JSON"), 1) << describe(argv, r);
  const auto j = results_json(r.out);
  SCOPED_TRACE(j.dump());

  const ParamLayout layout(parse_model(kTinyModel));
  const int n_tensors = static_cast<int>(layout.tensors().size());  // 6
  const std::string mode = j.value("mode", "");

  EXPECT_EQ(j["schema"], "dpscale.result/1");
  EXPECT_EQ(j["world_size"], k);
  EXPECT_EQ(j["comm"], "mpi");
  EXPECT_EQ(j["cublas_math"], "none");  // the CPU backend runs no cuBLAS
  EXPECT_EQ(j["forward_epilogue"], "pass");  // the bias and ReLU in a pass after each GEMM
  EXPECT_EQ(j["link"], "none");
  EXPECT_EQ(j["global_batch"], 256);
  EXPECT_EQ(j["local_batch"], 256 / k);
  EXPECT_EQ(j["steps"], 8);
  ASSERT_TRUE(j["compute_s"].is_number());
  EXPECT_GT(j["compute_s"].get<double>(), 0.0);

  // comm_s only for naive; exposed_comm_s and comm_busy_s for the overlapping modes (busy for all).
  const bool naive = c.exe == "train_dp_naive";
  EXPECT_EQ(j["comm_s"].is_number(), naive);
  EXPECT_EQ(j["exposed_comm_s"].is_number(), !naive);
  ASSERT_TRUE(j["comm_busy_s"].is_number());
  EXPECT_GT(j["comm_busy_s"].get<double>(), 0.0);
  const double wait = naive ? j["comm_s"].get<double>() : j["exposed_comm_s"].get<double>();
  EXPECT_GE(wait, 0.0);
  EXPECT_NEAR(j["compute_s"].get<double>() + wait, j["avg_epoch_s"].get<double>(), 1e-9) << "compute = epoch - comm wait";

  // Calls and bytes per step.
  const int calls = j["allreduce_calls_per_step"].get<int>();
  const int want_calls = c.name == "naive_fused" ? 1 : c.name == "bucketed" ? 4 : n_tensors;
  EXPECT_EQ(calls, want_calls) << "naive and interleaved: one all-reduce per tensor; --fused: one; bucketed: one per bucket";
  // What the calls send: per tensor, the parameters and the loss slot; --fused, the whole
  // buffer with the layout's padding; bucketed, the buckets' slices (padding between a bucket's
  // tensors included: test_buckets.cpp) and the slot.
  const int64_t want_bytes = c.name == "naive_fused" ? layout.grad_buffer_count() * 4
                             : c.name == "bucketed"  ? 1280 + 8576 + 200704 + 256 + 4
                                                     : (layout.n_params() + 1) * 4;
  EXPECT_EQ(j["allreduce_bytes_per_step"].get<int64_t>(), want_bytes) << "what the all-reduces send, loss slot included";

  // Buckets: values in bucketed, null/empty elsewhere.
  if (mode == "bucketed") {
    EXPECT_DOUBLE_EQ(j["bucket_cap_mb"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(j["first_bucket_mb"].get<double>(), 0.001);
    EXPECT_EQ(j["n_buckets"], 4);
    EXPECT_EQ(calls, 4) << "bucketed: one all-reduce per bucket";
    // The tensors' bytes are 1280, 8360, 200704, 256 (test_buckets.cpp); the second slice holds
    // 216 bytes of padding after layers.2.bias.
    EXPECT_EQ(j["bucket_bytes"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1280, 8576, 200704, 256}));
  } else {
    EXPECT_TRUE(j["bucket_cap_mb"].is_null());
    EXPECT_TRUE(j["first_bucket_mb"].is_null());
    EXPECT_TRUE(j["n_buckets"].is_null());
    EXPECT_TRUE(j["bucket_bytes"].empty());
  }
  EXPECT_EQ(mode, c.name == "naive_fused" ? "naive" : c.name);

  // Per-rank epoch times: K entries; epoch time is the slowest rank's.
  const auto per_rank = j["per_rank_epoch_s"].get<std::vector<double>>();
  ASSERT_EQ(per_rank.size(), static_cast<size_t>(k));
  for (double t : per_rank) EXPECT_GT(t, 0.0);
  const auto epochs = j["epoch_times_s"].get<std::vector<double>>();
  ASSERT_EQ(epochs.size(), 2u);
  const double avg = (epochs[0] + epochs[1]) / 2;
  EXPECT_NEAR(j["avg_epoch_s"].get<double>(), avg, 1e-12);
  // The mean of the per-epoch maxima is at least every rank's own mean.
  EXPECT_GE(avg + 1e-12, *std::max_element(per_rank.begin(), per_rank.end()));

  EXPECT_EQ(j["loss_global"].size(), 2u);
  EXPECT_EQ(j["loss_rank0"].size(), 2u);
  EXPECT_NE(j["mpi_library"].get<std::string>(), "");
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DpRecord,
    ::testing::Values(RecordCase{"naive", "train_dp_naive", {}}, RecordCase{"naive_fused", "train_dp_naive", {"--fused"}},
                      RecordCase{"interleaved", "train_dp_interleaved", {}},
                      RecordCase{"bucketed", "train_ddp_bucketed", {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"}}),
    [](const ::testing::TestParamInfo<RecordCase>& i) { return i.param.name; });

// The medium preset at PyTorch's defaults (cap 25 MiB, first bucket 1 MiB): the record reports
// the 3 buckets of test_buckets.cpp, {W4,b4} {W3,b3,W2,b2} {W1,b1,W0,b0}, byte for byte.
TEST(DpRecordBuckets, MediumDefaultsReportThreeBuckets) {
  const auto argv = mpirun_argv(2, "train_ddp_bucketed",
                                {"--backend", "cpu", "--model", "medium", "--samples", "128", "--batch-size", "64", "--max-steps", "1",
                                 "--warmup-steps", "0", "--epochs", "1", "--quiet"});
  const ProcessResult r = run(argv, 180);
  ASSERT_FALSE(r.timed_out) << describe(argv, r);
  ASSERT_EQ(r.exit_code, 0) << describe(argv, r);
  ASSERT_EQ(count_results_lines(r.out), 1) << describe(argv, r);
  const auto j = results_json(r.out);
  EXPECT_DOUBLE_EQ(j["bucket_cap_mb"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(j["first_bucket_mb"].get<double>(), 1.0);
  EXPECT_EQ(j["n_buckets"], 3);
  EXPECT_EQ(j["allreduce_calls_per_step"], 3);
  EXPECT_EQ(j["bucket_bytes"].get<std::vector<int64_t>>(), (std::vector<int64_t>{20520, 10491904, 23216128}));
  EXPECT_EQ(j["allreduce_bytes_per_step"].get<int64_t>(), 33728552 + 4);
}

}  // namespace
}  // namespace dpscale::test
