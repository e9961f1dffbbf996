// test_gpu_choice.cpp — the node's GPU assignment by UUID (trainers/gpu_choice.h), no MPI, no
// GPU: plain mpirun (every rank sees every GPU), one GPU per rank (Slurm's --gpus-per-task=1,
// a CUDA_VISIBLE_DEVICES per rank: each rank's only GPU is its device 0), and the two ways two
// ranks end up on one GPU, which alone are refused.
//
// Run: ctest -R GpuChoice   (or ./tests/trainers/test_gpu_choice)
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "trainers/gpu_choice.h"

namespace dpscale {
namespace {

GpuUuid gpu(unsigned char id) {
  GpuUuid u{};
  u[0] = 0xab;
  u[15] = id;
  return u;
}

using Lists = std::vector<std::vector<GpuUuid>>;

std::vector<int> indices(const Lists& visible) {
  std::vector<int> v;
  for (int r = 0; r < static_cast<int>(visible.size()); ++r) {
    const GpuChoice c = choose_gpu(visible, r);
    EXPECT_EQ(c.conflict, "") << "local rank " << r;
    v.push_back(c.device_index);
  }
  return v;
}

TEST(GpuChoice, EveryRankSeesEveryGpuTakesItsLocalRank) {
  const std::vector<GpuUuid> all = {gpu(0), gpu(1), gpu(2), gpu(3)};
  EXPECT_EQ(indices(Lists{all, all, all, all}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(indices(Lists{all, all}), (std::vector<int>{0, 1})) << "fewer ranks than GPUs";
}

TEST(GpuChoice, OneGpuPerRankIsDeviceZeroInEveryRank) {
  // Slurm --gpus-per-task=1: each rank sees one GPU, numbered 0, and they differ. A count of
  // visible GPUs (1 < 4 ranks) would refuse this; the UUIDs show there is no sharing.
  EXPECT_EQ(indices(Lists{{gpu(0)}, {gpu(1)}, {gpu(2)}, {gpu(3)}}), (std::vector<int>{0, 0, 0, 0}));
  // Two GPUs per task.
  EXPECT_EQ(indices(Lists{{gpu(0), gpu(1)}, {gpu(2), gpu(3)}}), (std::vector<int>{0, 0}));
  // Overlapping views: the second rank takes the one GPU not yet taken.
  EXPECT_EQ(indices(Lists{{gpu(0), gpu(1)}, {gpu(0), gpu(1)}}), (std::vector<int>{0, 1}));
}

TEST(GpuChoice, MoreRanksThanGpusIsRefusedNamingTheRanksAndTheGpu) {
  const std::vector<GpuUuid> two = {gpu(0), gpu(1)};
  for (int r = 0; r < 3; ++r) {
    const GpuChoice c = choose_gpu(Lists{two, two, two}, r);
    EXPECT_EQ(c.device_index, -1);
    EXPECT_EQ(c.conflict, "local ranks 0 and 2 would share GPU " + uuid_string(gpu(0)) +
                              " (3 ranks on this node, 2 distinct GPU(s) among what they see): run one rank per "
                              "GPU, --share-gpu (a correctness run), or --backend cpu")
        << "every local rank refuses with the same line, rank " << r;
  }
}

TEST(GpuChoice, TwoRanksGivenTheSameSingleGpuAreRefused) {
  // A per-rank CUDA_VISIBLE_DEVICES that names the same GPU twice.
  const GpuChoice c = choose_gpu(Lists{{gpu(5)}, {gpu(6)}, {gpu(5)}}, 1);
  EXPECT_NE(c.conflict.find("local ranks 0 and 2 would share GPU " + uuid_string(gpu(5))), std::string::npos)
      << c.conflict;
}

// --share-gpu: the same node shapes that are refused above are assigned, the ranks spread over
// the GPUs as evenly as they go, and the node says how many share the busiest GPU.
TEST(GpuChoice, SharingSpreadsTheRanksOverTheGpus) {
  const auto shared = [](const Lists& visible) {
    std::vector<int> v;
    int most = -1;
    for (int r = 0; r < static_cast<int>(visible.size()); ++r) {
      const GpuChoice c = choose_gpu(visible, r, /*share=*/true);
      EXPECT_EQ(c.conflict, "") << "local rank " << r;
      if (most >= 0) {
        EXPECT_EQ(c.most_on_one_gpu, most) << "every rank knows the node's count";
      }
      most = c.most_on_one_gpu;
      v.push_back(c.device_index);
    }
    return std::make_pair(v, most);
  };
  // One GPU, K = 2 and 4: everybody on device 0.
  EXPECT_EQ(shared(Lists{{gpu(0)}, {gpu(0)}}), std::make_pair(std::vector<int>{0, 0}, 2));
  EXPECT_EQ(shared(Lists(4, {gpu(0)})), std::make_pair(std::vector<int>{0, 0, 0, 0}, 4));
  // Three ranks on two GPUs: 0, 1, then the least used (a tie: the first).
  const std::vector<GpuUuid> two = {gpu(0), gpu(1)};
  EXPECT_EQ(shared(Lists{two, two, two}), std::make_pair(std::vector<int>{0, 1, 0}, 2));
  // Enough GPUs: sharing allowed but not needed, so nobody shares (the record's gpu_shared is false).
  EXPECT_EQ(shared(Lists{two, two}), std::make_pair(std::vector<int>{0, 1}, 1));
  // Negative control: the same one-GPU node without --share-gpu is refused.
  EXPECT_NE(choose_gpu(Lists{{gpu(0)}, {gpu(0)}}, 1).conflict, "");
}

TEST(GpuChoice, RanksThatSeeNoGpuTakeNone) {
  // --backend auto then falls back to the CPU; nothing is shared.
  EXPECT_EQ(indices(Lists{{}, {}}), (std::vector<int>{-1, -1}));
  EXPECT_EQ(indices(Lists{{gpu(1)}, {}}), (std::vector<int>{0, -1}));
}

TEST(GpuChoice, UuidPrintsAsNvidiaSmiDoes) {
  GpuUuid u{};
  for (int i = 0; i < 16; ++i) u[static_cast<size_t>(i)] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(uuid_string(u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

}  // namespace
}  // namespace dpscale
