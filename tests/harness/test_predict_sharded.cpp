// test_predict_sharded.cpp — predict's step of the sharded mode (harness/predict/shard_sim.h)
// against what the trainers send and when: stage 2 is bucketed's step with reduce-scatters in
// place of all-reduces and its all-gathers in forward; the bytes of each stage per step are the records' (train_sharded's own
// counts for large, and the rule tests/trainers/test_sharded_params.cpp works out for the tiny
// MLP); a reduce-scatter's and an all-gather's time is the link emulation's, not a factor of the
// all-reduce's; stage 3 without prefetch waits for every all-gather, and prefetching one layer
// hides all but the first when a layer's compute outlasts the next one's gather.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.h"

#include "contract/link_model.h"
#include "harness/predict/comm_time.h"
#include "harness/predict/shard_sim.h"
#include "harness/predict/step_model.h"
#include "harness/predict/step_sim.h"
#include "models/model_spec.h"

namespace dpscale::test {
namespace {

using namespace predict;

SyncSetup sharded(int stage, int prefetch = 1) {
  SyncSetup s;
  s.mode = Mode::sharded;
  s.shard_stage = stage;
  s.prefetch_units = prefetch;
  return s;
}

// Every collective one second per byte of its kind's own pattern: the order is what is tested.
double unit_seconds(CollKind, int64_t n) { return static_cast<double>(n); }

CommModel ring_link(double alpha_us, double gbps, double dilation) {
  CommModel c;
  c.link = LinkModel{"custom", alpha_us, gbps, dilation};
  return c;
}

CollectiveSeconds on(const CommModel& comm, int k) {
  return [comm, k](CollKind kind, int64_t n) {
    return kind == CollKind::allreduce ? comm.seconds(static_cast<size_t>(n), k) : comm.shard_seconds(static_cast<size_t>(n), k);
  };
}

double sum_of(const ShardStep& s, CollKind kind) {
  double t = 0;
  for (const Collective& c : s.calls) {
    if (c.kind == kind) t += c.end - c.start;
  }
  return t;
}

TEST(PredictSharded, StageTwoIsBucketedsStepWithReduceScattersInPlaceOfAllReduces) {
  for (const char* model : {"large", "784,64,32,10", "gpt-tiny"}) {
    SCOPED_TRACE(model);
    const ModelSpec spec = parse_model_spec(model, 0);
    SyncSetup bucketed;
    bucketed.mode = Mode::bucketed;
    const std::vector<Launch> ls = launches(spec, bucketed, 1.0);
    const ShardStep s2 = simulate_sharded(spec, sharded(2), 1.0, unit_seconds);
    std::vector<const Collective*> rs;
    for (const Collective& c : s2.calls) {
      if (c.kind == CollKind::reduce_scatter) rs.push_back(&c);
    }
    ASSERT_EQ(rs.size(), ls.size());  // one per bucket
    // The same gradient bytes, bucket for bucket (bucketed's loss slot rides in its last
    // all-reduce; stage 2 sums it in a one-float all-reduce of its own), but for the layout's
    // padding up to the next unit, which a shard unit spans and a bucket need not.
    const int64_t padding = 4 * (spec.layout().param_buffer_count() - spec.n_params());
    for (size_t j = 0; j < ls.size(); ++j) {
      SCOPED_TRACE("bucket " + std::to_string(j));
      // When backward completes it: bucketed's point, later by what forward waited for the
      // all-gathers (every one of them lies in forward at stage 2).
      EXPECT_DOUBLE_EQ(rs[j]->issued, ls[j].at + s2.gather_wait);
      const int64_t grads = ls[j].nbytes - (j + 1 == ls.size() ? 4 : 0);
      EXPECT_GE(rs[j]->nbytes, grads);
      EXPECT_LE(rs[j]->nbytes, grads + padding);
    }
    EXPECT_EQ(s2.bytes(CollKind::reduce_scatter), 4 * spec.layout().param_buffer_count());
    // The parameters all-gathered once, in fp32, every bucket queued as forward begins (the
    // trainer's gate: the gathers feed forward); the loss slot and the flag.
    EXPECT_EQ(s2.bytes(CollKind::allgather), 4 * spec.layout().param_buffer_count());
    EXPECT_EQ(s2.bytes(CollKind::allreduce), 8);
    EXPECT_EQ(s2.times.calls, 2);
    for (const Collective& c : s2.calls) {
      if (c.kind == CollKind::allgather) EXPECT_EQ(c.issued, 0.0);
    }
    EXPECT_GT(s2.gather_wait, 0.0) << "forward's first read waits for its bucket";
  }
}

TEST(PredictSharded, BytesPerStepAreTheRecordsOfLarge) {
  // train_sharded's own counts (experiments/sharded/data: large at K = 2, fp32 gradients).
  const ModelSpec large = parse_model_spec("large", 0);
  const ShardStep s1 = simulate_sharded(large, sharded(1), 1.0, unit_seconds);
  EXPECT_EQ(s1.bytes(CollKind::allreduce), 140847368);
  EXPECT_EQ(s1.bytes(CollKind::allgather), 140847360);
  EXPECT_EQ(s1.times.calls, 8);  // the record's allreduce_calls_per_step: 7 buckets and the flag
  const ShardStep s2 = simulate_sharded(large, sharded(2), 1.0, unit_seconds);
  EXPECT_EQ(s2.bytes(CollKind::reduce_scatter), 140847360);
  EXPECT_EQ(s2.bytes(CollKind::allgather), 140847360);
  for (int p : {0, 1}) {
    const ShardStep s3 = simulate_sharded(large, sharded(3, p), 1.0, unit_seconds);
    EXPECT_EQ(s3.bytes(CollKind::reduce_scatter), 140847360);
    EXPECT_EQ(s3.bytes(CollKind::allreduce), 8);
    EXPECT_EQ(s3.bytes(CollKind::allgather), p == 0 ? 268812544 : 281673984) << "prefetch " << p;
  }
  // Stage 1 moves 1.5× bucketed's bytes a rank sends on the ring (2(K−1)/K·B + (K−1)/K·B).
  SyncSetup bucketed;
  bucketed.mode = Mode::bucketed;
  double ddp = 0, st1 = 0;
  for (const Launch& l : launches(large, bucketed, 1.0)) ddp += hop_pattern(AllreduceAlgo::ring, static_cast<double>(l.nbytes), 2).link_bytes();
  for (const Collective& c : s1.calls) {
    const double n = static_cast<double>(c.nbytes);
    st1 += c.kind == CollKind::allreduce ? hop_pattern(AllreduceAlgo::ring, n, 2).link_bytes() : shard_hop_pattern(n, 2).link_bytes();
  }
  EXPECT_NEAR(st1 / ddp, 1.5, 1e-5);
}

TEST(PredictSharded, StageThreeGathersTheTinyMlpAsTheTrainerCounts) {
  // tests/trainers/test_sharded_params.cpp's rule: forward gathers every layer, backward all but
  // the one forward ended with, layer 0 (which backward never reads) only as a prefetch.
  constexpr int64_t kN = 52736, kU1 = 2496 - 384, kU2 = 52736 - 2496;
  const ModelSpec tiny = parse_model_spec("784,64,32,10", 0);
  for (int p : {0, 1, 2}) {
    const ShardStep s = simulate_sharded(tiny, sharded(3, p), 1.0, unit_seconds);
    EXPECT_EQ(s.bytes(CollKind::allgather), 4 * (kN + kU1 + (p >= 1 ? kU2 : 0))) << "prefetch " << p;
    EXPECT_EQ(s.bytes(CollKind::reduce_scatter), 4 * kN);
  }
}

TEST(PredictSharded, HalvesTakeTheLinkEmulationsTimeNotAFactor) {
  const CommModel comm = ring_link(25, 12.5, 200);
  const ModelSpec large = parse_model_spec("large", 0);
  for (int k : {2, 4}) {
    const ShardStep s = simulate_sharded(large, sharded(2), 5.0, on(comm, k));
    for (const Collective& c : s.calls) {
      const size_t n = static_cast<size_t>(c.nbytes);
      const double want = c.kind == CollKind::allreduce ? modelled_seconds(AllreduceAlgo::ring, comm.link, n, NodeShape{1, k})
                                                        : modelled_shard_seconds(comm.link, n, NodeShape{1, k});
      EXPECT_NEAR(c.end - c.start, want, 1e-12 * want);
    }
  }
  // The half's own α count: (K−1) hops, so not half the all-reduce's time once α matters.
  const double ar = comm.seconds(4096, 4), half = comm.shard_seconds(4096, 4);
  EXPECT_NEAR(half, ar / 2, 1e-12 * ar);  // (K−1)(α + B/K/β) against 2(K−1)(α + B/K/β)
  const CommModel hier = [] {
    CommModel c = ring_link(5, 12.5, 1);
    c.algo = AllreduceAlgo::hier;
    c.intra = LinkModel{"custom", 1, 300, 1};
    c.gpus_per_node = 2;
    return c;
  }();
  // K = 4 on two nodes: each of the 3 steps as long as its slower (inter-node) hop.
  EXPECT_NEAR(hier.shard_seconds(1 << 20, 4), 3 * (5e-6 + (1 << 18) / 12.5e9), 1e-15);
}

TEST(PredictSharded, StageThreeWithoutPrefetchWaitsForEveryAllGather) {
  // Compute far longer than any gather: each layer's gather is issued when the layer is reached
  // and waited for in full, so the waits are the gathers' time, all of it.
  const ModelSpec large = parse_model_spec("large", 0);
  const CommModel comm = ring_link(25, 12.5, 1);
  const ShardStep s = simulate_sharded(large, sharded(3, 0), 100.0, on(comm, 2));
  const double ag = sum_of(s, CollKind::allgather);
  ASSERT_GT(ag, 0);
  EXPECT_NEAR(s.gather_wait, ag, 1e-9 * ag);
  EXPECT_NEAR(s.compute_end, 100.0 + ag, 1e-9 * ag);
  EXPECT_GE(s.times.step, s.compute_end);
}

TEST(PredictSharded, PrefetchingOneLayerHidesAllButTheFirstGatherWhenComputeOutlastsIt) {
  const ModelSpec large = parse_model_spec("large", 0);
  const CommModel comm = ring_link(25, 12.5, 1);
  const ShardStep p0 = simulate_sharded(large, sharded(3, 0), 100.0, on(comm, 2));
  const ShardStep p1 = simulate_sharded(large, sharded(3, 1), 100.0, on(comm, 2));
  // Only forward's first layer has nothing to hide behind.
  const Collective& first = p1.calls.front();
  ASSERT_EQ(first.kind, CollKind::allgather);
  EXPECT_NEAR(p1.gather_wait, first.end - first.start, 1e-12);
  EXPECT_LT(p1.gather_wait, 0.5 * sum_of(p1, CollKind::allgather));
  EXPECT_LT(p1.times.step, p0.times.step);
}

TEST(PredictSharded, StageThreesComputeWaitsForItsGathersOnASlowLink) {
  // Comm far longer than compute: with or without prefetch, forward and backward cannot run
  // ahead of the gathers, so the step is at least every gather's time plus the reduce-scatters
  // that share the channel; prefetching cannot beat the channel.
  const ModelSpec large = parse_model_spec("large", 0);
  const CommModel comm = ring_link(25, 12.5, 200);
  for (int p : {0, 1, 4}) {
    SCOPED_TRACE("prefetch " + std::to_string(p));
    const ShardStep s = simulate_sharded(large, sharded(3, p), 0.01, on(comm, 2));
    EXPECT_GE(s.times.step, s.times.busy * (1 - 1e-12));
    // Every gather without prefetch is one the compute waits for: the compute thread ends after
    // the last of them.
    if (p == 0) {
      double last = 0;
      for (const Collective& c : s.calls) {
        if (c.kind == CollKind::allgather) last = std::max(last, c.end);
      }
      EXPECT_GE(s.compute_end, last);
    }
  }
}

TEST(PredictSharded, TheTransformersRootsAreGatheredOnceAtForwardsStart) {
  const ModelSpec gpt = parse_model_spec("gpt-tiny", 0);
  const ParamLayout layout = gpt.layout();
  int64_t roots = 0, blocks = 0, last_block = 0;
  for (const FlatTensor& t : layout.tensors()) {
    (t.layer < 0 ? roots : blocks) += t.count;
    if (t.layer == gpt.gpt->layers - 1) last_block += t.count;
  }
  for (int p : {0, 1}) {
    const ShardStep s = simulate_sharded(gpt, sharded(3, p), 1.0, unit_seconds);
    // Forward: the roots and every block; backward: every block but the last forward computed
    // (every block of the transformer reads its weights in backward). Padding between units
    // makes the counts a little larger than the tensors'.
    const int64_t want = 4 * (roots + blocks + blocks - last_block);
    const int64_t padding = 4 * (layout.param_buffer_count() - gpt.n_params());
    EXPECT_GE(s.bytes(CollKind::allgather), want);
    EXPECT_LE(s.bytes(CollKind::allgather), want + 2 * padding);
    int at_start = 0;
    for (const Collective& c : s.calls) at_start += c.kind == CollKind::allgather && c.issued == 0;
    EXPECT_EQ(at_start, 2 + p) << "ln_f, wpe+wte, then the prefetched blocks";
  }
}

TEST(PredictSharded, EpochOfTheShardedModeThroughTheStepModel) {
  SingleRun single;
  single.spec = parse_model_spec("large", 0);
  single.epoch_s = 20;
  single.samples = 4096;
  single.batch = 1024;
  const Workload w{4096, 1024, 0};
  const CommModel comm = ring_link(25, 12.5, 200);
  SyncSetup bucketed;
  bucketed.mode = Mode::bucketed;
  const EpochPrediction ddp = predict_epoch(single, w, bucketed, comm, 2);
  const EpochPrediction st1 = predict_epoch(single, w, sharded(1), comm, 2);
  const EpochPrediction st2 = predict_epoch(single, w, sharded(2), comm, 2);
  const EpochPrediction st3 = predict_epoch(single, w, sharded(3, 1), comm, 2);
  EXPECT_GT(st1.epoch_s, ddp.epoch_s);  // 1.5× the bytes, the gathers after the update exposed
  EXPECT_GT(st1.epoch_s, st2.epoch_s);  // stage 2's gathers feed forward
  EXPECT_GT(st3.busy_s, st2.busy_s);    // stage 3 gathers the layers twice
  SyncSetup accum = sharded(3);
  accum.accum_steps = 2;
  EXPECT_THROW(predict_epoch(single, w, accum, comm, 2), InputError);
}

}  // namespace
}  // namespace dpscale::test
