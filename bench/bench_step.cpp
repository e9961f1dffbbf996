// bench_step.cpp — is a training step GEMM-bound? A full step of the MLP on the CPU backend
// (forward, softmax cross-entropy, backward, SGD, all through Mlp) against exactly the same
// GEMMs called alone in the same GEMM library, on buffers laid out as Mlp lays out its own.
//
//   bench_step [--models=medium] [--batch=1024] [--threads=1] [--gemm=openblas,blis,onednn]
//              [--benchmark_repetitions=5] ...
//
// --gemm: the libraries to run the step in, one benchmark each (default: every one built in).
// Each benchmark iteration runs one step, then the step's GEMMs alone, each bracketed by a
// steady clock, so the two are measured interleaved and machine-load drift hits both alike.
// Manual time = the step. Counters: step_ms, gemm_ms, other_ms (step - GEMMs: the element-wise
// passes, column sums, SGD) and gemm_over_step = Σ gemm / Σ step over the iterations — the
// fraction of a step spent in GEMMs (the target: ≥ 0.85 for medium at batch 1024); gemm_GFLOPS
// and step_GFLOPS, the step's GEMM FLOPs over the GEMMs' time and over the step's time.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "models/gemm/step_gemms.h"
#include "models/cpu/cpu_device.h"
#include "models/gemm/gemm_library.h"
#include "core/errors.h"
#include "models/mlp.h"
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

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_step", [&] {
    int batch = 1024, threads = 1;
    std::vector<std::string> models = {"medium"};
    if (auto v = take_flag(argc, argv, "--batch")) batch = static_cast<int>(parse_int(*v, "--batch", 1, 1 << 20));
    if (auto v = take_flag(argc, argv, "--threads")) threads = static_cast<int>(parse_int(*v, "--threads", 1, 1024));
    if (auto v = take_flag(argc, argv, "--models")) models = split_list(*v);
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
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    std::vector<MlpSpec> specs;
    for (const std::string& m : models) specs.push_back(parse_model(m));
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
    std::fprintf(stderr, "# bench_step: CPU backend, %d thread(s), batch %d; gemm_over_step = "
                 "time of the step's GEMMs alone (same library) / time of the full step\n", threads, batch);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
