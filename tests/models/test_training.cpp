// test_training.cpp — training through the library lowers the loss: a learnable synthetic
// problem (labels from a fixed random "teacher"), the workshop's random-label synthetic data
// (memorised), plain SGD and momentum; and sgd_step is exactly w -= lr·g over the flat buffer.
#include <gtest/gtest.h>

#include <cmath>

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
  const std::vector<float> g(m.grads(), m.grads() + m.layout().n_params());
  m.sgd_step(SgdConfig{0.5f, 0.0f, 0.0f});
  const std::vector<float> after = m.params_to_host();
  int64_t moved = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    float unused = 0;
    EXPECT_EQ(after[i], ew::sgd_update(before[i], g[i], &unused, 0.5f, 0.0f, 0.0f)) << i;
    moved += after[i] != before[i];
  }
  EXPECT_GT(moved, static_cast<int64_t>(before.size()) / 2);
  // The loss slot (one past the parameters) is not a parameter: SGD leaves the weights' size alone.
  EXPECT_EQ(after.size(), static_cast<size_t>(m.layout().n_params()));
}

}  // namespace
}  // namespace dpscale
