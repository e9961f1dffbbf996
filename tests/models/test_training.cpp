// test_training.cpp — training through the library lowers the loss: a learnable synthetic
// problem (labels from a fixed random "teacher"), the workshop's random-label synthetic data
// (memorised), plain SGD and momentum; and sgd_step is exactly w -= lr·g over the flat buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/data/dataset.h"
#include "models/elementwise.h"
#include "models/mlp.h"
#include "models/data/rng.h"

namespace dpscale {
namespace {

// Labels y = argmax(T·x) for a fixed random teacher T [classes, dim].
Dataset teacher_problem(int64_t n, int dim, int classes, uint64_t seed) {
  Dataset d = make_synthetic(n, dim, classes, seed);
  const CounterRng t(seed, 99);
  for (int64_t r = 0; r < n; ++r) {
    int best = 0;
    double best_v = -1e300;
    for (int c = 0; c < classes; ++c) {
      double v = 0;
      for (int i = 0; i < dim; ++i) v += t.normal(static_cast<uint64_t>(c * dim + i)) * d.x[static_cast<size_t>(r * dim + i)];
      if (v > best_v) best_v = v, best = c;
    }
    d.y[static_cast<size_t>(r)] = best;
  }
  return d;
}

struct Curve {
  double first_epoch_loss = 0, last_epoch_loss = 0, accuracy = 0;
};

Curve train(Mlp& m, const Dataset& d, int batch, int epochs, const SgdConfig& cfg) {
  Curve c;
  const int64_t steps = d.n / batch;
  for (int e = 0; e < epochs; ++e) {
    double sum = 0;
    for (int64_t b = 0; b < steps; ++b) {
      const float* x = d.x.data() + b * batch * d.dim;
      m.forward(x, batch);
      m.loss(d.y.data() + b * batch, batch, 1.0f / batch);
      m.backward(x, batch, nullptr);
      m.sgd_step(cfg);
      const float l = m.loss_mean();
      EXPECT_TRUE(std::isfinite(l));
      sum += l;
    }
    (e == 0 ? c.first_epoch_loss : c.last_epoch_loss) = sum / static_cast<double>(steps);
  }
  int64_t correct = 0;
  for (int64_t b = 0; b < steps; ++b) {
    m.forward(d.x.data() + b * batch * d.dim, batch);
    correct += m.count_correct(d.y.data() + b * batch, batch);
  }
  c.accuracy = static_cast<double>(correct) / static_cast<double>(steps * batch);
  return c;
}

TEST(ModelsTraining, LearnableSyntheticProblemLossFalls) {
  CpuDevice dev(1);
  const Dataset d = teacher_problem(1024, 16, 4, 42);
  Mlp m(dev, MlpSpec{"custom", {16, 32, 4}}, 32);
  m.init_params(1);
  const Curve c = train(m, d, 32, 10, SgdConfig{0.1f, 0.0f, 0.0f});
  std::printf("[training] teacher problem: epoch-1 loss %.4f -> epoch-10 loss %.4f, train accuracy %.3f\n",
              c.first_epoch_loss, c.last_epoch_loss, c.accuracy);
  EXPECT_LT(c.last_epoch_loss, 0.5 * c.first_epoch_loss);
  EXPECT_LT(c.last_epoch_loss, 0.4);  // chance is ln 4 = 1.386
  EXPECT_GT(c.accuracy, 0.85);        // chance is 0.25
}

TEST(ModelsTraining, MomentumAndWeightDecayAlsoLearn) {
  CpuDevice dev(1);
  const Dataset d = teacher_problem(1024, 16, 4, 7);
  Mlp m(dev, MlpSpec{"custom", {16, 32, 4}}, 32);
  m.init_params(2);
  const Curve c = train(m, d, 32, 6, SgdConfig{0.02f, 0.9f, 1e-4f});
  EXPECT_LT(c.last_epoch_loss, 0.5 * c.first_epoch_loss);
  EXPECT_GT(c.accuracy, 0.85);
}

TEST(ModelsTraining, WorkshopSyntheticDataIsMemorised) {
  // Random labels: nothing to generalise, but a model with enough capacity fits its 256 samples.
  CpuDevice dev(1);
  const Dataset d = make_synthetic(256, 64, 10, 42);
  Mlp m(dev, MlpSpec{"custom", {64, 128, 10}}, 32);
  m.init_params(42);
  const Curve c = train(m, d, 32, 30, SgdConfig{0.1f, 0.0f, 0.0f});
  EXPECT_LT(c.last_epoch_loss, 0.5 * c.first_epoch_loss);
  EXPECT_GT(c.accuracy, 0.9);
}

TEST(ModelsTraining, SgdStepIsExactlyTheElementwiseUpdate) {
  CpuDevice dev(1);
  const Dataset d = make_synthetic(8, 5, 3, 1);
  Mlp m(dev, MlpSpec{"custom", {5, 4, 3}}, 8);
  m.init_params(9);
  const std::vector<float> before = m.params_to_host();
  m.forward(d.x.data(), 8);
  m.loss(d.y.data(), 8, 1.0f / 8);
  m.backward(d.x.data(), 8, nullptr);
  const std::vector<float> g(m.grads(), m.grads() + m.layout().param_buffer_count());
  m.sgd_step(SgdConfig{0.5f, 0.0f, 0.0f});
  const std::vector<float> after = m.params_to_host();
  int64_t moved = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    float unused = 0;
    EXPECT_EQ(after[i], ew::sgd_update(before[i], g[i], &unused, 0.5f, 0.0f, 0.0f)) << i;
    moved += after[i] != before[i];
  }
  EXPECT_GT(moved, m.layout().n_params() / 2);
  // The loss slot (one past the parameter buffer) is not a parameter: SGD leaves the size alone.
  EXPECT_EQ(after.size(), static_cast<size_t>(m.layout().param_buffer_count()));
}

// Floats of `buf` (laid out by `L`, `n` long) outside every tensor that are not zero.
int64_t nonzero_padding(const ParamLayout& L, const float* buf, int64_t n) {
  std::vector<bool> tensor(static_cast<size_t>(n), false);
  for (const FlatTensor& t : L.tensors()) {
    for (int64_t j = 0; j < t.count; ++j) tensor[static_cast<size_t>(t.offset + j)] = true;
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !tensor[static_cast<size_t>(i)] && buf[i] != 0.0f;
  return bad;
}

// The tensors cuBLAS and the all-reduces get start on 256-byte boundaries in memory, and the
// padding between them stays zero through every pass that runs over the whole buffers: full and
// accumulated backward, SGD with momentum and weight decay, and weights from a host copy whose
// padding is not zero.
TEST(ModelsTraining, TensorsAre256ByteAlignedAndPaddingStaysZero) {
  CpuDevice dev(1);
  const Dataset d = make_synthetic(8, 5, 3, 1);
  Mlp m(dev, MlpSpec{"custom", {5, 4, 3}}, 8);
  const ParamLayout& L = m.layout();
  ASSERT_GT(L.param_buffer_count(), L.n_params()) << "this model must have padding";
  for (const FlatTensor& t : L.tensors()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.params() + t.offset) % 256, 0u) << t.name();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.grads() + t.offset) % 256, 0u) << t.name();
  }
  std::vector<float> dirty(static_cast<size_t>(L.param_buffer_count()), 7.0f);
  m.params_from_host(dirty);
  EXPECT_EQ(nonzero_padding(L, m.params(), L.param_buffer_count()), 0) << "params_from_host kept the caller's padding";
  m.init_params(3);
  for (int step = 0; step < 3; ++step) {
    m.forward(d.x.data(), 4);
    m.loss(d.y.data(), 4, 1.0f / 8);
    m.backward(d.x.data(), 4, nullptr);
    m.forward(d.x.data() + 4 * 5, 4);
    m.loss(d.y.data() + 4, 4, 1.0f / 8, true);
    m.backward(d.x.data() + 4 * 5, 4, nullptr, true);
    m.sgd_step(SgdConfig{0.1f, 0.9f, 0.01f});
  }
  EXPECT_EQ(nonzero_padding(L, m.grads(), L.param_buffer_count()), 0) << "gradient padding";
  EXPECT_NE(m.grads()[L.loss_slot()], 0.0f) << "the loss slot follows the last tensor";
  EXPECT_EQ(nonzero_padding(L, m.params(), L.param_buffer_count()), 0) << "parameter padding";
  EXPECT_EQ(nonzero_padding(L, m.params_to_host().data(), L.param_buffer_count()), 0);
}

}  // namespace
}  // namespace dpscale
