// test_predict_model.cpp — the step model against cases computed by hand: the FIFO channel, the
// backward plan's ready times, naive's exact formula, the identities (a one-layer MLP's
// interleaved step is naive's; bucketed with an unbounded cap is naive fused), the trainers' own
// bucket counts, the hierarchical all-reduce's limits, the α-β fit, E/γ/Amdahl/knee.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/predict/calibration.h"
#include "harness/predict/comm_time.h"
#include "harness/predict/predict_table.h"
#include "harness/predict/step_model.h"
#include "harness/predict/step_sim.h"
#include "core/errors.h"
#include "trainers/buckets.h"

namespace dpscale::test {
namespace {

using namespace predict;

SingleRun single_of(const std::string& model, double epoch_s, int64_t samples = 4096, int batch = 1024) {
  SingleRun s;
  s.spec = parse_model_spec(model, 0);
  s.epoch_s = epoch_s;
  s.samples = samples;
  s.batch = batch;
  return s;
}

CommModel ring_link(double alpha_us, double gbps, double dilation) {
  CommModel c;
  c.link = LinkModel{"custom", alpha_us, gbps, dilation};
  return c;
}

TEST(StepSim, FifoChannelByHand) {
  // Launches at 0.1 and 0.2, each 0.15 long, backward ends at 0.3: the second waits for the
  // first (starts 0.25), ends 0.4: 0.1 exposed.
  const StepTimes s = simulate_step({{0.1, 100}, {0.2, 200}}, 0.3, [](int64_t) { return 0.15; });
  EXPECT_DOUBLE_EQ(s.busy, 0.3);
  EXPECT_NEAR(s.exposed, 0.1, 1e-12);
  EXPECT_NEAR(s.step, 0.4, 1e-12);
  EXPECT_EQ(s.calls, 2);
  // Hidden entirely: short all-reduces end before backward does.
  EXPECT_EQ(simulate_step({{0.1, 1}}, 0.3, [](int64_t) { return 0.05; }).exposed, 0.0);
}

TEST(StepSim, BackwardPlanReadyTimesByHand) {
  // widths 8 -> 4 -> 2: GEMM units per row g0 = 2·8·4 = 64, g1 = 2·4·2 = 16.
  // forward 64 + 16 = 80; backward: layer 1 dW 16 (ready at 96), dX 16, layer 0 dW 64 (ready at
  // 176 = the end; layer 0 has no dX). Total 176.
  const BackwardPlan p = backward_plan(parse_model_spec("8,4,2", 0));
  ASSERT_EQ(p.tensors.size(), 4u);
  EXPECT_DOUBLE_EQ(p.forward_share, 80.0 / 176);
  EXPECT_DOUBLE_EQ(p.tensors[0].ready, 96.0 / 176);  // layers.1.weight
  EXPECT_DOUBLE_EQ(p.tensors[1].ready, 96.0 / 176);  // layers.1.bias
  EXPECT_DOUBLE_EQ(p.tensors[2].ready, 1.0);         // layers.0.weight
  EXPECT_EQ(p.tensors[0].nbytes, 2 * 4 * 4);
  EXPECT_EQ(p.tensors[2].nbytes, 4 * 8 * 4);
  EXPECT_EQ(p.tensors[3].nbytes, 4 * 4);
}

TEST(StepModel, NaiveIsComputePlusEveryTensorsRingByHand) {
  // T1 = 2 s over 4 steps of 1024: 0.5 s per step; K = 4 -> t_c = 0.125 s.
  // Tensors 32, 8, 128, 16 (+4 loss slot) bytes; ring d(B) = F·2(K-1)·(α + B/K/β), F = 2.
  const SingleRun s = single_of("8,4,2", 2.0);
  const CommModel c = ring_link(10, 1, 2);
  auto d = [](double b) { return 2 * 6 * (10e-6 + b / 4 / 1e9); };
  const double comm = d(32) + d(8) + d(128) + d(20);
  const EpochPrediction p = predict_epoch(s, Workload{4096, 1024}, SyncSetup{}, c, 4);
  EXPECT_EQ(p.steps, 4);
  EXPECT_NEAR(p.compute_s, 4 * 0.125, 1e-12);
  EXPECT_NEAR(p.naive_comm_s, 4 * comm, 1e-12);
  EXPECT_NEAR(p.epoch_s, 4 * (0.125 + comm), 1e-12);
  EXPECT_NEAR(p.exposed_s, p.naive_comm_s, 1e-12);
  EXPECT_EQ(p.calls_per_step, 4);
  // K = 1: no communication at all, the measured epoch back.
  EXPECT_NEAR(predict_epoch(s, Workload{4096, 1024}, SyncSetup{}, c, 1).epoch_s, 2.0, 1e-12);
  // Another workload: batch 512 over 8192 samples = 16 steps of half the compute.
  EXPECT_NEAR(predict_epoch(s, Workload{8192, 512}, SyncSetup{}, c, 1).epoch_s, 16 * 0.25, 1e-12);
}

TEST(StepModel, OneLayerInterleavedEqualsNaive) {
  // One layer: its gradients are ready when backward ends (layer 0 has no dX), so launching them
  // early gains nothing.
  const SingleRun s = single_of("784,10", 1.0);
  const CommModel c = ring_link(50, 10, 100);
  SyncSetup inter;
  inter.mode = Mode::interleaved;
  const EpochPrediction n = predict_epoch(s, Workload{4096, 1024}, SyncSetup{}, c, 2);
  const EpochPrediction i = predict_epoch(s, Workload{4096, 1024}, inter, c, 2);
  EXPECT_GT(n.naive_comm_s, 0.05);  // the link matters here (4 steps × 2 calls × ~10 ms)
  EXPECT_DOUBLE_EQ(i.epoch_s, n.epoch_s);
  // Negative control: with hidden layers interleaving does hide some comm.
  const SingleRun m = single_of("medium", 1.0);
  EXPECT_LT(predict_epoch(m, Workload{4096, 1024}, inter, c, 2).epoch_s,
            predict_epoch(m, Workload{4096, 1024}, SyncSetup{}, c, 2).epoch_s * 0.99);
}

TEST(StepModel, BucketedWithAnUnboundedCapIsNaiveFused) {
  const SingleRun s = single_of("large", 8.0);
  const CommModel c = ring_link(50, 300, 150);
  SyncSetup one_bucket{Mode::bucketed, false, 1e6, 1e6};
  SyncSetup fused{Mode::naive, true, 25, 1};
  const EpochPrediction b = predict_epoch(s, Workload{4096, 1024}, one_bucket, c, 2);
  const EpochPrediction f = predict_epoch(s, Workload{4096, 1024}, fused, c, 2);
  EXPECT_EQ(b.calls_per_step, 1);
  EXPECT_DOUBLE_EQ(b.epoch_s, f.epoch_s);
  // Negative control: the default caps give several buckets and a different epoch.
  const EpochPrediction d = predict_epoch(s, Workload{4096, 1024}, SyncSetup{Mode::bucketed, false, 25, 1}, c, 2);
  EXPECT_GT(d.calls_per_step, 1);
  EXPECT_NE(d.epoch_s, f.epoch_s);
}

TEST(StepModel, BucketCountsAreTheTrainers) {
  // The counts the cpu sweep recorded (docs/figures/cpu-run.jsonl, n_buckets) and the trainers'
  // own assignment.
  struct Case { const char* model; double cap; int buckets; };
  for (const Case& k : {Case{"small", 1, 5}, Case{"small", 25, 2}, Case{"medium", 1, 9}, Case{"medium", 4, 8},
                        Case{"medium", 25, 3}, Case{"large", 1, 13}, Case{"large", 25, 7}}) {
    const ModelSpec spec = parse_model_spec(k.model, 0);
    const std::vector<Launch> ls = launches(spec, SyncSetup{Mode::bucketed, false, k.cap, 1}, 1.0);
    EXPECT_EQ(static_cast<int>(ls.size()), k.buckets) << k.model << " cap " << k.cap;
    EXPECT_EQ(ls.size(), assign_buckets(spec.layout(), k.cap, 1).size());
    int64_t bytes = 0;
    for (const Launch& l : ls) bytes += l.nbytes;
    // Every gradient once, as the trainers send it: each bucket's slice (the layout's padding
    // between its tensors included), plus the loss slot.
    int64_t sent = 4;
    for (const Bucket& b : assign_buckets(spec.layout(), k.cap, 1)) sent += b.nbytes();
    EXPECT_EQ(bytes, sent);
    EXPECT_GE(bytes, (spec.n_params() + 1) * 4);
  }
}

TEST(StepSim, TransformerCommIsItsOwnTensorList) {
  // gpt-tiny: 28 tensors (12·L + 4), wte [256, 64] the largest and the last. Naive and interleaved
  // send every tensor of the model's own layout once (+ the loss slot in the last call), in
  // backward order; an MLP's widths would give another list entirely.
  const ModelSpec spec = parse_model_spec("gpt-tiny", 64);
  const ParamLayout layout = spec.layout();
  ASSERT_EQ(layout.tensors().size(), 28u);
  int64_t tensor_bytes = 0;
  for (const FlatTensor& t : layout.tensors()) tensor_bytes += t.nbytes();
  EXPECT_EQ(tensor_bytes, spec.n_params() * 4);
  for (Mode m : {Mode::naive, Mode::interleaved}) {
    const std::vector<Launch> ls = launches(spec, SyncSetup{m, false, 25, 1}, 1.0);
    ASSERT_EQ(ls.size(), 28u) << mode_name(m);
    int64_t sent = 0;
    for (size_t i = 0; i < ls.size(); ++i) {
      EXPECT_EQ(ls[i].nbytes, layout.tensors()[i].nbytes() + (i + 1 == ls.size() ? 4 : 0)) << i;
      sent += ls[i].nbytes;
    }
    EXPECT_EQ(sent, tensor_bytes + 4) << mode_name(m);
    EXPECT_EQ(ls.back().nbytes, 256 * 64 * 4 + 4);  // wte, the loss slot beside it
  }
  // Bucketed: the trainers' own buckets over that layout. The mid-size decoder at 25 MiB is
  // ln_f alone (the first bucket's 1 MiB cap) and everything else behind wte in one bucket.
  const ModelSpec mid = parse_model_spec("gpt:layers=4,dim=256,heads=4,vocab=8192,context=128", 64);
  for (double cap : {1.0, 4.0, 25.0}) {
    const std::vector<Bucket> bs = assign_buckets(mid.layout(), cap, 1);
    const std::vector<Launch> ls = launches(mid, SyncSetup{Mode::bucketed, false, cap, 1}, 1.0);
    ASSERT_EQ(ls.size(), bs.size()) << cap;
    for (size_t i = 0; i < ls.size(); ++i) EXPECT_EQ(ls[i].nbytes, bs[i].nbytes() + (i + 1 == ls.size() ? 4 : 0));
  }
  // What the sweep recorded (experiments/transformer/data/gpt-cpu.jsonl, n_buckets): 22, 6, 2.
  EXPECT_EQ(launches(mid, SyncSetup{Mode::bucketed, false, 1, 1}, 1.0).size(), 22u);
  EXPECT_EQ(launches(mid, SyncSetup{Mode::bucketed, false, 4, 1}, 1.0).size(), 6u);
  EXPECT_EQ(launches(mid, SyncSetup{Mode::bucketed, false, 25, 1}, 1.0).size(), 2u);
}

TEST(StepSim, TransformerBackwardPlanByHand) {
  // gpt-tiny at S = 64: d = 64, V = 256, L = 2. GEMM FLOPs per token:
  //   forward block 24·d² + 4·S·d = 98,304 + 16,384 = 114,688; head 2·d·V = 32,768
  //   forward = 2 · 114,688 + 32,768 = 262,144
  //   backward: head 4·d·V = 65,536 (ln_f ready at 327,680); block 1: mlp.c_proj dW 8·d² = 32,768
  //   (ready at 360,448), ...; total = L·(72·d² + 12·S·d) + 6·d·V = 2·(294,912 + 49,152) + 98,304 = 786,432
  const ModelSpec spec = parse_model_spec("gpt-tiny", 64);
  const BackwardPlan p = backward_plan(spec);
  const ParamLayout layout = spec.layout();
  ASSERT_EQ(p.tensors.size(), layout.tensors().size());
  EXPECT_DOUBLE_EQ(p.forward_share, 262144.0 / 786432);
  EXPECT_DOUBLE_EQ(step_flops_per_sample(spec), 64 * 786432.0);
  std::map<std::string, double> ready;
  for (size_t i = 0; i < p.tensors.size(); ++i) ready[layout.tensors()[i].name()] = p.tensors[i].ready;
  EXPECT_DOUBLE_EQ(ready["ln_f.weight"], 327680.0 / 786432);
  EXPECT_DOUBLE_EQ(ready["h.1.mlp.c_proj.weight"], 360448.0 / 786432);
  EXPECT_DOUBLE_EQ(ready["h.1.mlp.c_proj.bias"], ready["h.1.mlp.c_proj.weight"]);
  // Block 1 ends after 48·d² + 8·S·d = 229,376 more: ln_1 of block 1 ready at 557,056.
  EXPECT_DOUBLE_EQ(ready["h.1.ln_1.weight"], 557056.0 / 786432);
  // The tied embedding (and wpe) only at the very end.
  EXPECT_DOUBLE_EQ(ready["wte.weight"], 1.0);
  EXPECT_DOUBLE_EQ(ready["wpe.weight"], 1.0);
  // Backward order: never earlier than the tensor before it.
  for (size_t i = 1; i < p.tensors.size(); ++i) EXPECT_GE(p.tensors[i].ready, p.tensors[i - 1].ready) << i;
  // Interleaved therefore hides nothing of wte's all-reduce: the step's last launch is at t_c.
  EXPECT_DOUBLE_EQ(launches(spec, SyncSetup{Mode::interleaved, false, 25, 1}, 2.0).back().at, 2.0);
}

TEST(StepModel, TransformerComputeIsPerToken) {
  // gpt-tiny measured at S = 64: 2 s over 4096 / 1024 = 4 steps, 0.5 s a step of 1024 · 64 tokens.
  SingleRun s = single_of("gpt-tiny", 2.0);
  s.spec = parse_model_spec("gpt-tiny", 64);
  const CommModel c = ring_link(50, 300, 1);
  // The same workload: the measured step back, at K = 1.
  EXPECT_DOUBLE_EQ(step_compute_1(s, Workload{4096, 1024}), 0.5);
  EXPECT_DOUBLE_EQ(step_compute_1(s, Workload{4096, 512}), 0.25);
  // Half the tokens per sample: half the tokens, each at the FLOPs per token of S = 32
  // (L·(72·d² + 12·32·d) + 6·d·V = 737,280 against 786,432 at S = 64).
  const double at32 = 0.5 / (1024.0 * 64) * (737280.0 / 786432) * 1024 * 32;
  EXPECT_DOUBLE_EQ(step_compute_1(s, Workload{4096, 1024, 32}), at32);
  EXPECT_NEAR(predict_epoch(s, Workload{4096, 1024, 32}, SyncSetup{}, c, 1).epoch_s, 4 * at32, 1e-12);
  // Negative control: per sample (seq_len ignored) would have kept 0.5.
  EXPECT_LT(step_compute_1(s, Workload{4096, 1024, 32}), 0.26);
}

TEST(CommTime, HierarchicalLimitsAndATwoNodeCaseByHand) {
  CommModel h;
  h.algo = AllreduceAlgo::hier;
  h.link = LinkModel{"ib100", 5, 12.5, 1};
  h.intra = LinkModel{"nvlink", 1, 300, 1};
  h.gpus_per_node = 8;
  const size_t B = 2000000000;
  // One node: the intra ring alone.
  EXPECT_DOUBLE_EQ(h.seconds(B, 8), h.intra.ring_seconds(B, 8));
  // One GPU per node: the plain ring over the network.
  h.gpus_per_node = 1;
  EXPECT_DOUBLE_EQ(h.seconds(B, 8), h.link.ring_seconds(B, 8));
  // 2 nodes × 8: 2·7·(1 µs + B/8/300 GB/s) + 2·1·(5 µs + B/2/12.5 GB/s).
  h.gpus_per_node = 8;
  const double want = 14 * (1e-6 + B / 8.0 / 300e9) + 2 * (5e-6 + B / 2.0 / 12.5e9);
  EXPECT_NEAR(h.seconds(B, 16), want, 1e-12);
  EXPECT_LT(h.seconds(B, 16), h.link.ring_seconds(B, 16));  // cheaper than the flat ring on the slow link
  CommModel star = ring_link(5, 12.5, 1);
  star.algo = AllreduceAlgo::star;
  EXPECT_DOUBLE_EQ(star.seconds(B, 4), star.link.star_seconds(B, 4));
}

TEST(Calibration, LinkFitRecoversAlphaAndBeta) {
  // Rows made from α = 20 µs, β = 5 GB/s: ring t = 2(K-1)·(α + B/K/β).
  nlohmann::json j;
  j["benchmarks"] = nlohmann::json::array();
  for (int k : {2, 4}) {
    for (double bytes : {8.0, 1024.0, 1048576.0, 67108864.0}) {
      const double t = 2.0 * (k - 1) * (20e-6 + bytes / k / 5e9);
      j["benchmarks"].push_back({{"name", "allreduce/native/np:" + std::to_string(k) + "/bytes:" + std::to_string(bytes)},
                                 {"run_type", "iteration"}, {"real_time", t * 1e6}, {"time_unit", "us"},
                                 {"bytes", bytes}, {"nranks", k}});
      // Rows of another algorithm, 10× slower, must be left out.
      j["benchmarks"].push_back({{"name", "allreduce/star/np:" + std::to_string(k)}, {"run_type", "iteration"},
                                 {"real_time", t * 1e7}, {"time_unit", "us"}, {"bytes", bytes}, {"nranks", k}});
    }
  }
  const LinkFit f = fit_link_from_bench_text(j.dump(), "native", "test.json");
  EXPECT_EQ(f.points, 8);
  EXPECT_NEAR(f.alpha_us, 20, 1e-6);
  EXPECT_NEAR(f.gbps, 5, 1e-6);
  EXPECT_LT(f.rms_rel_residual, 1e-9);
  EXPECT_THROW(fit_link_from_bench_text(j.dump(), "ring", "test.json"), InputError);  // no such rows
  EXPECT_THROW(fit_link_from_bench_text("{}", "native", "test.json"), InputError);
}

TEST(PredictTable, EfficiencyGammaAmdahlAndKnee) {
  PredictContext ctx;
  ctx.workload = Workload{4096, 1024};
  ctx.comm = ring_link(50, 300, 150);
  const std::vector<int> ks = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const std::vector<PredictRow> rows = predict_rows({single_of("medium", 3.0)}, ctx, {Mode::naive}, ks);
  ASSERT_EQ(rows.size(), ks.size());
  std::optional<int> knee;
  for (const PredictRow& r : rows) {
    EXPECT_NEAR(r.speedup, 3.0 / r.p.epoch_s, 1e-12);
    EXPECT_NEAR(r.efficiency, r.speedup / r.world_size, 1e-12);
    EXPECT_NEAR(r.gamma, r.p.naive_comm_s / r.p.compute_s, 1e-12);
    const double f = 3.0 / (3.0 + r.p.naive_comm_s);
    EXPECT_NEAR(r.amdahl_max, 1 / ((1 - f) + f / r.world_size), 1e-12);
    // The ceiling holds for naive: T1/(T1/K + c) ≤ (T1 + c)/(c + T1/K).
    EXPECT_LE(r.speedup, r.amdahl_max * (1 + 1e-12));
    if (!knee && r.efficiency < 0.8) knee = r.world_size;
  }
  ASSERT_TRUE(knee.has_value());
  EXPECT_GT(*knee, 1);
  for (const PredictRow& r : rows) EXPECT_EQ(r.knee, knee);
}

}  // namespace
}  // namespace dpscale::test
