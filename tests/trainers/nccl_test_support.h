// nccl_test_support.h — what the NCCL trainer tests share (test_dp_nccl.cpp at K = 1,
// test_dp_nccl_multi.cpp at K = 2 and 4): how many GPUs answer, the skip that names what is
// missing, the runs from one checkpoint, the modes with their options, the record's NCCL fields.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dp_support.h"
#include "models/device.h"

namespace dpscale::test {

inline int gpus() { return cuda_compiled() ? cuda_device_count() : 0; }

// Skips the test unless this node has `k` GPUs: the reason names what is missing.
#define REQUIRE_GPUS(k)                                                                                  \
  do {                                                                                                   \
    if (!cuda_compiled()) GTEST_SKIP() << "built without the CUDA backend";                              \
    if (::dpscale::test::gpus() < (k))                                                                   \
      GTEST_SKIP() << "needs " << (k) << " GPU(s) (one per NCCL rank), " << ::dpscale::test::gpus() << " answer"; \
  } while (0)

// 2 steps per epoch at `batch`, 3 steps in all (as test_dp_exactness), from a checkpoint.
inline std::vector<std::string> args_for(const std::string& backend, const std::string& init, const std::string& save,
                                         const std::string& model = kTinyModel, int batch = 256) {
  return {"--backend", backend, "--model", model, "--samples", std::to_string(2 * batch), "--batch-size",
          std::to_string(batch), "--max-steps", "3", "--lr", "0.05", "--init", init, "--save", save, "--quiet"};
}

inline nlohmann::json run_single(const std::vector<std::string>& args) {
  return record_of(std::vector<std::string>{bin("train_single_gpu")} + args, 120);
}

struct NcclMode {
  std::string name, exe;
  std::vector<std::string> extra;
};

inline const std::vector<NcclMode>& nccl_modes() {
  static const std::vector<NcclMode> modes = {
      {"naive", "train_dp_naive", {}},
      {"interleaved", "train_dp_interleaved", {}},
      // Four buckets on the tiny model (test_buckets.cpp): several NCCL calls in flight at once.
      {"bucketed", "train_ddp_bucketed", {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"}}};
  return modes;
}

// NCCL's start-up takes seconds. A hang ends within a minute, named by the trainers' watchdog,
// rather than at the test's own timeout.
inline nlohmann::json run_dp(const NcclMode& m, int k, const std::vector<std::string>& args) {
  return record_of(mpirun_argv(k, m.exe, args + m.extra + std::vector<std::string>{"--collective-timeout", "60"}), 180);
}

inline void expect_nccl_record(const nlohmann::json& j, int k) {
  EXPECT_EQ(j["backend"], "cuda");
  EXPECT_EQ(j["comm"], "nccl");
  EXPECT_EQ(j["world_size"], k);
  EXPECT_NE(j["nccl_version"].get<std::string>(), "");
  EXPECT_NE(j["device_name"].get<std::string>(), "");
}

}  // namespace dpscale::test
