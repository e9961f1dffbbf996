// test_nccl_order.cpp — the NCCL communicator's stream ordering, made visible on one GPU.
//
// At K = 1 an all-reduce changes no number, so removing a cudaStreamWaitEvent still gives
// bit-identical weights and the exactness tests cannot see it. The communicator's test hooks
// (comm/nccl_order_hook.h) give the comm stream late, visible work: a ~20 ms delay kernel and
// ×2 of the reduced gradients. Plain SGD (no momentum, no weight decay) that uses 2·g with
// learning rate L takes exactly the steps of g with 2L (×2 is exact in binary floating point),
// so the reference is train_single_gpu --lr 2L, compared bit for bit:
//   * after:  all-reduce, delay, ×2 — the update must wait for the comm stream and see 2·g;
//   * before: delay, all-reduce, ×2, with --accum-steps 2 and four buckets — each bucket sits
//     on the comm stream while compute runs ahead, and must be neither read by the update nor
//     overwritten by the next step's micro-batches before its all-reduce (and ×2) is done.
// Each has its negative control: the same run with finish()'s cudaStreamWaitEvent removed
// (DPSCALE_TEST_NCCL_NO_FINISH_WAIT=1) must give other weights — the check can fail.
//
// GPU-gated (one GPU): skips, naming why, where none answers. The GPU kit runs it first.
// Run on a GPU node: ctest -R NcclOrder --output-on-failure
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dp_support.h"
#include "models/device.h"
#include "weights_compare.h"

namespace dpscale::test {
namespace {

#define REQUIRE_ONE_GPU()                                                                          \
  do {                                                                                             \
    if (!cuda_compiled()) GTEST_SKIP() << "built without the CUDA backend";                        \
    if (cuda_device_count() < 1) GTEST_SKIP() << "needs 1 GPU (the NCCL rank's), 0 answer";         \
  } while (0)

// 2 steps per epoch at batch 256, 3 steps in all; plain SGD.
std::vector<std::string> args_for(const std::string& init, const std::string& save, const std::string& lr, int accum) {
  return {"--backend", "cuda", "--model", kTinyModel, "--samples", std::to_string(2 * 256 * accum), "--batch-size",
          "256", "--max-steps", "3", "--lr", lr, "--momentum", "0", "--weight-decay", "0", "--accum-steps",
          std::to_string(accum), "--init", init, "--save", save, "--quiet"};
}

// Four buckets on the tiny model (test_buckets.cpp): several all-reduces in flight at once.
const std::vector<std::string> kBuckets = {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"};

struct Hooked {
  std::string exe;
  std::vector<std::string> extra;
  std::string at;  // after | before
  int accum;
};

// The hooked K = 1 run's weights equal the reference's (train_single_gpu at twice the rate)?
bool matches_doubled_rate(const Hooked& h, bool remove_finish_wait, const std::string& tag) {
  ScratchDir dir("nccl-order-" + tag);
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 4321);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + args_for(init, dir.file("ref.safetensors"), "0.1", h.accum),
            120);
  std::vector<std::string> argv = mpirun_argv(1, h.exe, args_for(init, dir.file("dp.safetensors"), "0.05", h.accum) + h.extra);
  argv.insert(argv.begin() + 1, {"-x", "DPSCALE_TEST_NCCL_ORDER=" + h.at});
  if (remove_finish_wait) argv.insert(argv.begin() + 1, {"-x", "DPSCALE_TEST_NCCL_NO_FINISH_WAIT=1"});
  const nlohmann::json rec = record_of(argv, 180);
  EXPECT_EQ(rec["comm"], "nccl");
  return read_weights(dir.file("dp.safetensors")) == read_weights(dir.file("ref.safetensors"));
}

const std::vector<Hooked> kAfter = {{"train_dp_naive", {}, "after", 1},
                                    {"train_dp_interleaved", {}, "after", 1},
                                    {"train_ddp_bucketed", kBuckets, "after", 1}};
const Hooked kBefore{"train_ddp_bucketed", kBuckets, "before", 2};

TEST(NcclOrderK1, UpdateSeesTheCommStreamsResult) {
  REQUIRE_ONE_GPU();
  for (const Hooked& h : kAfter) {
    SCOPED_TRACE(h.exe);
    EXPECT_TRUE(matches_doubled_rate(h, false, "after"))
        << h.exe << ": the update did not use the gradients as the comm stream left them (×2 after a delay)";
  }
}

TEST(NcclOrderK1, NegativeControlUpdateWithoutTheFinishWait) {
  REQUIRE_ONE_GPU();
  for (const Hooked& h : kAfter) {
    SCOPED_TRACE(h.exe);
    EXPECT_FALSE(matches_doubled_rate(h, true, "after-nowait"))
        << h.exe << ": with finish()'s stream wait removed the update still saw ×2: this test cannot see the bug";
  }
}

TEST(NcclOrderK1, BucketUntouchedUntilItsAllReduceCompletes) {
  REQUIRE_ONE_GPU();
  EXPECT_TRUE(matches_doubled_rate(kBefore, false, "before"))
      << "a bucket was read or overwritten by compute before its delayed all-reduce (and ×2) completed";
}

TEST(NcclOrderK1, NegativeControlBucketWithoutTheFinishWait) {
  REQUIRE_ONE_GPU();
  EXPECT_FALSE(matches_doubled_rate(kBefore, true, "before-nowait"))
      << "with finish()'s stream wait removed the buckets were still safe: this test cannot see the bug";
}

}  // namespace
}  // namespace dpscale::test
