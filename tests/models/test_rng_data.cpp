// test_rng_data.cpp — CounterRng (pinned to the algorithm rng.h documents), the synthetic
// dataset's determinism, and nn.Linear-style initialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "models/cpu/cpu_device.h"
#include "models/data/dataset.h"
#include "core/errors.h"
#include "models/mlp.h"
#include "models/data/rng.h"

namespace dpscale {
namespace {

// The documented formula, written out again: bits(i) = mix64(key + (i+1)·φ),
// key = mix64(seed ^ mix64(stream + 1)).
uint64_t ref_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
uint64_t ref_bits(uint64_t seed, uint64_t stream, uint64_t i) {
  return ref_mix64(ref_mix64(seed ^ ref_mix64(stream + 1)) + (i + 1) * 0x9E3779B97F4A7C15ULL);
}

TEST(ModelsCounterRng, Mix64IsSplitMix64) {
  // SplitMix64 seeded with 0 outputs mix64(k·φ): its well-known first three values.
  EXPECT_EQ(mix64(0x9E3779B97F4A7C15ULL), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(mix64(2 * 0x9E3779B97F4A7C15ULL), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(mix64(3 * 0x9E3779B97F4A7C15ULL), 0x06C45D188009454FULL);
}

TEST(ModelsCounterRng, PinnedValues) {
  // Computed once from the documented algorithm (independently, in Python); any change to the
  // algorithm changes every weight and every synthetic sample, and must be deliberate.
  const CounterRng r(42, 0);
  EXPECT_EQ(r.bits(0), 0x3165819285DF2854ULL);
  EXPECT_EQ(r.bits(1), 0x599ED3CA2E2516F2ULL);
  EXPECT_EQ(r.bits(2), 0x211070D25DF853A3ULL);
  EXPECT_EQ(CounterRng(42, 1).bits(0), 0x55B0F7F564CE472BULL);
  EXPECT_EQ(CounterRng(0, 0).bits(0), 0x4181B152FB77616FULL);
  EXPECT_EQ(CounterRng(7, 0x5EED0000).bits(1), 0xF9C01FFAA2C8518FULL);
  EXPECT_EQ(r.uniform01(0), 0.19295507669448853f);  // (bits >> 40) / 2^24, exact
  EXPECT_EQ(r.uniform01(1), 0.3500797152519226f);
  EXPECT_EQ(r.uniform01(2), 0.12915706634521484f);
  EXPECT_NEAR(r.normal(0), -1.0669777393341064f, 1e-6f);  // Box–Muller of bits(0), bits(1)
  EXPECT_NEAR(r.normal(1), -2.009678602218628f, 1e-6f);
  EXPECT_NEAR(r.normal(2), 1.4195592403411865f, 1e-6f);
  const CounterRng labels(42, 1);
  const uint32_t want[8] = {3, 3, 0, 8, 3, 7, 8, 1};
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(labels.below(i, 10), want[i]) << i;
}

TEST(ModelsCounterRng, MatchesDocumentedFormula) {
  for (uint64_t seed : {0ULL, 1ULL, 42ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    for (uint64_t stream : {0ULL, 1ULL, 7ULL, 0x5EED0001ULL}) {
      const CounterRng r(seed, stream);
      for (uint64_t i : {0ULL, 1ULL, 2ULL, 1000ULL, 123456789ULL}) {
        ASSERT_EQ(r.bits(i), ref_bits(seed, stream, i)) << seed << " " << stream << " " << i;
      }
    }
  }
}

TEST(ModelsCounterRng, DistributionsAndRanges) {
  const CounterRng r(9, 3);
  double sum = 0, sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const float u = r.uniform01(i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    const float s = r.uniform_symmetric(i, 0.25f);
    ASSERT_GE(s, -0.25f);
    ASSERT_LT(s, 0.25f);
    ASSERT_LT(r.below(i, 7), 7u);
    const double z = r.normal(i);
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);           // 5 standard errors
  EXPECT_NEAR(std::sqrt(sq / n), 1.0, 0.01);
  EXPECT_NE(CounterRng(9, 3).bits(0), CounterRng(9, 4).bits(0));
  EXPECT_NE(CounterRng(9, 3).bits(0), CounterRng(10, 3).bits(0));
  EXPECT_EQ(CounterRng(9, 3).bits(77), r.bits(77));  // stateless: same inputs, same value
}

TEST(ModelsSynthetic, SameSeedIdenticalOtherSeedDifferent) {
  const Dataset a = make_synthetic(1000, 784, 10, 42);
  const Dataset b = make_synthetic(1000, 784, 10, 42);
  const Dataset c = make_synthetic(1000, 784, 10, 43);
  ASSERT_EQ(a.x.size(), 1000u * 784);
  ASSERT_EQ(a.y.size(), 1000u);
  EXPECT_EQ(a.n, 1000);
  EXPECT_EQ(a.dim, 784);
  EXPECT_EQ(a.n_test, 0);
  EXPECT_EQ(0, std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(float)));  // bit-identical
  EXPECT_EQ(a.y, b.y);
  size_t same_x = 0, same_y = 0;
  for (size_t i = 0; i < a.x.size(); ++i) same_x += a.x[i] == c.x[i];
  for (size_t i = 0; i < a.y.size(); ++i) same_y += a.y[i] == c.y[i];
  EXPECT_LT(same_x, 100u);    // of 784,000
  EXPECT_LT(same_y, 200u);    // ~1/10 agree by chance
  // The documented streams: x[i] = normal_i of stream 0x5EED0000, y[i] = below_i of 0x5EED0001.
  EXPECT_EQ(a.x[12345], CounterRng(42, 0x5EED0000).normal(12345));
  EXPECT_EQ(a.y[999], static_cast<int32_t>(CounterRng(42, 0x5EED0001).below(999, 10)));
}

TEST(ModelsSynthetic, ShapeAndStatistics) {
  const Dataset d = make_synthetic(4096, 32, 10, 42);
  std::set<int32_t> classes(d.y.begin(), d.y.end());
  EXPECT_EQ(classes.size(), 10u);
  EXPECT_EQ(*classes.begin(), 0);
  EXPECT_EQ(*classes.rbegin(), 9);
  double sum = 0, sq = 0;
  for (float v : d.x) {
    sum += v;
    sq += double{v} * v;
  }
  const double n = static_cast<double>(d.x.size());
  EXPECT_NEAR(sum / n, 0.0, 0.015);
  EXPECT_NEAR(std::sqrt(sq / n - (sum / n) * (sum / n)), 1.0, 0.01);
}

TEST(ModelsSynthetic, LoadDatasetDefaultsAndChecks) {
  DataOptions o;
  o.kind = "synthetic";
  o.samples = 0;
  const Dataset d = load_dataset(o, 8, 10);
  EXPECT_EQ(d.n, kDefaultSyntheticSamples);
  EXPECT_EQ(kDefaultSyntheticSamples, 32768);
  EXPECT_EQ(d.x, make_synthetic(32768, 8, 10, 42).x);
  o.samples = -1;
  EXPECT_THROW(load_dataset(o, 8, 10), InputError);
  o.samples = 10;
  o.kind = "mnist";
  EXPECT_THROW(load_dataset(o, 8, 10), InputError);
}

TEST(ModelsInit, LikeNnLinearAndDeterministic) {
  CpuDevice dev(1);
  const MlpSpec spec{"custom", {16, 9, 4}};
  Mlp a(dev, spec, 8), b(dev, spec, 64), c(dev, spec, 8);
  a.init_params(42);
  b.init_params(42);  // independent of the batch the buffers were sized for
  c.init_params(43);
  const std::vector<float> pa = a.params_to_host(), pb = b.params_to_host(), pc = c.params_to_host();
  EXPECT_EQ(pa, pb);
  EXPECT_NE(pa, pc);
  EXPECT_EQ(checksum_floats(pa), checksum_floats(pb));
  EXPECT_NE(checksum_floats(pa), checksum_floats(pc));
  for (const FlatTensor& t : a.layout().tensors()) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(spec.widths[t.layer]));  // 1/sqrt(fan_in)
    const CounterRng rng(42, 2 * static_cast<uint64_t>(t.layer) + (t.is_bias ? 1 : 0));
    float lo = 1, hi = -1;
    for (int64_t j = 0; j < t.count; ++j) {
      const float v = pa[static_cast<size_t>(t.offset + j)];
      ASSERT_EQ(v, rng.uniform_symmetric(j, bound)) << t.name() << "[" << j << "]";
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_GE(lo, -bound);
    EXPECT_LT(hi, bound);
    if (!t.is_bias) {
      EXPECT_GT(hi - lo, bound);  // spread over the range, not a constant
    }
  }
}

}  // namespace
}  // namespace dpscale
