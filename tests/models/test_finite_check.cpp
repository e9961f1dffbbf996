// test_finite_check.cpp — non-finite detection in the model library: the bit-test
// predicate against every class of float, the first-bad-index scan, the naming of a tensor and
// element in a flat buffer, the CPU device's flag (never cleared by a later finite buffer), the
// check folded into the optimizer pass (the same update bit for bit, every kind of bad value),
// the Mlp's per-step check through read_losses(), the standalone check of steps without an
// update, and the checkpoint reader and writer refusing non-finite weights (the writer leaving
// no file behind).
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "models/cpu/cpu_device.h"
#include "models/data/rng.h"
#include "core/errors.h"
#include "models/finite_check.h"
#include "models/io/npy.h"
#include "models/io/safetensors.h"
#include "models/mlp.h"

namespace fs = std::filesystem;

namespace dpscale {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ModelsFinite, PredicateOnEveryClassOfFloat) {
  for (float v : {0.0f, -0.0f, 1.0f, -3.5f, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min()}) {
    EXPECT_TRUE(ew::is_finite(v)) << v;
  }
  for (float v : {kNan, -kNan, std::numeric_limits<float>::signaling_NaN(), kInf, -kInf}) {
    EXPECT_FALSE(ew::is_finite(v)) << v;
  }
  // A NaN with an odd payload is still a NaN: all exponent bits set, mantissa non-zero.
  uint32_t bits = 0x7f800001u;
  float odd;
  std::memcpy(&odd, &bits, 4);
  EXPECT_FALSE(ew::is_finite(odd));
  EXPECT_EQ(nonfinite_name(kNan), "nan");
  EXPECT_EQ(nonfinite_name(kInf), "inf");
  EXPECT_EQ(nonfinite_name(-kInf), "-inf");
}

TEST(ModelsFinite, FirstNonfiniteIndex) {
  std::vector<float> x(1000, 1.0f);
  EXPECT_EQ(first_nonfinite(x.data(), 1000), -1);
  x[997] = -kInf;
  x[998] = kNan;
  EXPECT_EQ(first_nonfinite(x.data(), 1000), 997);
  EXPECT_EQ(first_nonfinite(x.data(), 997), -1);  // the range is half-open
}

TEST(ModelsFinite, NamesTheTensorAndElementInForwardOrder) {
  const ParamLayout layout(MlpSpec{"custom", {4, 3, 2}});
  std::vector<float> buf(static_cast<size_t>(layout.grad_buffer_count()), 0.5f);
  EXPECT_EQ(describe_first_nonfinite(layout, buf.data()), "");
  // layers.1.weight comes first in the flat (backward-ordered) buffer, but the report names
  // layers.0 first: the layer nearest the data.
  buf[static_cast<size_t>(layout.weight(1).offset + 3)] = kNan;  // [1, 0] of a [2, 3] weight
  EXPECT_EQ(describe_first_nonfinite(layout, buf.data()), "layers.1.weight[1, 0] is nan");
  buf[static_cast<size_t>(layout.weight(0).offset + 7)] = -kInf;  // [1, 3] of a [3, 4] weight
  EXPECT_EQ(describe_first_nonfinite(layout, buf.data()), "layers.0.weight[1, 3] is -inf");
  buf[static_cast<size_t>(layout.weight(0).offset + 7)] = 0.0f;
  buf[static_cast<size_t>(layout.weight(1).offset + 3)] = 0.0f;
  buf[static_cast<size_t>(layout.bias(1).offset + 1)] = kInf;
  EXPECT_EQ(describe_first_nonfinite(layout, buf.data()), "layers.1.bias[1] is inf");
  // The loss slot is no tensor: a NaN there is not reported by this scan.
  buf[static_cast<size_t>(layout.bias(1).offset + 1)] = 0.0f;
  buf.back() = kNan;
  EXPECT_EQ(describe_first_nonfinite(layout, buf.data()), "");
}

TEST(ModelsFinite, CpuFlagIsSetAndNeverCleared) {
  CpuDevice dev(1);
  std::vector<float> good(4099, 2.0f), bad = good;
  bad[4098] = kNan;  // the last element: the loop must cover the tail
  float flag = 0.0f;
  dev.flag_nonfinite(good.data(), 4099, &flag);
  EXPECT_EQ(flag, 0.0f);
  dev.flag_nonfinite(bad.data(), 4099, &flag);
  EXPECT_EQ(flag, 1.0f);
  dev.flag_nonfinite(good.data(), 4099, &flag);  // a later finite buffer leaves it set
  EXPECT_EQ(flag, 1.0f);
  EXPECT_GT(dev.memory_bytes(), uint64_t{1} << 26);
}

// The optimizer pass with the finite check folded in (Device::sgd with a flag): the same
// weights and momentum, bit for bit, as the pass without it — the check only reads — and the flag
// for a non-finite gradient, a non-finite weight going in (it stays non-finite coming out) and an
// update that overflows; a clean pass leaves the flag alone (negative control), with and without
// momentum, over a length whose tail is not a multiple of any vector width.
TEST(ModelsFinite, CpuCheckedUpdateIsTheUpdateAndFlagsEveryKind) {
  CpuDevice dev(1);
  constexpr int64_t n = 4099;
  std::vector<float> g0(n), w0(n);
  for (int64_t i = 0; i < n; ++i) {
    g0[static_cast<size_t>(i)] = 0.001f * static_cast<float>(i % 17) - 0.008f;
    w0[static_cast<size_t>(i)] = 0.5f - 0.0002f * static_cast<float>(i);
  }
  for (const float momentum : {0.0f, 0.9f}) {
    SCOPED_TRACE(momentum);
    std::vector<float> w_plain = w0, w_checked = w0, v_plain(n, 0.01f), v_checked(n, 0.01f);
    float flag = 0.0f;
    dev.sgd(w_plain.data(), g0.data(), v_plain.data(), n, 0.1f, momentum, 0.01f, nullptr);
    dev.sgd(w_checked.data(), g0.data(), v_checked.data(), n, 0.1f, momentum, 0.01f, &flag);
    EXPECT_EQ(flag, 0.0f) << "a clean pass raised the flag";
    EXPECT_EQ(std::memcmp(w_plain.data(), w_checked.data(), n * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(v_plain.data(), v_checked.data(), n * sizeof(float)), 0);

    struct Bad {
      const char* what;
      bool in_gradient;
      int64_t at;
      float value, lr;
    };
    // The check tests the weight the update writes: a non-finite gradient reaches it whatever
    // the rate (0·inf and 0·NaN are NaN), with weight decay or without.
    for (const Bad b : {Bad{"nan gradient", true, n - 1, kNan, 0.1f}, Bad{"inf gradient", true, 0, kInf, 0.1f},
                        Bad{"-inf gradient at rate 0", true, 11, -kInf, 0.0f}, Bad{"nan gradient at rate 0", true, 12, kNan, 0.0f},
                        Bad{"nan weight", false, 2048, kNan, 0.1f}, Bad{"-inf weight", false, 7, -kInf, 0.1f},
                        Bad{"overflowing update", true, 3, 1e30f, 1e30f}}) {
      for (const float decay : {0.0f, 0.01f}) {
        SCOPED_TRACE(std::string(b.what) + ", weight decay " + std::to_string(decay));
        std::vector<float> g = g0, w = w0, v(n, 0.0f);
        (b.in_gradient ? g : w)[static_cast<size_t>(b.at)] = b.value;
        float f = 0.0f;
        dev.sgd(w.data(), g.data(), v.data(), n, b.lr, momentum, decay, &f);
        EXPECT_EQ(f, 1.0f);
        EXPECT_FALSE(ew::is_finite(w[static_cast<size_t>(b.at)]));
      }
    }
  }
}

// One step of the library's loop, the check folded into the update; returns what read_losses()
// saw.
StepLosses step(Mlp& m, const std::vector<float>& x, const std::vector<int32_t>& y, int batch, float lr) {
  m.forward(x.data(), batch);
  m.loss(y.data(), batch, 1.0f / static_cast<float>(batch));
  m.backward(x.data(), batch, nullptr);
  m.sgd_step(SgdConfig{lr}, /*check_finite=*/true);
  return m.read_losses();
}

TEST(ModelsFinite, MlpStepFlagsAndNamesANonfiniteGradient) {
  CpuDevice dev(1);
  const MlpSpec spec{"custom", {6, 5, 3}};
  Mlp m(dev, spec, 4);
  m.init_params(3);
  const CounterRng r(1, 1);
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = r.normal(i);
  const std::vector<int32_t> y = {0, 1, 2, 1};
  const StepLosses ok = step(m, x, y, 4, 0.01f);
  EXPECT_FALSE(ok.nonfinite);
  EXPECT_TRUE(std::isfinite(ok.global));
  EXPECT_EQ(m.describe_nonfinite(), "");

  // A NaN in row 2, column 4 of the input: ReLU maps the row's NaN activations to 0, so the loss
  // stays finite — the case the loss check alone misses — but dW0[:, 4] = dYᵀ·X is NaN.
  x[2 * 6 + 4] = kNan;
  const StepLosses hit = step(m, x, y, 4, 0.01f);
  EXPECT_TRUE(std::isfinite(hit.global)) << "this case is meant to keep the loss finite";
  EXPECT_TRUE(hit.nonfinite);
  const std::string what = m.describe_nonfinite();
  EXPECT_EQ(what.rfind("gradient layers.0.weight[", 0), 0u) << what;
  EXPECT_NE(what.find(", 4] is nan"), std::string::npos) << what;

  // The flag is per step: a clean step after fresh weights reads false again (negative control).
  m.init_params(3);
  x[2 * 6 + 4] = 0.5f;
  EXPECT_FALSE(step(m, x, y, 4, 0.01f).nonfinite);
}

// A step without an update (warm-up) checks in passes of its own, gradients and weights.
TEST(ModelsFinite, MlpStandaloneCheckForStepsWithoutUpdate) {
  CpuDevice dev(1);
  Mlp m(dev, MlpSpec{"custom", {6, 5, 3}}, 4);
  m.init_params(3);
  std::vector<float> x(24, 0.25f);
  const std::vector<int32_t> y = {0, 1, 2, 1};
  m.forward(x.data(), 4);
  m.loss(y.data(), 4, 0.25f);
  m.backward(x.data(), 4, nullptr);
  m.check_finite();
  EXPECT_FALSE(m.read_losses().nonfinite);
  m.params()[m.layout().bias(0).offset + 2] = kInf;  // host-visible memory: a weight gone bad
  m.check_finite();
  EXPECT_TRUE(m.read_losses().nonfinite);
  EXPECT_EQ(m.describe_nonfinite(), "parameter layers.0.bias[2] is inf");
  EXPECT_FALSE(m.read_losses().nonfinite) << "the flag is lowered once read";
}

TEST(ModelsFinite, MlpStepFlagsAnOverflowingUpdate) {
  // Finite gradients, but lr·g overflows: the update's own check sees the weight it wrote in the
  // same step, before the next forward could turn it into a NaN loss.
  CpuDevice dev(1);
  Mlp m(dev, MlpSpec{"custom", {6, 5, 3}}, 4);
  m.init_params(3);
  std::vector<float> x(24, 1000.0f);
  const std::vector<int32_t> y = {0, 1, 2, 1};
  const StepLosses l = step(m, x, y, 4, 3e38f);
  EXPECT_TRUE(std::isfinite(l.global));
  EXPECT_TRUE(l.nonfinite);
  EXPECT_EQ(m.describe_nonfinite().rfind("parameter layers.", 0), 0u) << m.describe_nonfinite();
}

class ModelsFiniteFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dpscale-finite-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// A host copy of the flat parameter buffer: every tensor element `v`, the padding zero.
std::vector<float> flat_params(const ParamLayout& layout, float v) {
  std::vector<float> p(static_cast<size_t>(layout.param_buffer_count()), 0.0f);
  for (const FlatTensor& t : layout.tensors()) std::fill(p.begin() + t.offset, p.begin() + t.offset + t.count, v);
  return p;
}

TEST_F(ModelsFiniteFiles, SaveRefusesNonfiniteWeightsAndWritesNothing) {
  const MlpSpec spec{"custom", {3, 2}};
  const ParamLayout layout(spec);
  std::vector<float> p = flat_params(layout, 0.25f);
  save_checkpoint(path("ok.safetensors"), spec, layout, p);  // positive control
  EXPECT_TRUE(fs::exists(path("ok.safetensors")));
  p[static_cast<size_t>(layout.bias(0).offset + 1)] = kInf;
  const std::string msg = input_error_of([&] { save_checkpoint(path("bad.safetensors"), spec, layout, p); });
  EXPECT_NE(msg.find("refusing to write non-finite weights: layers.0.bias[1] is inf"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(path("bad.safetensors")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1) << "a temporary was left";
}

TEST_F(ModelsFiniteFiles, InitRefusesANanWeightNamingTheTensor) {
  const MlpSpec spec{"custom", {3, 2}};
  const ParamLayout layout(spec);
  std::vector<float> p = flat_params(layout, 0.25f);
  save_checkpoint(path("w.safetensors"), spec, layout, p);
  EXPECT_EQ(load_checkpoint(path("w.safetensors"), layout), p);  // positive control
  // Patch layers.0.weight[1, 2] (element 5) to NaN in the file: the writer would refuse it.
  std::fstream f(path("w.safetensors"), std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header = 0;
  f.read(reinterpret_cast<char*>(&header), 8);  // little-endian on every machine we build for
  f.seekp(static_cast<std::streamoff>(8 + header + 5 * 4));  // forward order: layers.0.weight first
  f.write(reinterpret_cast<const char*>(&kNan), 4);
  f.close();
  const std::string msg = input_error_of([&] { load_checkpoint(path("w.safetensors"), layout); });
  EXPECT_NE(msg.find("non-finite weight: layers.0.weight[1, 2] is nan"), std::string::npos) << msg;
  EXPECT_NE(msg.find("w.safetensors"), std::string::npos) << msg;
}

TEST_F(ModelsFiniteFiles, NpyFeaturesWithANanEvery997Values) {
  // The probe: a NaN every 997 values. The first is element 996 = row 1, column 212.
  std::vector<float> x(8 * 784, 0.5f);
  for (size_t i = 996; i < x.size(); i += 997) x[i] = kNan;
  const std::vector<int32_t> y(8, 1);
  write_npy(path("x.npy"), "<f4", {8, 784}, x.data(), x.size() * 4);
  write_npy(path("y.npy"), "<i4", {8}, y.data(), y.size() * 4);
  std::vector<float> fx;
  std::vector<int32_t> fy;
  int64_t n = 0;
  int dim = 0;
  const std::string msg = input_error_of([&] { load_npy_dataset(path("x.npy"), path("y.npy"), fx, n, dim, fy); });
  EXPECT_NE(msg.find("x.npy': non-finite feature (nan) at row 1, column 212 (element 996)"), std::string::npos) << msg;
  // An infinity is refused the same way; the clean file loads (positive control).
  std::fill(x.begin(), x.end(), 0.5f);
  write_npy(path("x.npy"), "<f4", {8, 784}, x.data(), x.size() * 4);
  load_npy_dataset(path("x.npy"), path("y.npy"), fx, n, dim, fy);
  EXPECT_EQ(n, 8);
  x[3] = -kInf;
  write_npy(path("x.npy"), "<f4", {8, 784}, x.data(), x.size() * 4);
  EXPECT_NE(input_error_of([&] { load_npy_dataset(path("x.npy"), path("y.npy"), fx, n, dim, fy); })
                .find("(-inf) at row 0, column 3"),
            std::string::npos);
}

}  // namespace
}  // namespace dpscale
