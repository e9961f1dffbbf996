// test_buckets.cpp — the DDP-style bucket assignment (trainers/buckets.h), no MPI.
//
// Properties, for every preset and a grid of caps: the buckets cover every tensor exactly once
// in backward order; each is one contiguous slice of the flat gradient buffer (its tensors and
// the layout's padding between them); the tensors' bytes are above no cap (first bucket:
// --first-bucket-mb, later ones: --bucket-cap-mb) unless one tensor is larger than the cap; and
// each is closed only when the next tensor would not fit (greedy, as PyTorch DDP fills them).
// Then hand-computed assignments, byte for byte (the tensors' bytes: padding moves no boundary).
//
// Run: ctest -R DpBuckets   (or ./tests/trainers/test_buckets)
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "models/gpt/gpt_spec.h"
#include "models/mlp_spec.h"
#include "models/param_layout.h"
#include "trainers/buckets.h"

namespace dpscale {
namespace {

std::string names_of(const ParamLayout& layout, const Bucket& b) {
  std::string s = "{";
  for (int t = b.first_tensor; t <= b.last_tensor; ++t) {
    if (t != b.first_tensor) s += ',';
    s += layout.tensors()[static_cast<size_t>(t)].name();
  }
  return s + "}";
}

std::string describe(const ParamLayout& layout, const std::vector<Bucket>& buckets) {
  std::string s;
  for (const Bucket& b : buckets) s += names_of(layout, b) + "=" + std::to_string(b.payload_bytes()) + "B ";
  return s;
}

// Checks every property of the header's contract; returns the buckets for further checks.
std::vector<Bucket> check_invariants(const std::string& model, double cap_mb, double first_mb) {
  const ParamLayout layout(parse_model(model));
  const std::vector<Bucket> buckets = assign_buckets(layout, cap_mb, first_mb);
  const auto& tensors = layout.tensors();
  // Caps in bytes; one beyond int64 means no limit.
  auto bytes = [](double mb) {
    return mb * kMiB >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(mb * kMiB);
  };
  const int64_t cap = bytes(cap_mb);
  const int64_t first = bytes(first_mb);
  SCOPED_TRACE(model + " cap " + std::to_string(cap_mb) + " MiB, first " + std::to_string(first_mb) +
               " MiB: " + describe(layout, buckets));

  EXPECT_FALSE(buckets.empty());
  int next_tensor = 0;      // backward order: the next bucket must start here
  int64_t next_offset = 0;  // and here in the flat buffer
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& b = buckets[i];
    const int64_t limit = i == 0 ? first : cap;
    // Exactly once, in backward order: bucket i starts where bucket i-1 ended.
    EXPECT_EQ(b.first_tensor, next_tensor) << "bucket " << i;
    EXPECT_GE(b.last_tensor, b.first_tensor) << "bucket " << i;
    // One contiguous slice: starts at its first tensor (past at most the padding that follows
    // the previous bucket), ends where its last tensor ends.
    EXPECT_GE(b.offset, next_offset) << "bucket " << i;
    EXPECT_LT(b.offset - next_offset, kTensorAlignFloats) << "bucket " << i;
    EXPECT_EQ(b.offset, tensors[static_cast<size_t>(b.first_tensor)].offset) << "bucket " << i;
    int64_t payload = 0, end = b.offset;
    for (int t = b.first_tensor; t <= b.last_tensor; ++t) {
      const FlatTensor& tv = tensors[static_cast<size_t>(t)];
      EXPECT_GE(tv.offset, end) << "tensor " << tv.name() << " overlaps in bucket " << i;
      EXPECT_LT(tv.offset - end, kTensorAlignFloats) << "tensor " << tv.name() << " is not where bucket " << i << " needs it";
      payload += tv.count;
      end = tv.offset + tv.count;
    }
    EXPECT_EQ(b.payload, payload) << "bucket " << i;
    EXPECT_EQ(b.payload_bytes(), payload * 4) << "bucket " << i;
    EXPECT_EQ(b.count, end - b.offset) << "bucket " << i;
    EXPECT_EQ(b.nbytes(), (end - b.offset) * 4) << "bucket " << i;
    // The cap, on the tensors' bytes: only a single tensor larger than it may exceed it.
    if (b.n_tensors() > 1) {
      EXPECT_LE(b.payload_bytes(), limit) << "bucket " << i << " is over its cap";
    }
    // Greedy: a bucket is closed because it is full or the next tensor does not fit.
    if (i + 1 < buckets.size()) {
      const int64_t next_bytes = tensors[static_cast<size_t>(b.last_tensor + 1)].nbytes();
      EXPECT_TRUE(b.payload_bytes() >= limit || b.payload_bytes() + next_bytes > limit)
          << "bucket " << i << " was closed with room for the next tensor";
    }
    next_tensor = b.last_tensor + 1;
    next_offset = b.offset + b.count;
  }
  EXPECT_EQ(next_tensor, static_cast<int>(tensors.size())) << "not every tensor is in a bucket";
  EXPECT_EQ(next_offset, layout.param_buffer_count()) << "the buckets do not cover the parameter buffer";
  return buckets;
}

std::vector<int64_t> bytes_of(const std::vector<Bucket>& buckets) {
  std::vector<int64_t> v;
  for (const Bucket& b : buckets) v.push_back(b.payload_bytes());
  return v;
}

TEST(DpBuckets, InvariantsForEveryPresetAndCap) {
  std::vector<std::string> models = preset_names();
  models.push_back("784,64,32,10");
  models.push_back("784,10");
  for (const std::string& model : models) {
    for (double cap : {0.001, 0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 100.0, 1e4}) {
      for (double first : {0.001, 0.25, 1.0, 25.0, 1e4}) check_invariants(model, cap, first);
    }
  }
}

TEST(DpBuckets, MediumDefaultCapsAreThreeBuckets) {
  // medium = 784,2048,2048,1024,512,10; backward order W4,b4,W3,b3,W2,b2,W1,b1,W0,b0.
  //   W4 10x512    =     5 120 floats =     20 480 B    b4    10 floats =    40 B
  //   W3 512x1024  =   524 288 floats =  2 097 152 B    b3   512 floats = 2 048 B
  //   W2 1024x2048 = 2 097 152 floats =  8 388 608 B    b2 1 024 floats = 4 096 B
  //   W1 2048x2048 = 4 194 304 floats = 16 777 216 B    b1 2 048 floats = 8 192 B
  //   W0 2048x784  = 1 605 632 floats =  6 422 528 B    b0 2 048 floats = 8 192 B
  // first bucket ≤ 1 MiB = 1 048 576 B: W4 + b4 = 20 520; + W3 would be 2 117 672 > 1 MiB.
  // cap 25 MiB = 26 214 400 B: W3+b3+W2+b2 = 10 491 904; + W1 would be 27 269 120 > cap.
  // last: W1+b1+W0+b0 = 23 216 128 ≤ cap.   Sum 33 728 552 = 4 x 8 432 138 params.
  const ParamLayout layout(parse_model("medium"));
  const auto b = check_invariants("medium", 25.0, 1.0);
  ASSERT_EQ(b.size(), 3u) << describe(layout, b);
  EXPECT_EQ(names_of(layout, b[0]), "{layers.4.weight,layers.4.bias}");
  EXPECT_EQ(names_of(layout, b[1]), "{layers.3.weight,layers.3.bias,layers.2.weight,layers.2.bias}");
  EXPECT_EQ(names_of(layout, b[2]), "{layers.1.weight,layers.1.bias,layers.0.weight,layers.0.bias}");
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{20520, 10491904, 23216128}));
}

TEST(DpBuckets, SmallDefaultCapsAreTwoBuckets) {
  // small = 784,1024,512,256,10: W3 10 240 + b3 40 + W2 524 288 + b2 1 024 = 535 592 ≤ 1 MiB,
  // + W1 (2 097 152) would not fit; the rest, 2 097 152 + 2 048 + 3 211 264 + 4 096 =
  // 5 314 560, fits in 25 MiB.
  const ParamLayout layout(parse_model("small"));
  const auto b = check_invariants("small", 25.0, 1.0);
  ASSERT_EQ(b.size(), 2u) << describe(layout, b);
  EXPECT_EQ(names_of(layout, b[0]), "{layers.3.weight,layers.3.bias,layers.2.weight,layers.2.bias}");
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{535592, 5314560}));
}

TEST(DpBuckets, LargeDefaultCapsPutOversizedTensorsAlone) {
  // large = 784,4096,4096,2048,2048,1024,512,10. Bytes, backward order:
  //   W6 20 480, b6 40 | W5 2 097 152, b5 2 048, W4 8 388 608, b4 4 096 | W3 16 777 216,
  //   b3 8 192 | W2 33 554 432 (> 25 MiB: alone) | b2 8 192 (W1 would overflow) |
  //   W1 67 108 864 (alone) | b1 16 384, W0 12 845 056, b0 16 384
  const ParamLayout layout(parse_model("large"));
  const auto b = check_invariants("large", 25.0, 1.0);
  ASSERT_EQ(b.size(), 7u) << describe(layout, b);
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{20520, 10491904, 16785408, 33554432, 8192, 67108864, 12877824}));
  EXPECT_EQ(names_of(layout, b[3]), "{layers.2.weight}");
  EXPECT_EQ(names_of(layout, b[5]), "{layers.1.weight}");
}

TEST(DpBuckets, MediumCapFiveMiB) {
  // cap 5 MiB = 5 242 880 B: {W4,b4} (first bucket) | {W3,b3} = 2 099 200 (W2 would overflow)
  // | {W2} 8 388 608 alone (> cap) | {b2} 4 096 (W1 would overflow) | {W1} alone | {b1} 8 192
  // (W0 6 422 528 would overflow) | {W0} alone | {b0} 8 192.
  const ParamLayout layout(parse_model("medium"));
  const auto b = check_invariants("medium", 5.0, 1.0);
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{20520, 2099200, 8388608, 4096, 16777216, 8192, 6422528, 8192}))
      << describe(layout, b);
}

TEST(DpBuckets, TinyModelSmallCapsGiveFourBuckets) {
  // The exactness tests' configuration: 784,64,32,10 with cap 0.05 MiB (52 428 B) and first
  // bucket 0.001 MiB (1 048 B). W2 1 280 B alone (already over the first cap) | b2 40 + W1
  // 8 192 + b1 128 = 8 360 | W0 200 704 alone | b0 256 (the loss slot rides with it).
  // Sent: b2 is padded from 10 to 64 floats and b1 from 32 to 64, so the second bucket's slice
  // is 40 + 216 + 8 192 + 128 = 8 576 B.
  const ParamLayout layout(parse_model("784,64,32,10"));
  const auto b = check_invariants("784,64,32,10", 0.05, 0.001);
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{1280, 8360, 200704, 256})) << describe(layout, b);
  std::vector<int64_t> sent;
  for (const Bucket& bk : b) sent.push_back(bk.nbytes());
  EXPECT_EQ(sent, (std::vector<int64_t>{1280, 8576, 200704, 256}));
}

TEST(DpBuckets, HugeCapIsOneBucketTinyCapIsOnePerTensor) {
  for (const std::string& model : preset_names()) {
    const ParamLayout layout(parse_model(model));
    const auto one = check_invariants(model, 1e4, 1e4);
    ASSERT_EQ(one.size(), 1u) << model;
    EXPECT_EQ(one[0].payload, layout.n_params()) << model;
    EXPECT_EQ(one[0].count, layout.param_buffer_count()) << model;
    // 1 KiB: every weight is larger and every bias is followed by a larger weight.
    const auto per_tensor = check_invariants(model, 1.0 / 1024, 1.0 / 1024);
    EXPECT_EQ(per_tensor.size(), layout.tensors().size()) << model << ": " << describe(layout, per_tensor);
  }
}

TEST(DpBuckets, AstronomicalCapIsOneBucket) {
  // 1e30 MiB does not fit in int64 bytes: it must mean "no limit", not wrap to a negative cap
  // that would put every tensor alone.
  for (const std::string& model : preset_names()) {
    const auto b = check_invariants(model, 1e30, 1e30);
    EXPECT_EQ(b.size(), 1u) << model;
  }
}

TEST(DpBuckets, FirstBucketCapAppliesOnlyToTheFirst) {
  // With first == cap the split is plain greedy; a larger first bucket swallows more up front.
  const auto same = check_invariants("medium", 25.0, 25.0);
  EXPECT_EQ(bytes_of(same), (std::vector<int64_t>{10512424, 23216128}));  // W4..b2 | W1..b0
  const auto big_first = check_invariants("medium", 1.0, 25.0);
  ASSERT_GE(big_first.size(), 2u);
  EXPECT_EQ(big_first[0].payload_bytes(), 10512424);  // the first 25 MiB; the rest at 1 MiB each
  for (size_t i = 1; i < big_first.size(); ++i) {
    EXPECT_EQ(big_first[i].n_tensors(), 1) << "every later tensor is alone at a 1 MiB cap";
  }
}

// --bucket-rule ddp: PyTorch DDP's rule closes a bucket after the tensor that reaches
// or crosses the cap. large at the default caps (bytes as above): {W6,b6,W5} 2 117 672 (W5
// crosses the 1 MiB first cap) | {b5,W4,b4,W3,b3,W2} 58 734 592 (W2 crosses 25 MiB) | {b2,W1}
// 67 117 056 | {b1,W0,b0} 12 877 824: 4 buckets where strict makes 7.
TEST(DpBuckets, DdpRuleLargeDefaultCapsAreFourBuckets) {
  const ParamLayout layout(parse_model("large"));
  const auto b = assign_buckets(layout, 25.0, 1.0, BucketRule::ddp);
  EXPECT_EQ(bytes_of(b), (std::vector<int64_t>{2117672, 58734592, 67117056, 12877824})) << describe(layout, b);
  EXPECT_EQ(assign_buckets(layout, 25.0, 1.0, BucketRule::strict).size(), 7u);
  EXPECT_EQ(assign_buckets(layout, 25.0, 1.0).size(), 7u) << "the default rule is strict";
  // Contiguous, in backward order, every tensor once.
  int next = 0;
  for (const Bucket& bk : b) {
    EXPECT_EQ(bk.first_tensor, next);
    EXPECT_EQ(bk.offset, layout.tensors()[static_cast<size_t>(bk.first_tensor)].offset);
    const FlatTensor& last = layout.tensors()[static_cast<size_t>(bk.last_tensor)];
    EXPECT_EQ(bk.offset + bk.count, last.offset + last.count);
    next = bk.last_tensor + 1;
  }
  EXPECT_EQ(next, static_cast<int>(layout.tensors().size()));
}

TEST(DpBuckets, DdpRuleTinyModel) {
  // W2 1 280 B reaches the 1 048 B first cap: alone | b2 40 + W1 8 192 + b1 128 + W0 200 704
  // (W0 crosses 52 428) | b0 256. Strict: 4 buckets (TinyModelSmallCapsGiveFourBuckets).
  const ParamLayout layout(parse_model("784,64,32,10"));
  EXPECT_EQ(bytes_of(assign_buckets(layout, 0.05, 0.001, BucketRule::ddp)), (std::vector<int64_t>{1280, 209064, 256}));
  EXPECT_EQ(parse_bucket_rule("ddp"), BucketRule::ddp);
  EXPECT_THROW(parse_bucket_rule("pytorch"), std::invalid_argument);
}

}  // namespace
}  // namespace dpscale

namespace dpscale {
namespace {

// The transformer's layout: GPT-2 small's tied embedding (50257 × 768 floats, 147 MiB, six times
// the 25 MiB cap) completes last in backward, so it ends the last bucket — alone in it under the
// strict rule — the one all-reduce that can start only when backward is over.
TEST(DpBuckets, Gpt2SmallTiedEmbeddingIsTheLastBucketAlone) {
  const ParamLayout layout(gpt_tensors(parse_gpt("gpt2-small", 0)));
  for (const BucketRule rule : {BucketRule::strict, BucketRule::ddp}) {
    const std::vector<Bucket> b = assign_buckets(layout, 25.0, 1.0, rule);
    const int wte = static_cast<int>(layout.tensors().size()) - 1;
    ASSERT_EQ(layout.tensors()[static_cast<size_t>(wte)].name(), "wte.weight");
    EXPECT_EQ(b.back().last_tensor, wte);
    if (rule == BucketRule::strict) {
      EXPECT_EQ(b.back().first_tensor, wte);  // never above the cap: the oversized tensor alone
      EXPECT_EQ(b.back().payload_bytes(), int64_t{50257} * 768 * 4);
    } else {
      // DDP's rule closes a bucket only once it crossed the cap: wte joins the open bucket
      // before it (wpe and block 0's tail), so even more waits for the end of backward.
      EXPECT_LT(b.back().first_tensor, wte);
      EXPECT_GT(b.back().payload_bytes(), int64_t{50257} * 768 * 4);
    }
    int64_t covered = 0;
    for (const Bucket& x : b) covered += x.n_tensors();
    EXPECT_EQ(covered, static_cast<int64_t>(layout.tensors().size()));
    if (rule == BucketRule::strict) {
      for (size_t i = 0; i + 1 < b.size(); ++i) EXPECT_LE(b[i].payload_bytes(), (i == 0 ? 1.0 : 25.0) * kMiB) << i;
    }
    std::printf("gpt2-small, cap 25 MiB, %s: %zu buckets, the last %.1f MiB (%d tensors, wte last)\n",
                rule == BucketRule::strict ? "strict" : "ddp", b.size(), b.back().payload_bytes() / kMiB, b.back().n_tensors());
  }
}

}  // namespace
}  // namespace dpscale
