// test_gradcheck.cpp — Mlp::forward/loss/backward (float, CPU backend) against an independent
// double-precision reference written here: forward, softmax cross-entropy (mean over the batch),
// and central finite differences of that loss in double (FD error ~1e-10, far below float's).
//
// Every parameter's analytic gradient must satisfy |g - ref| <= kAtol + kRtol·|ref|. The
// tolerance is checked to be meaningful: the achieved error is printed and asserted to sit well
// inside it, and deliberately wrong gradients (one element off by 1%, a wrongly scaled loss) fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/mlp.h"
#include "models/data/rng.h"
#include "tests/models/gradcheck.h"

namespace dpscale {
namespace {

constexpr double kAtol = 1e-6;  // gradients here are ~1e-3..1e-1; float error ~1e-8 absolute
constexpr double kRtol = 1e-3;  // the achieved relative error is ~1e-6 (asserted below < 1e-4)
constexpr double kFdStep = 1e-5;

// ---- the independent double reference ----
struct Reference {
  std::vector<int> widths;
  std::vector<std::pair<int64_t, int64_t>> w_b_offset;  // per layer: weight and bias offsets
  int batch;
  std::vector<double> x;
  std::vector<int32_t> y;

  // Forward + mean softmax cross-entropy. Optionally returns the logits and the smallest
  // |pre-activation| of the hidden layers (how close a ReLU kink is).
  double loss(const std::vector<double>& p, std::vector<double>* logits = nullptr,
              double* min_abs_hidden_z = nullptr) const {
    std::vector<double> a = x;
    const int n_layers = static_cast<int>(widths.size()) - 1;
    double min_z = std::numeric_limits<double>::infinity();
    for (int l = 0; l < n_layers; ++l) {
      const int in = widths[l], out = widths[l + 1];
      const double* W = p.data() + w_b_offset[l].first;  // [out, in] row-major
      const double* b = p.data() + w_b_offset[l].second;
      std::vector<double> z(static_cast<size_t>(batch) * out);
      for (int r = 0; r < batch; ++r) {
        for (int o = 0; o < out; ++o) {
          double s = b[o];
          for (int i = 0; i < in; ++i) s += a[r * in + i] * W[o * in + i];
          if (l + 1 < n_layers) {
            min_z = std::min(min_z, std::abs(s));
            s = s > 0 ? s : 0.0;
          }
          z[r * out + o] = s;
        }
      }
      a = std::move(z);
    }
    const int k = widths.back();
    double total = 0.0;
    for (int r = 0; r < batch; ++r) {
      double m = a[r * k];
      for (int j = 1; j < k; ++j) m = std::max(m, a[r * k + j]);
      double sum = 0.0;
      for (int j = 0; j < k; ++j) sum += std::exp(a[r * k + j] - m);
      total += std::log(sum) + m - a[r * k + y[r]];
    }
    if (logits) *logits = a;
    if (min_abs_hidden_z) *min_abs_hidden_z = min_z;
    return total / batch;
  }

  std::vector<double> fd_gradient(const std::vector<double>& p) const {
    return gradcheck::central_differences(p, kFdStep, [this](const std::vector<double>& q) { return loss(q); });
  }
};

using gradcheck::Mismatch;

Mismatch compare(const std::vector<float>& g, const std::vector<double>& ref, bool print = true) {
  return gradcheck::compare(g, ref, {kAtol, kRtol, 1e-4}, print);  // max_rel over |ref| > 1e-4
}

// A tiny model and batch, its float gradients from Mlp, and the double reference.
struct Fixture {
  CpuDevice dev{1};
  Mlp model;
  Reference ref;
  std::vector<float> xf;
  std::vector<double> p;  // the float parameters, widened, packed (pack() below)
  std::vector<int64_t> packed_offset;  // per tensor index: where pack() puts it

  Fixture(const std::vector<int>& widths, int batch, uint64_t seed)
      : model(dev, MlpSpec{"custom", widths}, batch) {
    model.init_params(seed);
    ref.widths = widths;
    ref.batch = batch;
    int64_t at = 0;
    for (const FlatTensor& t : model.layout().tensors()) {
      packed_offset.push_back(at);
      at += t.count;
    }
    for (int l = 0; l + 1 < static_cast<int>(widths.size()); ++l) {
      ref.w_b_offset.emplace_back(packed_offset[static_cast<size_t>(model.layout().weight(l).index)],
                                  packed_offset[static_cast<size_t>(model.layout().bias(l).index)]);
    }
    const CounterRng rng(seed, 1234);
    xf.resize(static_cast<size_t>(batch) * widths[0]);
    for (size_t i = 0; i < xf.size(); ++i) xf[i] = rng.normal(i);
    ref.x.assign(xf.begin(), xf.end());
    for (int r = 0; r < batch; ++r) ref.y.push_back(static_cast<int32_t>(rng.below(1000 + r, widths.back())));
    const std::vector<float> pf = pack(model.params_to_host().data());
    p.assign(pf.begin(), pf.end());
  }

  // The tensors of a flat buffer in layout order without the layout's padding: every element a
  // parameter, so the reference's finite differences and the counts below see no padding.
  std::vector<float> pack(const float* flat) const {
    std::vector<float> v;
    for (const FlatTensor& t : model.layout().tensors()) v.insert(v.end(), flat + t.offset, flat + t.offset + t.count);
    return v;
  }

  // forward + loss(scale) + backward; returns the n_params gradients, packed.
  std::vector<float> analytic(float grad_scale) {
    model.forward(xf.data(), ref.batch);
    model.loss(ref.y.data(), ref.batch, grad_scale);
    model.backward(xf.data(), ref.batch, nullptr);
    return pack(model.grads());
  }
};

void check_model(const std::vector<int>& widths, int batch, uint64_t seed) {
  Fixture f(widths, batch, seed);
  std::vector<double> ref_logits;
  double min_z = 0.0;
  const double ref_loss = f.ref.loss(f.p, &ref_logits, &min_z);
  // No hidden pre-activation within reach of the FD step: central differences are then exact
  // up to O(h²), not straddling a ReLU kink.
  ASSERT_GT(min_z, 1e-3) << "a ReLU input sits near 0: choose another seed";

  // Logits and loss of the float forward against the double reference.
  const float* logits = f.model.forward(f.xf.data(), batch);
  for (size_t i = 0; i < ref_logits.size(); ++i) {
    EXPECT_NEAR(logits[i], ref_logits[i], 1e-5 + 1e-5 * std::abs(ref_logits[i])) << "logit " << i;
  }
  f.model.loss(f.ref.y.data(), batch, 1.0f / batch);
  EXPECT_NEAR(f.model.loss_mean(), ref_loss, 1e-6 * ref_loss);
  EXPECT_NEAR(f.model.loss_slot_value(), ref_loss, 1e-6 * ref_loss);  // Σ loss · (1/B)

  const std::vector<double> fd = f.ref.fd_gradient(f.p);
  const std::vector<float> g = f.analytic(1.0f / batch);
  const Mismatch m = compare(g, fd);
  std::printf("[gradcheck] widths %zu layers, %zu params, batch %d: max |g-ref| = %.3g, max rel = %.3g "
              "(tolerance %.0e + %.0e·|ref|)\n",
              widths.size() - 1, fd.size(), batch, m.max_abs, m.max_rel, kAtol, kRtol);
  EXPECT_EQ(m.count, 0) << "first mismatch at parameter " << m.first;
  // The tolerance is loose relative to what is achieved, not what barely passes.
  EXPECT_LT(m.max_rel, 1e-4);
  EXPECT_LT(m.max_abs, 1e-6);
  // The reference is not trivially small: most gradients are far above the absolute floor.
  int64_t large = 0;
  for (double v : fd) large += std::abs(v) > 100 * kAtol;
  EXPECT_GT(large, static_cast<int64_t>(fd.size()) / 2);
}

TEST(ModelsGradCheck, ThreeLayerModelMatchesCentralDifferences) { check_model({6, 5, 4, 3}, 4, 11); }

TEST(ModelsGradCheck, DeeperModelBatchOfEightMatchesCentralDifferences) { check_model({9, 8, 7, 6, 4}, 8, 5); }

TEST(ModelsGradCheck, SingleRowBatch) { check_model({4, 6, 3}, 1, 3); }

TEST(ModelsGradCheck, CheckIsSensitive) {
  Fixture f({6, 5, 4, 3}, 4, 11);
  const std::vector<double> fd = f.ref.fd_gradient(f.p);
  std::vector<float> g = f.analytic(1.0f / 4);
  ASSERT_EQ(compare(g, fd).count, 0);

  // One element of the first-layer weight gradient off by 1% (10x the relative tolerance).
  size_t victim = 0;
  for (size_t i = static_cast<size_t>(f.packed_offset[static_cast<size_t>(f.model.layout().weight(0).index)]);
       i < fd.size(); ++i) {
    if (std::abs(fd[i]) > 1e-3) {
      victim = i;
      break;
    }
  }
  ASSERT_GT(victim, 0u);
  std::vector<float> bad = g;
  bad[victim] *= 1.01f;
  Mismatch m = compare(bad, fd, false);
  EXPECT_EQ(m.count, 1);
  EXPECT_EQ(m.first, static_cast<int64_t>(victim));

  // A NaN is a mismatch, not a pass.
  bad = g;
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(compare(bad, fd, false).count, 1);

  // A plausible bug: the loss scaled by 1/(B-1) instead of 1/B. Every non-zero gradient is off.
  const std::vector<float> wrong_scale = f.analytic(1.0f / 3);
  m = compare(wrong_scale, fd, false);
  EXPECT_GT(m.count, static_cast<int64_t>(fd.size()) / 2);
}

// Gradient tensors come out in layout order, each complete when its hook fires; backward
// overwrites (β = 0) rather than accumulating into whatever the buffer held.
class Recorder final : public GradListener {
 public:
  Recorder(const ParamLayout& l, const float* g) : layout_(l), grads_(g) {}
  void on_grad_ready(const FlatTensor& t) override {
    EXPECT_EQ(t.index, static_cast<int>(seen.size()));
    for (const FlatTensor& u : layout_.tensors()) {
      for (int64_t i = 0; i < u.count; ++i) {
        const float v = grads_[u.offset + i];
        if (u.index <= t.index) {
          ASSERT_TRUE(std::isfinite(v)) << u.name() << " not written when " << t.name() << " is ready";
        } else {
          ASSERT_TRUE(std::isnan(v)) << u.name() << " written before " << t.name() << " is ready";
        }
      }
    }
    seen.push_back(t.index);
  }
  std::vector<int> seen;

 private:
  const ParamLayout& layout_;
  const float* grads_;
};

TEST(ModelsBackward, HooksFireInLayoutOrderAndGradientsOverwrite) {
  Fixture f({6, 5, 4, 3}, 4, 11);
  const std::vector<float> clean = f.analytic(0.25f);
  const int64_t n = f.model.layout().param_buffer_count();

  f.model.forward(f.xf.data(), 4);
  f.model.loss(f.ref.y.data(), 4, 0.25f);
  std::fill(f.model.grads(), f.model.grads() + n, std::numeric_limits<float>::quiet_NaN());
  Recorder rec(f.model.layout(), f.model.grads());
  f.model.backward(f.xf.data(), 4, &rec);
  EXPECT_EQ(rec.seen, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  const std::vector<float> got = f.pack(f.model.grads());
  ASSERT_EQ(got.size(), clean.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], clean[i]) << i;

  // Garbage in the buffer does not leak into the next backward.
  std::fill(f.model.grads(), f.model.grads() + n, 7.0f);
  EXPECT_EQ(f.analytic(0.25f), clean);
}

// K equal shards, each scaled by 1/B (the global batch) and summed, give the full-batch
// gradient: the identity the data-parallel trainers rest on.
TEST(ModelsBackward, ShardGradientsSumToFullBatchGradient) {
  Fixture f({6, 5, 4, 3}, 8, 7);
  const std::vector<float> full = f.analytic(1.0f / 8);
  const int in = 6;
  std::vector<double> sum(full.size(), 0.0);
  for (int shard = 0; shard < 2; ++shard) {
    const float* x = f.xf.data() + shard * 4 * in;
    f.model.forward(x, 4);
    f.model.loss(f.ref.y.data() + shard * 4, 4, 1.0f / 8);
    f.model.backward(x, 4, nullptr);
    const std::vector<float> g = f.pack(f.model.grads());
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += g[i];
  }
  for (size_t i = 0; i < full.size(); ++i) EXPECT_NEAR(sum[i], full[i], 1e-6 + 1e-5 * std::abs(full[i])) << i;
}

}  // namespace
}  // namespace dpscale
