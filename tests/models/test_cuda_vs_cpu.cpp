// test_cuda_vs_cpu.cpp — the reference chain's GPU link: the CUDA backend against the CPU
// backend on the same step (forward, loss, backward, SGD) from the same weights and data.
// Skips where no GPU answers (CI); run it on a GPU machine: ctest -R ModelsCudaVsCpu.
//
// Tolerance: both backends compute in fp32 (cuBLAS in pedantic mode, no TF32) but sum in
// different orders (blocked GEMM kernels, a tree reduction for the loss), so results agree to a
// few ulps per accumulation: |gpu - cpu| <= 1e-5 + 1e-3·|cpu| for logits, gradients and weights,
// and 1e-5 relative for the loss. A wrong transpose, a missing bias or ReLU, or a lost row is
// off by O(1) — far outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/data/dataset.h"
#include "models/mlp.h"

namespace dpscale {
namespace {

struct StepResult {
  std::vector<float> logits, grads, params_after;
  float loss_mean = 0, loss_slot = 0;
};

StepResult run_step(Device& dev, const MlpSpec& spec, const Dataset& d, int batch) {
  Mlp m(dev, spec, batch);
  m.init_params(7);
  DeviceBuffer<float> x(dev, static_cast<size_t>(batch) * spec.in_width());
  DeviceBuffer<int32_t> y(dev, static_cast<size_t>(batch));
  dev.upload(x.data(), d.x.data(), x.nbytes());
  dev.upload(y.data(), d.y.data(), y.nbytes());
  StepResult r;
  const float* logits = m.forward(x.data(), batch);
  r.logits.resize(static_cast<size_t>(batch) * spec.out_width());
  dev.download(r.logits.data(), logits, r.logits.size() * sizeof(float));
  m.loss(y.data(), batch, 1.0f / static_cast<float>(batch));
  m.backward(x.data(), batch, nullptr);
  r.loss_mean = m.loss_mean();
  r.loss_slot = m.loss_slot_value();
  r.grads.resize(static_cast<size_t>(m.layout().n_params()));
  dev.download(r.grads.data(), m.grads(), r.grads.size() * sizeof(float));
  m.sgd_step(SgdConfig{0.1f, 0.9f, 1e-4f});
  r.params_after = m.params_to_host();
  return r;
}

void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  size_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!(std::fabs(gpu[i] - cpu[i]) <= 1e-5f + 1e-3f * std::fabs(cpu[i]))) {
      if (++bad <= 5) ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " elements differ";
}

TEST(ModelsCudaVsCpu, OneTrainingStepAgrees) {
  if (cuda_device_count() == 0) {
    GTEST_SKIP() << (cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
  }
  DeviceOptions gpu_opts;
  gpu_opts.backend = "cuda";
  auto gpu = make_device(gpu_opts);
  CpuDevice cpu(1);
  const MlpSpec spec = parse_model("784,256,128,10");
  const int batch = 96;  // not a multiple of a warp or a tile: edges are exercised
  const Dataset d = make_synthetic(batch, spec.in_width(), spec.out_width(), 3);
  const StepResult g = run_step(*gpu, spec, d, batch);
  const StepResult c = run_step(cpu, spec, d, batch);
  expect_close(g.logits, c.logits, "logits");
  expect_close(g.grads, c.grads, "gradients");
  expect_close(g.params_after, c.params_after, "weights after SGD with momentum");
  EXPECT_NEAR(g.loss_mean, c.loss_mean, 1e-5 * std::fabs(c.loss_mean));
  EXPECT_NEAR(g.loss_slot, c.loss_slot, 1e-5 * std::fabs(c.loss_slot));
}

TEST(ModelsCudaVsCpu, AccuracyCountAgrees) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  DeviceOptions gpu_opts;
  gpu_opts.backend = "cuda";
  auto gpu = make_device(gpu_opts);
  CpuDevice cpu(1);
  const MlpSpec spec = parse_model("784,64,10");
  const int batch = 300;
  const Dataset d = make_synthetic(batch, spec.in_width(), spec.out_width(), 5);
  int64_t counts[2];
  Device* devs[2] = {gpu.get(), &cpu};
  for (int i = 0; i < 2; ++i) {
    Mlp m(*devs[i], spec, batch);
    m.init_params(11);
    DeviceBuffer<float> x(*devs[i], d.x.size());
    DeviceBuffer<int32_t> y(*devs[i], d.y.size());
    devs[i]->upload(x.data(), d.x.data(), x.nbytes());
    devs[i]->upload(y.data(), d.y.data(), y.nbytes());
    m.forward(x.data(), batch);
    counts[i] = m.count_correct(y.data(), batch);
  }
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_GT(counts[1], 0);
}

}  // namespace
}  // namespace dpscale
