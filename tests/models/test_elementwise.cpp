// test_elementwise.cpp — the shared element-wise math (models/elementwise.h, the very functions
// the CUDA kernels call) on hand-computed cases, and the CPU backend's loops over them.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/elementwise.h"

namespace dpscale {
namespace {

TEST(ModelsElementwise, BiasRelu) {
  EXPECT_EQ(ew::bias_relu(1.5f, 0.5f), 2.0f);
  EXPECT_EQ(ew::bias_relu(-3.0f, 5.0f), 2.0f);
  EXPECT_EQ(ew::bias_relu(-1.0f, 0.5f), 0.0f);
  EXPECT_EQ(ew::bias_relu(0.25f, -0.25f), 0.0f);  // exactly zero stays zero
  EXPECT_FALSE(std::signbit(ew::bias_relu(-2.0f, 1.0f)));  // +0, not -0
  EXPECT_EQ(ew::bias_only(1.5f, -2.0f), -0.5f);
  EXPECT_EQ(ew::bias_only(-1.0f, 0.25f), -0.75f);
}

TEST(ModelsElementwise, ReluGrad) {
  EXPECT_EQ(ew::relu_grad(3.0f, 0.1f), 3.0f);
  EXPECT_EQ(ew::relu_grad(-2.0f, 5.0f), -2.0f);
  EXPECT_EQ(ew::relu_grad(3.0f, 0.0f), 0.0f);  // y = 0: the unit was off
  EXPECT_EQ(ew::relu_grad(3.0f, -1.0f), 0.0f);
}

TEST(ModelsElementwise, SoftmaxXentUniformLogits) {
  // z = 0: p = 1/4 each; loss = ln 4; dz = (p - onehot) · scale.
  const float z[4] = {0, 0, 0, 0};
  float dz[4];
  const float loss = ew::softmax_xent_row(z, 1, 4, 0.5f, dz);
  EXPECT_NEAR(loss, 1.3862943611f, 1e-6);
  EXPECT_NEAR(dz[0], 0.125f, 1e-7);
  EXPECT_NEAR(dz[1], -0.375f, 1e-7);
  EXPECT_NEAR(dz[2], 0.125f, 1e-7);
  EXPECT_NEAR(dz[3], 0.125f, 1e-7);
}

TEST(ModelsElementwise, SoftmaxXentKnownProbabilities) {
  // z = ln(1, 2, 3, 4): Σ e^z = 10, p = (0.1, 0.2, 0.3, 0.4); label 3: loss = -ln 0.4.
  const float z[4] = {0.0f, 0.69314718f, 1.09861229f, 1.38629436f};
  float dz[4];
  const float loss = ew::softmax_xent_row(z, 3, 4, 1.0f, dz);
  EXPECT_NEAR(loss, 0.91629073f, 1e-6);
  EXPECT_NEAR(dz[0], 0.1f, 1e-6);
  EXPECT_NEAR(dz[1], 0.2f, 1e-6);
  EXPECT_NEAR(dz[2], 0.3f, 1e-6);
  EXPECT_NEAR(dz[3], -0.6f, 1e-6);
  // Same logits, label 0: loss = -ln 0.1.
  EXPECT_NEAR(ew::softmax_xent_row(z, 0, 4, 1.0f, dz), 2.30258509f, 1e-6);
  EXPECT_NEAR(dz[0], -0.9f, 1e-6);
}

TEST(ModelsElementwise, SoftmaxXentIsStableForLargeLogits) {
  // exp(1000) overflows float: a naive softmax gives inf/NaN. Shifted, it equals z = (0, 1, 2):
  // loss(label 0) = ln(1 + e + e²) = 2.40760596, p = (0.09003057, 0.24472847, 0.66524096).
  const float z[3] = {1000.0f, 1001.0f, 1002.0f};
  float dz[3];
  const float loss = ew::softmax_xent_row(z, 0, 3, 1.0f, dz);
  EXPECT_NEAR(loss, 2.40760596f, 1e-4);
  EXPECT_NEAR(dz[0], 0.09003057f - 1.0f, 1e-6);
  EXPECT_NEAR(dz[1], 0.24472847f, 1e-6);
  EXPECT_NEAR(dz[2], 0.66524096f, 1e-6);

  const float neg[2] = {-1000.0f, -1000.0f};  // exp underflows to 0 naively: 0/0
  float dneg[2];
  EXPECT_NEAR(ew::softmax_xent_row(neg, 1, 2, 1.0f, dneg), 0.69314718f, 1e-4);  // float ulp at 1000 is 6e-5
  EXPECT_NEAR(dneg[0], 0.5f, 1e-7);
  EXPECT_NEAR(dneg[1], -0.5f, 1e-7);

  const float far[2] = {0.0f, 200.0f};  // the label's probability is e^-200: loss 200, finite
  float dfar[2];
  EXPECT_NEAR(ew::softmax_xent_row(far, 0, 2, 1.0f, dfar), 200.0f, 1e-3);
  EXPECT_NEAR(dfar[0], -1.0f, 1e-7);
  EXPECT_NEAR(dfar[1], 1.0f, 1e-7);
}

TEST(ModelsElementwise, ArgmaxFirstOnTies) {
  const float a[4] = {1, 3, 3, 2};
  EXPECT_EQ(ew::argmax_row(a, 4), 1);
  const float b[3] = {5, 5, 5};
  EXPECT_EQ(ew::argmax_row(b, 3), 0);
  const float c[3] = {0, 1, 1};
  EXPECT_EQ(ew::argmax_row(c, 3), 1);
  const float d[2] = {-1, -2};
  EXPECT_EQ(ew::argmax_row(d, 2), 0);
  const float e[4] = {-3, -1, -2, -1};
  EXPECT_EQ(ew::argmax_row(e, 4), 1);
  const float f[1] = {7};
  EXPECT_EQ(ew::argmax_row(f, 1), 0);
}

TEST(ModelsElementwise, SgdPlain) {
  float v = 123.0f;
  EXPECT_FLOAT_EQ(ew::sgd_update(1.0f, 0.5f, &v, 0.1f, 0.0f, 0.0f), 0.95f);
  EXPECT_EQ(v, 123.0f);  // momentum 0: the velocity is untouched
  // Weight decay: g' = 0.5 + 0.1·1 = 0.6; w = 1 - 0.1·0.6 = 0.94.
  EXPECT_FLOAT_EQ(ew::sgd_update(1.0f, 0.5f, &v, 0.1f, 0.0f, 0.1f), 0.94f);
  EXPECT_EQ(v, 123.0f);
  EXPECT_FLOAT_EQ(ew::sgd_update(-2.0f, -1.0f, &v, 0.5f, 0.0f, 0.0f), -1.5f);
}

TEST(ModelsElementwise, SgdMomentumAndWeightDecayMatchTorchOverTwoSteps) {
  // torch.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01), w0 = 1, grads 0.5 then 0.2:
  //   step 1: d = 0.5 + 0.01·1 = 0.51;       buf = d = 0.51;                w = 1 - 0.051 = 0.949
  //   step 2: d = 0.2 + 0.01·0.949 = 0.20949; buf = 0.9·0.51 + d = 0.66849;  w = 0.949 - 0.066849 = 0.882151
  float v = 0.0f, w = 1.0f;
  w = ew::sgd_update(w, 0.5f, &v, 0.1f, 0.9f, 0.01f);
  EXPECT_NEAR(v, 0.51f, 1e-7);
  EXPECT_NEAR(w, 0.949f, 1e-7);
  w = ew::sgd_update(w, 0.2f, &v, 0.1f, 0.9f, 0.01f);
  EXPECT_NEAR(v, 0.66849f, 1e-6);
  EXPECT_NEAR(w, 0.882151f, 1e-6);

  // Momentum without weight decay: buf = 0.5, w = 0.95; buf = 0.45 + 0.2 = 0.65, w = 0.885.
  v = 0.0f;
  w = ew::sgd_update(1.0f, 0.5f, &v, 0.1f, 0.9f, 0.0f);
  w = ew::sgd_update(w, 0.2f, &v, 0.1f, 0.9f, 0.0f);
  EXPECT_NEAR(v, 0.65f, 1e-7);
  EXPECT_NEAR(w, 0.885f, 1e-7);
}

// The CPU backend's loops over those functions, on tiny buffers.
TEST(ModelsCpuDevice, ElementwiseOpsOverBuffers) {
  CpuDevice dev(1);
  std::vector<float> y = {1, -2, 3, -4, 0.5f, -0.5f};  // [2, 3]
  const std::vector<float> bias = {0.5f, 1.0f, -3.5f};
  std::vector<float> y2 = y;
  dev.bias_act(y.data(), bias.data(), 2, 3, true);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 0, 0, 0, 1.5f, 0}));
  dev.bias_act(y2.data(), bias.data(), 2, 3, false);
  EXPECT_EQ(y2, (std::vector<float>{1.5f, -1, -0.5f, -3.5f, 1.5f, -4}));

  std::vector<float> dx = {1, 2, 3, 4, 5, 6};
  dev.relu_backward(dx.data(), y.data(), 6);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 0, 0, 5, 0}));

  std::vector<float> col(3, 99.0f);
  const std::vector<float> a = {1, 2, 3, 10, 20, 30};
  dev.column_sum(a.data(), 2, 3, col.data());
  EXPECT_EQ(col, (std::vector<float>{11, 22, 33}));

  // Two rows: uniform logits (loss ln 2) and ln(1, 3) with label 1 (loss -ln 0.75).
  const std::vector<float> z = {0, 0, 0, 1.0986123f};
  const std::vector<int32_t> labels = {0, 1};
  std::vector<float> dz(4);
  float mean = 0, scaled = 0;
  dev.softmax_xent(z.data(), labels.data(), 2, 2, 0.5f, dz.data(), &mean, &scaled, 0.5f);
  const double l0 = std::log(2.0), l1 = -std::log(0.75);
  EXPECT_NEAR(mean, (l0 + l1) / 2, 1e-6);
  EXPECT_NEAR(scaled, (l0 + l1) * 0.5, 1e-6);
  EXPECT_NEAR(dz[0], -0.25f, 1e-7);
  EXPECT_NEAR(dz[1], 0.25f, 1e-7);
  EXPECT_NEAR(dz[2], 0.125f, 1e-6);
  EXPECT_NEAR(dz[3], -0.125f, 1e-6);
  EXPECT_EQ(dev.count_correct(z.data(), labels.data(), 2, 2), 2);  // row 0 ties -> class 0
  const std::vector<int32_t> wrong = {1, 0};
  EXPECT_EQ(dev.count_correct(z.data(), wrong.data(), 2, 2), 0);

  std::vector<float> w = {1, 1}, g = {0.5f, 0.2f}, v = {0, 0};
  dev.sgd(w.data(), g.data(), v.data(), 2, 0.1f, 0.9f, 0.01f, nullptr);
  EXPECT_NEAR(w[0], 0.949f, 1e-7);
  EXPECT_NEAR(v[0], 0.51f, 1e-7);
  dev.sgd(w.data(), g.data(), nullptr, 2, 0.1f, 0.0f, 0.0f, nullptr);  // no velocity needed
  EXPECT_NEAR(w[0], 0.899f, 1e-6);
}

TEST(ModelsCpuDevice, RowMajorGemmWithTransposes) {
  CpuDevice dev(1);
  // A [2,3], B [3,2]: C = A·B = [[1·1+2·3+3·5, 1·2+2·4+3·6], [4·1+5·3+6·5, 4·2+5·4+6·6]]
  const std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {1, 2, 3, 4, 5, 6};
  std::vector<float> C(4, 100.0f);
  dev.gemm(false, false, 2, 2, 3, 1.0f, A.data(), 3, B.data(), 2, 0.0f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>{22, 28, 49, 64}));
  // A·Aᵀ: [2,2] = [[14, 32], [32, 77]]; β = 1 accumulates onto C.
  dev.gemm(false, true, 2, 2, 3, 1.0f, A.data(), 3, A.data(), 3, 1.0f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>{36, 60, 81, 141}));
  // Aᵀ·A: [3,3], first row [17, 22, 27].
  std::vector<float> D(9);
  dev.gemm(true, false, 3, 3, 2, 1.0f, A.data(), 3, A.data(), 3, 0.0f, D.data(), 3);
  EXPECT_EQ(D[0], 17);
  EXPECT_EQ(D[1], 22);
  EXPECT_EQ(D[2], 27);
  EXPECT_EQ(D[8], 45);
}

}  // namespace
}  // namespace dpscale
