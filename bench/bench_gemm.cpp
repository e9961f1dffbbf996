// bench_gemm.cpp — every GEMM a training step of each preset runs, against one large square
// sgemm as the backend's ceiling.
//
//   bench_gemm [--batch=1024] [--threads=1] [--models=small,medium,large,xlarge] [--ceiling=4096]
//              [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json] ...
//
// Each shape goes through Device::gemm, so the CPU rows are OpenBLAS exactly as the trainers
// call it (one BLAS thread by default: one rank = one device), and the CUDA rows are cuBLAS
// (exact fp32, no TF32) — registered only when the binary has the CUDA backend and a GPU
// answers. Counters: GFLOPS (2mnk / time / 1e9) and pct_of_ceiling, this shape's GFLOP/s over
// the square sgemm's (measured once per backend, best of 5, before the first shape runs); CUDA
// rows also pct_of_peak, against the GPU's fp32 peak (SMs × lanes × 2 × clock: device.h), which
// the JSON output's context holds as cuda_fp32_peak_gflops beside cuda_device.
// Names: gemm/<backend>/<model>/<layers>/<kind>/<op(A)op(B)>/m:/n:/k:, e.g.
//   gemm/cpu/medium/L1/forward/NT/m:1024/n:2048/k:2048
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "gemm_shapes.h"
#include "models/device.h"
#include "models/errors.h"
#include "models/mlp_spec.h"

namespace dpscale::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Operands {
  DeviceBuffer<float> a, b, c;
  Operands(Device& dev, const GemmShape& s)
      : a(dev, static_cast<size_t>(s.a_count())), b(dev, static_cast<size_t>(s.b_count())),
        c(dev, static_cast<size_t>(s.c_count())) {
    dev.fill(a.data(), 0.5f, static_cast<int64_t>(a.size()));
    dev.fill(b.data(), 0.25f, static_cast<int64_t>(b.size()));
    dev.fill(c.data(), 0.0f, static_cast<int64_t>(c.size()));
  }
};

// One GEMM, finished: the CPU backend returns when done, CUDA needs the synchronize.
double time_gemm(Device& dev, const GemmShape& s, Operands& o) {
  const auto t0 = Clock::now();
  dev.gemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, o.a.data(), s.lda, o.b.data(), s.ldb, 0.0f,
           o.c.data(), s.ldc);
  dev.synchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

GemmShape square(int n) { return {0, GemmKind::forward, false, false, n, n, n, n, n, n}; }

// The ceiling of one backend: a square n³ sgemm, one untimed run then the best of five. Best,
// not median: a ceiling is what the machine can do, and on a shared machine interference only
// ever slows a run down (the shapes themselves report medians, so the ratio errs low).
class Ceiling {
 public:
  Ceiling(Device& dev, int n) : dev_(dev), n_(n) {}
  double gflops() {
    if (gflops_ == 0.0) {
      const GemmShape s = square(n_);
      Operands o(dev_, s);
      time_gemm(dev_, s, o);
      double best = 1e30;
      for (int i = 0; i < 5; ++i) best = std::min(best, time_gemm(dev_, s, o));
      gflops_ = s.flops() / best / 1e9;
    }
    return gflops_;
  }
  int n() const { return n_; }

 private:
  Device& dev_;
  int n_;
  double gflops_ = 0.0;
};

// The timed loop every GEMM benchmark shares: manual time from a steady clock around a
// finished GEMM, counters computed from our own totals.
void run_gemm(benchmark::State& state, Device& dev, const GemmShape& s, Ceiling* ceiling, double peak_gflops) {
  const double ceil_gflops = ceiling ? ceiling->gflops() : 0.0;
  Operands o(dev, s);
  time_gemm(dev, s, o);  // warm-up: first-touch, BLAS buffers, cuBLAS heuristics
  double total = 0.0;
  for (auto _ : state) {
    const double t = time_gemm(dev, s, o);
    state.SetIterationTime(t);
    total += t;
  }
  const double gflops = s.flops() * static_cast<double>(state.iterations()) / total / 1e9;
  state.counters["GFLOPS"] = gflops;
  if (ceiling) state.counters["pct_of_ceiling"] = 100.0 * gflops / ceil_gflops;
  if (peak_gflops > 0.0) state.counters["pct_of_peak"] = 100.0 * gflops / peak_gflops;
}

struct Config {
  int batch = 1024;
  int threads = 1;
  int ceiling_n = 4096;
  std::vector<std::string> models = preset_names();
};

Config parse_config(int& argc, char** argv) {
  Config c;
  if (auto v = take_flag(argc, argv, "--batch")) c.batch = static_cast<int>(parse_int(*v, "--batch", 1, 1 << 20));
  if (auto v = take_flag(argc, argv, "--threads")) c.threads = static_cast<int>(parse_int(*v, "--threads", 1, 1024));
  if (auto v = take_flag(argc, argv, "--ceiling")) c.ceiling_n = static_cast<int>(parse_int(*v, "--ceiling", 16, 32768));
  if (auto v = take_flag(argc, argv, "--models")) {
    c.models = split_list(*v);
    for (const auto& m : c.models) parse_model(m);  // InputError for an unknown preset/width list
  }
  return c;
}

// Registers the ceiling and every distinct shape of every model on one backend; `peak_gflops`
// > 0 adds pct_of_peak (the CUDA rows).
void register_backend(Device& dev, const std::string& tag, const Config& cfg, Ceiling& ceiling, double peak_gflops) {
  const GemmShape sq = square(cfg.ceiling_n);
  std::string sq_name = "gemm/";
  sq_name += tag;
  sq_name += "/ceiling/square" + sq.label().substr(std::string("L0/forward/NN").size());
  benchmark::RegisterBenchmark(sq_name.c_str(),
                               [&dev, sq, peak_gflops](benchmark::State& st) { run_gemm(st, dev, sq, nullptr, peak_gflops); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (const std::string& model : cfg.models) {
    const MlpSpec spec = parse_model(model);
    // One benchmark per distinct (kind, op, m, n, k); layers sharing a shape are named together.
    std::map<std::string, std::pair<GemmShape, std::string>> distinct;
    std::vector<std::string> order;
    for (const GemmShape& s : training_step_gemms(spec, cfg.batch)) {
      GemmShape key = s;
      key.layer = 0;
      const std::string k = key.label().substr(3);  // drop "L0/"
      // (built with += : GCC 12 warns falsely (-Wrestrict) on some `"lit" + std::string` chains)
      std::string layer = "L";
      layer += std::to_string(s.layer);
      auto [it, inserted] = distinct.try_emplace(k, s, layer);
      if (inserted) {
        order.push_back(k);
      } else {
        it->second.second += "+";
        it->second.second += layer;
      }
    }
    for (const std::string& k : order) {
      const GemmShape s = distinct.at(k).first;
      std::string name = "gemm/";
      for (const std::string& part : {tag, model, distinct.at(k).second}) name += part + "/";
      name += k;
      benchmark::RegisterBenchmark(name.c_str(), [&dev, s, &ceiling, peak_gflops](benchmark::State& st) {
        run_gemm(st, dev, s, &ceiling, peak_gflops);
      })->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_gemm", [&] {
    const Config cfg = parse_config(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

    std::vector<std::unique_ptr<Device>> devices;
    std::vector<std::unique_ptr<Ceiling>> ceilings;
    devices.push_back(make_device(DeviceOptions{"cpu", cfg.threads, false, 0}));
    ceilings.push_back(std::make_unique<Ceiling>(*devices.back(), cfg.ceiling_n));
    register_backend(*devices.back(), "cpu", cfg, *ceilings.back(), 0.0);
    if (cuda_compiled() && cuda_device_count() > 0) {
      devices.push_back(make_device(DeviceOptions{"cuda", cfg.threads, false, 0}));
      ceilings.push_back(std::make_unique<Ceiling>(*devices.back(), cfg.ceiling_n));
      const double peak = gpu_fp32_peak_gflops(0);
      benchmark::AddCustomContext("cuda_device", devices.back()->name());
      benchmark::AddCustomContext("cuda_fp32_peak_gflops", std::to_string(peak));
      std::fprintf(stderr, "# bench_gemm: cuda: %s, fp32 peak %.0f GFLOP/s\n", devices.back()->name().c_str(), peak);
      register_backend(*devices.back(), "cuda", cfg, *ceilings.back(), peak);
    } else {
      std::fprintf(stderr, "# bench_gemm: cuBLAS rows skipped (%s)\n",
                   cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
    }
    std::fprintf(stderr, "# bench_gemm: batch %d, %d BLAS thread(s), ceiling = square sgemm %d^3; cpu: %s\n",
                 cfg.batch, cfg.threads, cfg.ceiling_n, devices.front()->name().c_str());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
