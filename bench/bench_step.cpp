// bench_step.cpp — is a training step GEMM-bound, and where does the rest of it go?
//
//   bench_step [--models=medium] [--batch=1024] [--threads=1] [--gemm=openblas,blis,onednn]
//              [--parts=cuda] [--tf32] [--seq-len=0] [--benchmark_repetitions=5] ...
//
// step/<model>/batch:B/threads:T/gemm:<library> — a full step of the MLP on the CPU backend
// (forward, softmax cross-entropy, backward, SGD, all through Mlp) against exactly the same GEMMs
// called alone in the same GEMM library, on buffers laid out as Mlp lays out its own; --gemm: the
// libraries to run the step in, one benchmark each (default: every one built in). Each benchmark
// iteration runs one step, then the step's GEMMs alone, each bracketed by a steady clock, so the
// two are measured interleaved and machine-load drift hits both alike. Manual time = the step.
// Counters: step_ms, gemm_ms, other_ms (step - GEMMs: the element-wise passes, column sums, SGD)
// and gemm_over_step = Σ gemm / Σ step over the iterations — the fraction of a step spent in GEMMs
// (the target: >= 0.85 for medium at batch 1024); gemm_GFLOPS and step_GFLOPS, the step's GEMM
// FLOPs over the GEMMs' time and over the step's time.
//
// step/<transformer>/batch:B/seq:S/threads:T/gemm:<library> (--models naming gpt-tiny, gpt2-small,
// gpt2-medium or gpt:layers=..,dim=..,heads=..,vocab=..,context=..; --seq-len S, 0 = the context)
// — a full step of the decoder (Gpt: forward, cross-entropy, backward, SGD) with every GEMM it
// calls through Device::gemm timed where it runs (a GemmLibrary in between that puts a steady
// clock around each call and keeps its arguments), against the same calls — shapes, strides,
// α, β, in the step's order — replayed alone in the same library, timed the same way,
// interleaved with the steps, twice: on scratch operands (one set for every call, so they stay in
// cache) and in place (the step's own buffers at the addresses the step passed, so each call
// reads what is left in cache of the activations the step's calls and element-wise passes
// touched, as in the step, without those passes in between). Counters: step_ms, gemm_ms (the
// GEMMs inside the step), alone_ms and in_place_ms (the same GEMMs alone, each way),
// gemm_over_step, calls (GEMM calls a step: attention's are one per sample and head), and
// rate_over_alone = alone_ms / gemm_ms, rate_over_in_place = in_place_ms / gemm_ms: the rate the
// step's GEMMs run at as a fraction of the library's own rate on those shapes (the target:
// >= 0.9), with warm operands and with the step's; each split into attention's per-(sample, head)
// products (attention_ms, attention_rate_over_*) and the rest, the Conv1D layers and the tied
// head (dense_ms, dense_rate_over_*).
//
// parts/<backend>/<model>/batch:B[/tf32] (--parts: cpu, cuda; cuda registered only where a GPU
// answers; the CPU in --gemm auto's library, the trainers' default) — the step's parts on any
// Device, the GPU's breakdown. Per iteration, interleaved:
//   step         Mlp: forward, loss, backward, the update with its finite check, the loss read —
//                a training step of train_single_gpu, host wait included (host clock)
//   gemm         the step's GEMMs alone (models/gemm/step_gemms.h) through Device::gemm, on scratch
//                operands; the forward ones through Device::linear_forward where the device adds
//                the bias and ReLU in the GEMM's epilogue (CUDA)
//   elementwise  bias + ReLU of every layer (where not in the GEMM), ReLU backward, softmax
//                cross-entropy, bias column sums
//   optimizer    the update with its finite check folded in (what the step runs)
//   loss_read    the loss copy queued and the losses read back: the step's host wait, on an idle
//                device (host clock)
//   events       one event pair (IntervalTimer start + stop), host time, mean over 1000 pairs
// each part on the device's interval timer (CUDA: events around it, read after) unless said.
// Counters: <part>_ms, other_ms = step − the parts (launch gaps, host work between kernels), and
// gemm_over_step. With --tf32 the CUDA GEMMs run on TF32 tensor cores (the trainers' --tf32).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "models/gemm/step_gemms.h"
#include "models/cpu/cpu_device.h"
#include "models/gemm/gemm_library.h"
#include "models/device.h"
#include "core/errors.h"
#include "models/interval_timer.h"
#include "models/mlp.h"
#include "models/model_spec.h"
#include "models/data/rng.h"

namespace dpscale::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The GEMMs of one step, replayed straight into the GEMM library with the operands Mlp would use: a
// flat parameter and gradient buffer with the same ParamLayout offsets, one activation buffer
// per layer and two ping-pong buffers for dY/dX. Mirrors models/mlp.cpp call for call.
class StepGemms {
 public:
  StepGemms(const MlpSpec& spec, int batch)
      : spec_(spec), layout_(spec), batch_(batch),
        params_(static_cast<size_t>(layout_.param_buffer_count()), 0.01f),
        grads_(static_cast<size_t>(layout_.grad_buffer_count()), 0.0f),
        x_(static_cast<size_t>(batch) * spec.in_width(), 0.5f),
        da_(static_cast<size_t>(batch) * spec.max_width(), 0.01f),
        db_(static_cast<size_t>(batch) * spec.max_width(), 0.01f) {
    for (int l = 0; l < spec.n_layers(); ++l) acts_.emplace_back(static_cast<size_t>(batch) * spec.widths[l + 1], 0.1f);
  }

  void run(GemmLibrary& lib) {
    const int B = batch_;
    const float* in = x_.data();
    for (int l = 0; l < spec_.n_layers(); ++l) {
      const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
      // (B,in) x (out,in)^T -> (B,out), β = 0
      lib.sgemm(false, true, B, n_out, n_in, 1.0f, in, n_in, params_.data() + layout_.weight(l).offset, n_in, 0.0f,
                acts_[l].data(), n_out);
      in = acts_[l].data();
    }
    float* dy = da_.data();
    float* dx = db_.data();
    for (int l = spec_.n_layers() - 1; l >= 0; --l) {
      const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
      const float* lin = l == 0 ? x_.data() : acts_[l - 1].data();
      // dW: (B,out)^T x (B,in) -> (out,in), β = 0
      lib.sgemm(true, false, n_out, n_in, B, 1.0f, dy, n_out, lin, n_in, 0.0f,
                grads_.data() + layout_.weight(l).offset, n_in);
      if (l == 0) break;
      // dX: (B,out) x (out,in) -> (B,in), β = 0
      lib.sgemm(false, false, B, n_in, n_out, 1.0f, dy, n_out, params_.data() + layout_.weight(l).offset, n_in, 0.0f,
                dx, n_in);
      std::swap(dy, dx);
    }
  }

 private:
  MlpSpec spec_;
  ParamLayout layout_;
  int batch_;
  std::vector<float> params_, grads_, x_, da_, db_;
  std::vector<std::vector<float>> acts_;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void run_step(benchmark::State& state, const MlpSpec& spec, int batch, int threads, const std::string& gemm) {
  CpuDevice dev(threads, make_gemm_library(gemm, threads), "requested", "");
  const std::unique_ptr<GemmLibrary> lib = make_gemm_library(gemm, threads);
  Mlp mlp(dev, spec, batch);
  mlp.init_params(42);
  // A synthetic batch as the workshop's: standard-normal features, labels 0..out-1.
  DeviceBuffer<float> x(dev, static_cast<size_t>(batch) * spec.in_width());
  DeviceBuffer<int32_t> labels(dev, static_cast<size_t>(batch));
  const CounterRng rng(7, 0);
  for (size_t i = 0; i < x.size(); ++i) x.data()[i] = rng.normal(i);
  for (int i = 0; i < batch; ++i) labels.data()[i] = i % spec.out_width();
  const SgdConfig sgd{0.001f, 0.0f, 0.0f};
  StepGemms gemms(spec, batch);

  auto step = [&] {
    mlp.forward(x.data(), batch);
    mlp.loss(labels.data(), batch, 1.0f / batch);
    mlp.backward(x.data(), batch, nullptr);
    mlp.sgd_step(sgd);
  };
  step();  // warm-up both: first touch, the library's buffers
  gemms.run(*lib);

  double step_total = 0.0, gemm_total = 0.0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    step();
    const double t_step = seconds_since(t0);
    t0 = Clock::now();
    gemms.run(*lib);
    const double t_gemm = seconds_since(t0);
    state.SetIterationTime(t_step);
    step_total += t_step;
    gemm_total += t_gemm;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["step_ms"] = 1e3 * step_total / n;
  state.counters["gemm_ms"] = 1e3 * gemm_total / n;
  state.counters["other_ms"] = 1e3 * (step_total - gemm_total) / n;
  state.counters["gemm_over_step"] = gemm_total / step_total;
  double flops = 0.0;
  for (const GemmShape& s : training_step_gemms(spec, batch)) flops += s.flops();
  state.counters["gemm_GFLOPS"] = flops * n / gemm_total / 1e9;
  state.counters["step_GFLOPS"] = flops * n / step_total / 1e9;
}

// The arguments of one GEMM call, as Device::gemm passed them.
struct GemmCall {
  bool trans_a, trans_b;
  int m, n, k;
  float alpha;
  int lda, ldb;
  float beta;
  int ldc;
  const float* a;  // the step's own operands (replayed in place)
  const float* b;
  float* c;
  long long a_count() const { return static_cast<long long>(trans_a ? k : m) * lda; }
  long long b_count() const { return static_cast<long long>(trans_b ? n : k) * ldb; }
  long long c_count() const { return static_cast<long long>(m) * ldc; }
};

// Between CpuDevice and its GEMM library: a steady clock around every call (the sum kept), and
// each call's arguments while `recording`.
class TimedGemm final : public GemmLibrary {
 public:
  explicit TimedGemm(std::unique_ptr<GemmLibrary> lib) : lib_(std::move(lib)) {}
  void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
             int ldb, float beta, float* c, int ldc) override {
    const auto t0 = Clock::now();
    lib_->sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    seconds_ += t;
    if (recording) calls.push_back({trans_a, trans_b, m, n, k, alpha, lda, ldb, beta, ldc, a, b, c});
    if (per_call.size() <= static_cast<size_t>(count_)) per_call.resize(static_cast<size_t>(count_) + 1, 0.0);
    per_call[static_cast<size_t>(count_)] += t;
    ++count_;
  }
  GemmLibraryInfo info() const override { return lib_->info(); }
  double take_seconds() {
    const double s = seconds_;
    seconds_ = 0;
    return s;
  }
  long long take_count() {
    const long long n = count_;
    count_ = 0;
    return n;
  }
  bool recording = false;
  std::vector<GemmCall> calls;
  std::vector<double> per_call;  // seconds by the call's place in the step (take_count() starts a step)

 private:
  std::unique_ptr<GemmLibrary> lib_;
  double seconds_ = 0;
  long long count_ = 0;
};

// One step of the transformer with its GEMMs timed in place, against the same GEMMs alone (top
// of file).
void run_gpt_step(benchmark::State& state, const ModelSpec& spec, int batch, int threads, const std::string& gemm) {
  auto timed_owned = std::make_unique<TimedGemm>(make_gemm_library(gemm, threads));
  TimedGemm* timed = timed_owned.get();
  CpuDevice dev(threads, std::move(timed_owned), "requested", "");
  const std::unique_ptr<GemmLibrary> lib = make_gemm_library(gemm, threads);
  const std::unique_ptr<Model> model = make_model(dev, spec, batch);
  model->init_params(42);
  // Synthetic tokens and targets: ids below the vocabulary (the step's cost does not depend on them).
  const int S = spec.seq_len(), V = spec.out_width();
  DeviceBuffer<float> x(dev, static_cast<size_t>(batch) * S);
  DeviceBuffer<int32_t> labels(dev, static_cast<size_t>(batch) * S);
  const CounterRng rng(7, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    x.data()[i] = static_cast<float>(static_cast<int>(rng.uniform01(i) * V) % V);
    labels.data()[i] = static_cast<int32_t>(rng.uniform01(i + x.size()) * V) % V;
  }
  const SgdConfig sgd{0.001f, 0.0f, 0.0f};
  auto step = [&] {
    model->forward(x.data(), batch);
    model->loss(labels.data(), batch, 1.0f / static_cast<float>(batch * S));
    model->backward(x.data(), batch, nullptr);
    model->sgd_step(sgd);
  };
  // Warm-up (first touch, the library's buffers), recording the step's calls.
  timed->recording = true;
  step();
  timed->recording = false;
  const std::vector<GemmCall> calls = timed->calls;
  long long a_max = 1, b_max = 1, c_max = 1;
  double flops = 0;
  for (const GemmCall& c : calls) {
    a_max = std::max(a_max, c.a_count());
    b_max = std::max(b_max, c.b_count());
    c_max = std::max(c_max, c.c_count());
    flops += 2.0 * c.m * c.n * c.k;
  }
  std::vector<float> a(static_cast<size_t>(a_max), 0.01f), b(static_cast<size_t>(b_max), 0.01f),
      c(static_cast<size_t>(c_max), 0.0f);
  // Attention's per-(sample, head) products are the calls no dimension of which reaches the
  // batch's tokens (every other GEMM has N = batch · S rows on one side); the two groups' rates
  // are reported apart.
  const long long tokens = static_cast<long long>(batch) * S;
  std::vector<bool> attention(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    attention[i] = calls[i].m < tokens && calls[i].n < tokens && calls[i].k < tokens;
  }
  // The same calls alone, each under the same clock as in the step: on the scratch operands (one
  // set, in cache) or in place, on the step's own buffers at the addresses the step used (its
  // activations and gradients, as large as the step's, in the step's order). The step's next
  // forward and backward overwrite whatever the replay in place writes, before anything reads it:
  // forward's β = 1 GEMMs add to a residual that forward copies in first, and backward's are β = 0
  // (the step here does not accumulate).
  std::vector<double> scratch_per_call(calls.size(), 0.0), in_place_per_call(calls.size(), 0.0);
  auto alone = [&](bool in_place, std::vector<double>& per_call) {
    double t = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const GemmCall& g = calls[i];
      const float* pa = in_place ? g.a : a.data();
      const float* pb = in_place ? g.b : b.data();
      float* pc = in_place ? g.c : c.data();
      const auto t0 = Clock::now();
      lib->sgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, pa, g.lda, pb, g.ldb, g.beta, pc, g.ldc);
      const double dt = seconds_since(t0);
      per_call[i] += dt;
      t += dt;
    }
    return t;
  };
  alone(false, scratch_per_call);
  alone(true, in_place_per_call);
  timed->take_seconds();
  timed->take_count();
  std::fill(timed->per_call.begin(), timed->per_call.end(), 0.0);
  std::fill(scratch_per_call.begin(), scratch_per_call.end(), 0.0);
  std::fill(in_place_per_call.begin(), in_place_per_call.end(), 0.0);

  double step_total = 0, gemm_total = 0, alone_total = 0, in_place_total = 0;
  long long n_calls = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    step();
    const double t_step = seconds_since(t0);
    gemm_total += timed->take_seconds();
    n_calls += timed->take_count();
    in_place_total += alone(true, in_place_per_call);
    alone_total += alone(false, scratch_per_call);
    state.SetIterationTime(t_step);
    step_total += t_step;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["step_ms"] = 1e3 * step_total / n;
  state.counters["gemm_ms"] = 1e3 * gemm_total / n;
  state.counters["alone_ms"] = 1e3 * alone_total / n;
  state.counters["in_place_ms"] = 1e3 * in_place_total / n;
  state.counters["gemm_over_step"] = gemm_total / step_total;
  state.counters["rate_over_alone"] = alone_total / gemm_total;
  state.counters["rate_over_in_place"] = in_place_total / gemm_total;
  state.counters["calls"] = static_cast<double>(n_calls) / n;
  state.counters["gemm_GFLOPS"] = flops * n / gemm_total / 1e9;
  state.counters["alone_GFLOPS"] = flops * n / alone_total / 1e9;
  double in_att = 0, in_dense = 0, al_att = 0, al_dense = 0, ip_att = 0, ip_dense = 0;
  for (size_t i = 0; i < calls.size() && i < timed->per_call.size(); ++i) {
    (attention[i] ? in_att : in_dense) += timed->per_call[i];
    (attention[i] ? al_att : al_dense) += scratch_per_call[i];
    (attention[i] ? ip_att : ip_dense) += in_place_per_call[i];
  }
  state.counters["attention_ms"] = 1e3 * in_att / n;
  state.counters["attention_rate_over_alone"] = in_att > 0 ? al_att / in_att : 0;
  state.counters["attention_rate_over_in_place"] = in_att > 0 ? ip_att / in_att : 0;
  state.counters["dense_ms"] = 1e3 * in_dense / n;
  state.counters["dense_rate_over_alone"] = in_dense > 0 ? al_dense / in_dense : 0;
  state.counters["dense_rate_over_in_place"] = in_dense > 0 ? ip_dense / in_dense : 0;
}

// "small,gpt:layers=4,dim=256,heads=4,vocab=8192,context=128": the list split at commas, a
// transformer's key=value pieces kept with the gpt: spec they belong to.
std::vector<std::string> split_models(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& piece : split_list(text)) {
    const bool continues = !out.empty() && out.back().rfind("gpt:", 0) == 0 && piece.find('=') != std::string::npos &&
                           piece.rfind("gpt:", 0) != 0;
    if (continues) {
      out.back() += "," + piece;
    } else {
      out.push_back(piece);
    }
  }
  return out;
}

// The parts of a step on `dev` (top of file).
void run_parts(benchmark::State& state, Device& dev, const MlpSpec& spec, int batch) {
  Mlp mlp(dev, spec, batch);
  mlp.init_params(42);
  DeviceBuffer<float> x(dev, static_cast<size_t>(batch) * spec.in_width());
  DeviceBuffer<int32_t> labels(dev, static_cast<size_t>(batch));
  {
    std::vector<float> hx(x.size());
    const CounterRng rng(7, 0);
    for (size_t i = 0; i < hx.size(); ++i) hx[i] = rng.normal(i);
    std::vector<int32_t> hy(static_cast<size_t>(batch));
    for (int i = 0; i < batch; ++i) hy[static_cast<size_t>(i)] = i % spec.out_width();
    dev.upload(x.data(), hx.data(), hx.size() * sizeof(float));
    dev.upload(labels.data(), hy.data(), hy.size() * sizeof(int32_t));
  }
  const SgdConfig sgd{0.001f, 0.0f, 0.0f};

  // Scratch operands for the GEMMs alone, as large as the step's largest.
  const std::vector<GemmShape> shapes = training_step_gemms(spec, batch);
  long long a_max = 1, b_max = 1, c_max = 1;
  for (const GemmShape& g : shapes) {
    a_max = std::max(a_max, g.a_count());
    b_max = std::max(b_max, g.b_count());
    c_max = std::max(c_max, g.c_count());
  }
  DeviceBuffer<float> ga(dev, static_cast<size_t>(a_max)), gb(dev, static_cast<size_t>(b_max)),
      gc(dev, static_cast<size_t>(c_max));
  dev.fill(ga.data(), 0.01f, a_max);
  dev.fill(gb.data(), 0.01f, b_max);
  // Scratch for the element-wise passes: activations of the widest layer, logits, row losses.
  const int wmax = spec.max_width();
  DeviceBuffer<float> act(dev, static_cast<size_t>(batch) * wmax), act2(dev, static_cast<size_t>(batch) * wmax),
      bias(dev, static_cast<size_t>(wmax)), sums(dev, static_cast<size_t>(wmax)), scalars(dev, 2);
  dev.fill(act.data(), 0.5f, static_cast<int64_t>(act.size()));
  dev.fill(act2.data(), 0.5f, static_cast<int64_t>(act2.size()));
  dev.fill(bias.data(), -0.25f, wmax);

  const auto step = [&] {
    mlp.forward(x.data(), batch);
    mlp.loss(labels.data(), batch, 1.0f / static_cast<float>(batch));
    mlp.backward(x.data(), batch, nullptr);
    mlp.sgd_step(sgd, /*check_finite=*/true);
    mlp.read_losses();
  };
  // Where the device adds the bias and the ReLU inside the forward GEMM (Device::fuses_bias_act),
  // the forward GEMMs are timed as the step runs them, epilogue and all, and the element-wise
  // passes leave out the bias pass they no longer need.
  const bool fused = dev.fuses_bias_act();
  const auto gemms = [&] {
    for (const GemmShape& g : shapes) {
      if (fused && g.kind == GemmKind::forward) {
        dev.linear_forward(ga.data(), gb.data(), bias.data(), gc.data(), g.m, g.k, g.n, g.layer + 1 < spec.n_layers());
        continue;
      }
      dev.gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, 1.0f, ga.data(), g.lda, gb.data(), g.ldb, 0.0f, gc.data(), g.ldc);
    }
  };
  const auto elementwise = [&] {
    for (int l = 0; l < spec.n_layers() && !fused; ++l) {
      dev.bias_act(act.data(), bias.data(), batch, spec.widths[l + 1], l + 1 < spec.n_layers());
    }
    dev.softmax_xent(act.data(), labels.data(), batch, spec.out_width(), 1.0f / static_cast<float>(batch), act2.data(),
                     scalars.data(), scalars.data() + 1, 1.0f);
    for (int l = spec.n_layers() - 1; l >= 0; --l) {
      dev.column_sum(act2.data(), batch, spec.widths[l + 1], sums.data());
      if (l > 0) dev.relu_backward(act2.data(), act.data(), static_cast<int64_t>(batch) * spec.widths[l]);
    }
  };
  const auto optimizer = [&] { mlp.sgd_step(sgd, /*check_finite=*/true); };

  const std::unique_ptr<IntervalTimer> timer = dev.make_interval_timer();
  const auto on_device = [&](const auto& f) {
    timer->start();
    f();
    timer->stop();
    return timer->take_seconds();
  };
  const auto on_host = [&](const auto& f) {
    dev.synchronize();
    const auto t0 = Clock::now();
    f();
    return seconds_since(t0);
  };
  step();  // warm-up: cuBLAS heuristics, first touch
  on_device(gemms);
  on_device(elementwise);

  double t_step = 0, t_gemm = 0, t_elem = 0, t_opt = 0, t_read = 0;
  for (auto _ : state) {
    const double s_step = on_host(step);
    t_step += s_step;
    t_gemm += on_device(gemms);
    t_elem += on_device(elementwise);
    t_opt += on_device(optimizer);
    t_read += on_host([&] { mlp.read_losses(); });
    state.SetIterationTime(s_step);
  }
  // The host cost of an event pair (what the step's timers and the DP loop's events cost a step).
  constexpr int kPairs = 1000;
  const auto t0 = Clock::now();
  for (int i = 0; i < kPairs; ++i) {
    timer->start();
    timer->stop();
  }
  const double t_events = seconds_since(t0) / kPairs;
  timer->take_seconds();

  const double n = static_cast<double>(state.iterations());
  state.counters["step_ms"] = 1e3 * t_step / n;
  state.counters["gemm_ms"] = 1e3 * t_gemm / n;
  state.counters["elementwise_ms"] = 1e3 * t_elem / n;
  state.counters["optimizer_ms"] = 1e3 * t_opt / n;
  state.counters["loss_read_ms"] = 1e3 * t_read / n;
  state.counters["events_ms"] = 1e3 * t_events;
  state.counters["other_ms"] = 1e3 * (t_step - t_gemm - t_elem - t_opt - t_read) / n;
  state.counters["gemm_over_step"] = t_gemm / t_step;
  double flops = 0.0;
  for (const GemmShape& g : shapes) flops += g.flops();
  state.counters["step_TFLOPS"] = flops * n / t_step / 1e12;
}

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_step", [&] {
    int batch = 1024, threads = 1, seq_len = 0;
    const bool tf32 = take_switch(argc, argv, "--tf32");
    std::vector<std::string> models = {"medium"}, parts = {"cuda"};
    if (auto v = take_flag(argc, argv, "--batch")) batch = static_cast<int>(parse_int(*v, "--batch", 1, 1 << 20));
    if (auto v = take_flag(argc, argv, "--threads")) threads = static_cast<int>(parse_int(*v, "--threads", 1, 1024));
    if (auto v = take_flag(argc, argv, "--models")) models = split_models(*v);
    if (auto v = take_flag(argc, argv, "--seq-len")) seq_len = static_cast<int>(parse_int(*v, "--seq-len", 0, 1 << 16));
    std::vector<std::string> gemms;
    if (auto v = take_flag(argc, argv, "--gemm")) {
      gemms = split_list(*v);
      for (const std::string& g : gemms) {
        if (const std::string missing = gemm_library_missing(g); !missing.empty()) throw InputError("--gemm " + g + ": " + missing);
      }
    } else {
      for (const std::string& g : gemm_library_names()) {
        if (gemm_library_missing(g).empty()) gemms.push_back(g);
      }
    }
    if (auto v = take_flag(argc, argv, "--parts")) parts = split_list(*v);
    for (const std::string& p : parts) {
      if (p != "cpu" && p != "cuda" && p != "none") throw InputError("--parts: unknown backend '" + p + "' (use cpu, cuda, none)");
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    // The MLPs' steps and parts; the transformers' steps (gpt_specs) with their GEMMs timed in place.
    std::vector<MlpSpec> specs;
    std::vector<ModelSpec> gpt_specs;
    std::vector<std::string> mlp_names;
    for (const std::string& m : models) {
      if (is_gpt_model(m)) {
        gpt_specs.push_back(parse_model_spec(m, seq_len));
      } else {
        specs.push_back(parse_model(m));
        mlp_names.push_back(m);
      }
    }
    models = mlp_names;
    for (const ModelSpec& spec : gpt_specs) {
      for (const std::string& gemm : gemms) {
        const std::string name = "step/" + spec.key() + "/batch:" + std::to_string(batch) + "/seq:" +
                                 std::to_string(spec.seq_len()) + "/threads:" + std::to_string(threads) + "/gemm:" + gemm;
        benchmark::RegisterBenchmark(name.c_str(), [&spec, batch, threads, gemm](benchmark::State& st) {
          run_gpt_step(st, spec, batch, threads, gemm);
        })->UseManualTime()->MinTime(3.0)->Unit(benchmark::kMillisecond);
      }
    }
    for (const MlpSpec& spec : specs) {
      for (const std::string& gemm : gemms) {
        std::string name = "step/";
        name += models[&spec - specs.data()];
        name += "/batch:" + std::to_string(batch) + "/threads:" + std::to_string(threads) + "/gemm:" + gemm;
        benchmark::RegisterBenchmark(name.c_str(), [&spec, batch, threads, gemm](benchmark::State& st) {
          run_step(st, spec, batch, threads, gemm);
        })->UseManualTime()->MinTime(3.0)->Unit(benchmark::kMillisecond);
      }
    }
    std::vector<std::unique_ptr<Device>> devices;
    for (const std::string& p : parts) {
      if (p == "none") continue;
      if (p == "cuda" && !(cuda_compiled() && cuda_device_count() > 0)) {
        std::fprintf(stderr, "# bench_step: parts/cuda skipped (%s)\n",
                     cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
        continue;
      }
      devices.push_back(make_device(DeviceOptions{p, threads, tf32, 0}));
      Device* dev = devices.back().get();
      if (p == "cuda") benchmark::AddCustomContext("cuda_device", dev->name());
      for (const MlpSpec& spec : specs) {
        const std::string name = "parts/" + p + "/" + models[&spec - specs.data()] + "/batch:" + std::to_string(batch) +
                                 (tf32 && p == "cuda" ? "/tf32" : "");
        benchmark::RegisterBenchmark(name.c_str(), [dev, &spec, batch](benchmark::State& st) {
          run_parts(st, *dev, spec, batch);
        })->UseManualTime()->Unit(benchmark::kMillisecond);
      }
    }
    std::fprintf(stderr, "# bench_step: CPU backend, %d BLAS thread(s), batch %d; gemm_over_step = "
                 "time of the step's GEMMs alone (same library) / time of the full step\n", threads, batch);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
