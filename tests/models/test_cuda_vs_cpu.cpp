// test_cuda_vs_cpu.cpp — the reference chain's GPU link: the CUDA backend against the CPU
// backend on the same step (forward, loss, backward, SGD) from the same weights and data.
// Skips where no GPU answers (CI); run it on a GPU machine: ctest -R ModelsCudaVsCpu.
//
// Tolerance: both backends compute in fp32 (cuBLAS in pedantic mode, no TF32) but sum in
// different orders (blocked GEMM kernels; the loss in double on both), so results agree to a
// few ulps per accumulation: |gpu - cpu| <= 1e-5 + 1e-3·|cpu| for logits, gradients and weights,
// and 1e-5 relative for the loss. A wrong transpose, a missing bias or ReLU, or a lost row is
// off by O(1) — far outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/data/dataset.h"
#include "models/data/rng.h"
#include "models/data/token_data.h"
#include "models/gpt/gpt.h"
#include "models/mlp.h"

namespace dpscale {
namespace {

// The CUDA backend (tests below skip first where no GPU answers).
std::unique_ptr<Device> cuda_device(bool tf32 = false) {
  DeviceOptions o;
  o.backend = "cuda";
  o.tf32 = tf32;
  return make_device(o);
}

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
  r.grads.resize(static_cast<size_t>(m.layout().param_buffer_count()));
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
  auto gpu = cuda_device();
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

// One layer's operands on the host: x starts `offset` floats into its buffer, so a
// 4-byte-aligned x is tried as well as the usual 256-byte one.
struct LinearInputs {
  int rows, n_in, n_out, offset;
  std::vector<float> x, w, b;
};

LinearInputs linear_inputs(int rows, int n_in, int n_out, int offset) {
  const CounterRng rng(11, 0);
  LinearInputs in{rows, n_in, n_out, offset, std::vector<float>(static_cast<size_t>(rows) * n_in + offset),
                  std::vector<float>(static_cast<size_t>(n_out) * n_in), std::vector<float>(static_cast<size_t>(n_out))};
  for (size_t i = 0; i < in.x.size(); ++i) in.x[i] = rng.normal(i);
  for (size_t i = 0; i < in.w.size(); ++i) in.w[i] = 0.05f * rng.normal(in.x.size() + i);
  for (size_t i = 0; i < in.b.size(); ++i) in.b[i] = 0.5f * rng.normal(in.x.size() + in.w.size() + i);
  return in;
}

// Device::linear_forward of `in` on `dev`, read back.
std::vector<float> linear_forward_on(Device& dev, const LinearInputs& in, bool relu) {
  DeviceBuffer<float> xd(dev, in.x.size()), wd(dev, in.w.size()), bd(dev, in.b.size()),
      yd(dev, static_cast<size_t>(in.rows) * in.n_out);
  dev.upload(xd.data(), in.x.data(), xd.nbytes());
  dev.upload(wd.data(), in.w.data(), wd.nbytes());
  dev.upload(bd.data(), in.b.data(), bd.nbytes());
  dev.linear_forward(xd.data() + in.offset, wd.data(), bd.data(), yd.data(), in.rows, in.n_in, in.n_out, relu);
  std::vector<float> y(yd.size());
  dev.download(y.data(), yd.data(), yd.nbytes());
  return y;
}

// The CPU's linear_forward is the layer's formula, y[r, o] = act(Σ_i x[r, i]·w[o, i] + b[o]),
// against a double-precision sum on the host (a missing bias, a transposed weight or a missing
// ReLU are off by O(1)); with the ReLU it is the identity's output clamped at 0, bit for bit, and
// without it about half the outputs are negative (so the clamp was tested on real negatives).
TEST(ModelsLinearForward, CpuMatchesTheLayerFormula) {
  CpuDevice cpu(1);
  const LinearInputs in = linear_inputs(33, 40, 24, 0);
  const std::vector<float> with = linear_forward_on(cpu, in, true);
  const std::vector<float> without = linear_forward_on(cpu, in, false);
  int negative = 0, differ = 0, off_formula = 0;
  for (int r = 0; r < in.rows; ++r) {
    for (int o = 0; o < in.n_out; ++o) {
      double want = in.b[static_cast<size_t>(o)];
      for (int i = 0; i < in.n_in; ++i) {
        want += static_cast<double>(in.x[static_cast<size_t>(r) * in.n_in + i]) * in.w[static_cast<size_t>(o) * in.n_in + i];
      }
      const size_t k = static_cast<size_t>(r) * in.n_out + o;
      off_formula += !(std::fabs(without[k] - want) <= 1e-5 + 1e-4 * std::fabs(want));
      negative += without[k] < 0.0f;
      EXPECT_GE(with[k], 0.0f);
      differ += with[k] != std::max(without[k], 0.0f);
    }
  }
  EXPECT_EQ(off_formula, 0) << "of " << without.size() << " outputs differ from x·wᵀ + b";
  EXPECT_EQ(differ, 0) << "ReLU of the identity's output";
  EXPECT_GT(negative, static_cast<int>(without.size()) / 4);
  EXPECT_LT(negative, static_cast<int>(without.size()) * 3 / 4);
}

// CUDA's forward (cuBLASLt with the bias and ReLU in the epilogue, or the two passes where it
// has no kernel) against the CPU's: usual and odd shapes, an aligned and a 4-byte-aligned input.
TEST(ModelsCudaVsCpu, LinearForwardAgreesAtAnyShapeAndAlignment) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  auto gpu = cuda_device();
  CpuDevice cpu(1);
  struct Shape {
    int rows, n_in, n_out;
  };
  for (const Shape sh : {Shape{96, 784, 256}, Shape{1024, 512, 10}, Shape{5, 7, 3}}) {
    for (bool relu : {true, false}) {
      for (int offset : {0, 1}) {
        SCOPED_TRACE(std::to_string(sh.rows) + "x" + std::to_string(sh.n_in) + "->" + std::to_string(sh.n_out) +
                     (relu ? " relu" : " identity") + " offset " + std::to_string(offset));
        const LinearInputs in = linear_inputs(sh.rows, sh.n_in, sh.n_out, offset);
        expect_close(linear_forward_on(*gpu, in, relu), linear_forward_on(cpu, in, relu), "y");
      }
    }
  }
}

// The loss of a batch is its row losses summed in double on both backends (kernels.cu): a
// million identical rows (logits [0, 0], label 0: each row's loss is log 2) must give exactly
// the one row's loss as their mean. A float sum loses that: each of the GPU's 256 threads adds
// 4096 copies of 0.693f, rounding every add once its partial passes 2 — the old kernel's order,
// replayed in C on the CPU, ends 2.2e-5 (relative) below log 2.
float mean_loss_of_identical_rows(Device& dev, int rows) {
  const int cols = 2;
  const std::vector<float> z(static_cast<size_t>(rows) * cols, 0.0f);
  const std::vector<int32_t> y(static_cast<size_t>(rows), 0);
  DeviceBuffer<float> dz_d(dev, z.size()), z_d(dev, z.size()), out(dev, 2);
  DeviceBuffer<int32_t> y_d(dev, y.size());
  dev.upload(z_d.data(), z.data(), z_d.nbytes());
  dev.upload(y_d.data(), y.data(), y_d.nbytes());
  const float inv = 1.0f / static_cast<float>(rows);  // a power of two: exact
  dev.softmax_xent(z_d.data(), y_d.data(), rows, cols, inv, dz_d.data(), out.data(), out.data() + 1, inv);
  float host[2];
  dev.download(host, out.data(), sizeof host);
  EXPECT_EQ(host[0], host[1]) << "loss_scaled = sum / rows here, as loss_mean";
  return host[0];
}

void expect_mean_is_the_row_loss(Device& dev) {
  const float one_row = mean_loss_of_identical_rows(dev, 1);
  EXPECT_NEAR(one_row, std::log(2.0), 1e-6);
  EXPECT_EQ(mean_loss_of_identical_rows(dev, 1 << 20), one_row) << "the mean of 2^20 equal row losses";
}

TEST(ModelsLossSum, CpuMeanOfIdenticalRowsIsTheRowLoss) {
  CpuDevice cpu(1);
  expect_mean_is_the_row_loss(cpu);
}

TEST(ModelsCudaVsCpu, MeanOfIdenticalRowsIsTheRowLoss) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  auto gpu = cuda_device();
  expect_mean_is_the_row_loss(*gpu);
  CpuDevice cpu(1);
  // log 2 on both, up to the device's logf (CUDA's is within 1 ulp; 1 ulp of 0.69 is 6e-8).
  EXPECT_NEAR(mean_loss_of_identical_rows(*gpu, 1), mean_loss_of_identical_rows(cpu, 1), 6e-8);
}

TEST(ModelsCudaVsCpu, AccuracyCountAgrees) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  auto gpu = cuda_device();
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

// Device::add (gradient accumulation's db and loss slot) is one rounding of x + y per element,
// bit for bit, in every math mode: with --tf32 a 1×n×1 GEMM would first round x to TF32's
// 10-bit mantissa. x has full 24-bit mantissas here, so such a rounding shows.
void expect_add_is_one_rounding(Device& dev) {
  const int n = 1000;
  std::vector<float> x(n), y(n), want(n), got(n);
  const CounterRng r(21, 4);
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = 1.0f + r.uniform_symmetric(static_cast<uint64_t>(i), 0.5f) + 1e-7f * static_cast<float>(i % 7);
    y[static_cast<size_t>(i)] = r.uniform_symmetric(static_cast<uint64_t>(n + i), 1e-3f);
    want[static_cast<size_t>(i)] = y[static_cast<size_t>(i)] + x[static_cast<size_t>(i)];
  }
  DeviceBuffer<float> xd(dev, x.size()), yd(dev, y.size());
  dev.upload(xd.data(), x.data(), xd.nbytes());
  dev.upload(yd.data(), y.data(), yd.nbytes());
  dev.add(yd.data(), xd.data(), n);
  dev.download(got.data(), yd.data(), yd.nbytes());
  int differ = 0;
  for (int i = 0; i < n; ++i) differ += got[static_cast<size_t>(i)] != want[static_cast<size_t>(i)];
  EXPECT_EQ(differ, 0) << "of " << n << " sums";
}

TEST(ModelsDeviceAdd, CpuAddIsOneRounding) {
  CpuDevice cpu(1);
  expect_add_is_one_rounding(cpu);
}

TEST(ModelsCudaVsCpu, AddIsOneRoundingUnderTf32) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  for (bool tf32 : {false, true}) {
    SCOPED_TRACE(tf32 ? "tf32" : "fp32");
    auto gpu = cuda_device(tf32);
    expect_add_is_one_rounding(*gpu);
  }
}

// The transformer on CUDA (gpt_ops_cuda.cu: its kernels and strided-batched attention GEMMs)
// against the CPU (gpt_ops_cpu.cpp) on the same weights and tokens: logits, loss and every
// gradient within the MLP's tolerance above (both fp32, pedantic cuBLAS; summation order and
// the float-vs-double row sums of LayerNorm and softmax differ).
TEST(ModelsCudaVsCpu, TransformerStepAgrees) {
  if (cuda_device_count() == 0) {
    GTEST_SKIP() << (cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
  }
  auto gpu = cuda_device();
  CpuDevice cpu(1);
  const GptSpec spec = parse_gpt("gpt-tiny", 24);  // S = 24: not a multiple of a warp
  const int batch = 3;
  const Dataset d = make_synthetic_tokens(batch, spec.seq_len, spec.vocab, 5);
  struct Out {
    std::vector<float> logits, grads;
    float loss = 0.0f;
  };
  const auto run = [&](Device& dev) {
    Gpt m(dev, spec, batch);
    m.init_params(9);
    DeviceBuffer<float> x(dev, d.x.size());
    DeviceBuffer<int32_t> y(dev, d.y.size());
    dev.upload(x.data(), d.x.data(), d.x.size() * sizeof(float));
    dev.upload(y.data(), d.y.data(), d.y.size() * sizeof(int32_t));
    Out o;
    const float* logits = m.forward(x.data(), batch);
    o.logits.resize(static_cast<size_t>(batch) * spec.seq_len * spec.vocab);
    dev.download(o.logits.data(), logits, o.logits.size() * sizeof(float));
    m.loss(y.data(), batch, 1.0f / batch);
    m.backward(x.data(), batch, nullptr);
    o.loss = m.loss_mean();
    o.grads.resize(static_cast<size_t>(m.layout().param_buffer_count()));
    dev.download(o.grads.data(), m.grads(), o.grads.size() * sizeof(float));
    return o;
  };
  const Out g = run(*gpu), c = run(cpu);
  expect_close(g.logits, c.logits, "transformer logits");
  expect_close(g.grads, c.grads, "transformer gradients");
  EXPECT_NEAR(g.loss, c.loss, 1e-5 * std::fabs(c.loss));
}

}  // namespace
}  // namespace dpscale
