// bench_gemm.cpp — every GEMM a training step of each preset runs, in each CPU GEMM library side
// by side, against one large square sgemm as each library's ceiling.
//
//   bench_gemm [--batch=1024] [--ks=1] [--threads=1] [--models=small,medium,large,xlarge]
//              [--gemm=openblas,blis,onednn] [--ceiling=4096] [--cublas-math=pedantic[,default][,tf32]]
//              [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json] ...
//
// --gemm lists the CPU GEMM libraries to time (models/gemm/gemm_library.h; default: every one
// built in), each on a CpuDevice of its own, under the tag cpu-<library>. --ks lists rank counts
// K: each model's step is timed at the local batch batch/K, as a rank of a K-rank run computes it
// (segment K:<k> of the name). experiments/gemm-libraries/table.py turns the JSON into that
// experiment's table of the libraries side by side, per model and K.
//
// --cublas-math lists the cuBLAS math modes to time (models/device.h), each on a device of its
// own: `pedantic` (the trainers' exact fp32) under the tag `cuda`, any other as `cuda-<mode>`
// (gemm/cuda-default/...), so CUBLAS_DEFAULT_MATH and CUBLAS_PEDANTIC_MATH can be compared shape by
// shape on the same GPU in one run (the GPU kit does).
//
// Each shape goes through Device::gemm, so the CPU rows are each library exactly as the trainers
// call it (one thread by default: one rank = one device), and the CUDA rows are cuBLAS
// (exact fp32, no TF32) — registered only when the binary has the CUDA backend and a GPU
// answers. Counters: GFLOPS (2mnk / time / 1e9) and pct_of_ceiling, this shape's GFLOP/s over
// the square sgemm's (measured once per backend, best of 5, before the first shape runs); CUDA
// rows also pct_of_peak, against the GPU's fp32 peak (SMs × lanes × 2 × clock: device.h), which
// the JSON output's context holds as cuda_fp32_peak_gflops beside cuda_device.
// Timing: a loop of back-to-back GEMMs between the two marks of the device's IntervalTimer —
// CUDA events on the compute stream (no launch or host-sync latency inside, which would swamp
// the small shapes), the host clock on the synchronous CPU backend; the loop is long enough for
// about a millisecond of GEMMs (counter gemms_per_loop), and its time is divided by its length.
// Names: gemm/<backend>/<model>/K:<k>/<layers>/<kind>/<op(A)op(B)>/m:/n:/k:, e.g.
//   gemm/cpu-blis/medium/K:1/L1+L2/forward/NT/m:1024/n:2048/k:2048
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "models/gemm/step_gemms.h"
#include "models/device.h"
#include "core/errors.h"
#include "models/interval_timer.h"
#include "models/mlp_spec.h"

namespace dpscale::bench {
namespace {

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

// Seconds per GEMM over a loop of `reps` back-to-back GEMMs between two marks of the device's
// interval timer (CUDA: events; CPU: the host clock). take_seconds() waits for the loop, outside
// the interval.
double time_gemms(Device& dev, IntervalTimer& timer, const GemmShape& s, Operands& o, int reps) {
  timer.start();
  for (int i = 0; i < reps; ++i) {
    dev.gemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, o.a.data(), s.lda, o.b.data(), s.ldb, 0.0f,
             o.c.data(), s.ldc);
  }
  timer.stop();
  return timer.take_seconds() / reps;
}

// GEMMs per timed loop: about kLoopSeconds of them, from one loop of 8 (1 .. 10 000). Measured
// once per device and shape and kept: every repetition of a benchmark must run the same number
// of iterations (Google Benchmark's statistics check it), and on a busy machine a second
// measurement would give another length.
constexpr double kLoopSeconds = 1e-3;
int loop_length(Device& dev, IntervalTimer& timer, const GemmShape& s, Operands& o) {
  static std::map<std::pair<const Device*, std::string>, int> lengths;
  const auto key = std::make_pair(static_cast<const Device*>(&dev), s.call_key());
  if (const auto it = lengths.find(key); it != lengths.end()) return it->second;
  const double one = time_gemms(dev, timer, s, o, 8);
  const int n = one > 0.0 ? static_cast<int>(std::clamp(kLoopSeconds / one, 1.0, 10000.0)) : 10000;
  lengths.emplace(key, n);
  return n;
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
      const std::unique_ptr<IntervalTimer> timer = dev_.make_interval_timer();
      time_gemms(dev_, *timer, s, o, 1);  // warm-up
      const int reps = loop_length(dev_, *timer, s, o);
      double best = 1e30;
      for (int i = 0; i < 5; ++i) best = std::min(best, time_gemms(dev_, *timer, s, o, reps));
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

// The timed loop every GEMM benchmark shares: manual time; one benchmark iteration is one GEMM,
// run in batches of one timed loop each (KeepRunningBatch), so the reported time is per GEMM and
// the benchmark's minimum time is GEMM time, not multiplied by the loop's length; counters
// computed from our own totals.
void run_gemm(benchmark::State& state, Device& dev, const GemmShape& s, Ceiling* ceiling, double peak_gflops) {
  const double ceil_gflops = ceiling ? ceiling->gflops() : 0.0;
  Operands o(dev, s);
  const std::unique_ptr<IntervalTimer> timer = dev.make_interval_timer();
  time_gemms(dev, *timer, s, o, 1);  // warm-up: first-touch, BLAS buffers, cuBLAS heuristics
  const int reps = loop_length(dev, *timer, s, o);
  double total = 0.0;
  while (state.KeepRunningBatch(reps)) {
    const double t = time_gemms(dev, *timer, s, o, reps) * reps;  // the whole loop: `reps` iterations
    state.SetIterationTime(t);
    total += t;
  }
  const double gflops = s.flops() * static_cast<double>(state.iterations()) / total / 1e9;
  state.counters["GFLOPS"] = gflops;
  state.counters["gemms_per_loop"] = reps;
  if (ceiling) state.counters["pct_of_ceiling"] = 100.0 * gflops / ceil_gflops;
  if (peak_gflops > 0.0) state.counters["pct_of_peak"] = 100.0 * gflops / peak_gflops;
}

struct Config {
  int batch = 1024;
  std::vector<int> ks = {1};
  std::vector<std::string> gemm;  // default: every library built in
  int threads = 1;
  int ceiling_n = 4096;
  std::vector<std::string> models = preset_names();
  std::vector<std::string> cublas_math = {"pedantic"};
};

Config parse_config(int& argc, char** argv) {
  Config c;
  if (auto v = take_flag(argc, argv, "--batch")) c.batch = static_cast<int>(parse_int(*v, "--batch", 1, 1 << 20));
  if (auto v = take_flag(argc, argv, "--threads")) c.threads = static_cast<int>(parse_int(*v, "--threads", 1, 1024));
  if (auto v = take_flag(argc, argv, "--ks")) {
    c.ks.clear();
    for (const auto& k : split_list(*v)) c.ks.push_back(static_cast<int>(parse_int(k, "--ks", 1, 1 << 20)));
  }
  for (int k : c.ks) {
    if (c.batch % k != 0) throw InputError("--ks: " + std::to_string(k) + " does not divide --batch " + std::to_string(c.batch));
  }
  if (auto v = take_flag(argc, argv, "--gemm")) {
    c.gemm = split_list(*v);
    for (const auto& g : c.gemm) {
      const std::string missing = gemm_library_missing(g);  // InputError: unknown
      if (!missing.empty()) throw InputError("--gemm " + g + ": " + missing);
    }
  } else {
    for (const auto& g : gemm_library_names()) {
      if (gemm_library_missing(g).empty()) c.gemm.push_back(g);
    }
  }
  if (auto v = take_flag(argc, argv, "--ceiling")) c.ceiling_n = static_cast<int>(parse_int(*v, "--ceiling", 16, 32768));
  if (auto v = take_flag(argc, argv, "--models")) {
    c.models = split_list(*v);
    for (const auto& m : c.models) parse_model(m);  // InputError for an unknown preset/width list
  }
  if (auto v = take_flag(argc, argv, "--cublas-math")) {
    c.cublas_math = split_list(*v);
    for (const auto& m : c.cublas_math) cublas_math_of(DeviceOptions{"cuda", 1, false, 0, m});  // InputError: unknown
  }
  return c;
}

// One row tag of the table: a device, its name in the benchmark names, its ceiling, its peak.
struct Target {
  Device* dev;
  std::string tag;  // cpu-openblas, cuda, cuda-default, ...
  Ceiling* ceiling;
  double peak_gflops;  // > 0 adds pct_of_peak (the CUDA rows)
};

void register_gemm(const Target& b, const std::string& name, const GemmShape& s) {
  benchmark::RegisterBenchmark(name.c_str(), [b, s](benchmark::State& st) {
    run_gemm(st, *b.dev, s, b.ceiling, b.peak_gflops);
  })->UseManualTime()->Unit(benchmark::kMillisecond);
}

// Registers every distinct GEMM of one model's step at `local_batch` rows (K ranks of the batch),
// each shape in every backend in turn: the libraries are compared shape by shape, minutes apart
// at most, so a machine that slows down or speeds up meanwhile does not rank them.
void register_step(const std::vector<Target>& backends, const std::string& model, int k_ranks, int local_batch) {
  const MlpSpec spec = parse_model(model);
  // One benchmark per distinct (kind, op, m, n, k); layers sharing a shape are named together.
  std::map<std::string, std::pair<GemmShape, std::string>> distinct;
  std::vector<std::string> order;
  for (const GemmShape& s : training_step_gemms(spec, local_batch)) {
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
    for (const Target& b : backends) {
      std::string name = "gemm/";
      for (const std::string& part : {b.tag, model, "K:" + std::to_string(k_ranks), distinct.at(k).second}) name += part + "/";
      name += k;
      register_gemm(b, name, distinct.at(k).first);
    }
  }
}

// Registers each backend's ceiling, then every distinct shape of every model and K.
void register_backends(const std::vector<Target>& backends, const Config& cfg) {
  const GemmShape sq = square(cfg.ceiling_n);
  for (const Target& b : backends) {
    std::string sq_name = "gemm/";
    sq_name += b.tag;
    sq_name += "/ceiling/square" + sq.label().substr(std::string("L0/forward/NN").size());
    register_gemm({b.dev, b.tag, nullptr, b.peak_gflops}, sq_name, sq);
  }
  for (const std::string& model : cfg.models) {
    for (int k_ranks : cfg.ks) register_step(backends, model, k_ranks, cfg.batch / k_ranks);
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
    std::vector<Target> backends;
    std::string libs;
    for (const std::string& g : cfg.gemm) {
      DeviceOptions o{"cpu", cfg.threads, false, 0};
      o.gemm = g;
      devices.push_back(make_device(o));
      ceilings.push_back(std::make_unique<Ceiling>(*devices.back(), cfg.ceiling_n));
      backends.push_back({devices.back().get(), "cpu-" + g, ceilings.back().get(), 0.0});
      const GemmLibraryInfo info = devices.back()->gemm_report().info;
      benchmark::AddCustomContext("gemm_" + g, info.kernel + (info.pinned.empty() ? "" : " [" + info.pinned + "]"));
      libs += (libs.empty() ? "" : "; ") + info.kernel + (info.pinned.empty() ? "" : " [" + info.pinned + "]");
    }
    std::string ks;
    for (int k : cfg.ks) {
      if (!ks.empty()) ks += ",";  // (+= : GCC 12 warns falsely (-Wrestrict) on `"lit" + std::string`)
      ks += std::to_string(k);
    }
    benchmark::AddCustomContext("batch", std::to_string(cfg.batch));
    benchmark::AddCustomContext("ks", ks);
    if (cuda_compiled() && cuda_device_count() > 0) {
      const double peak = gpu_fp32_peak_gflops(0);
      for (const std::string& math : cfg.cublas_math) {
        devices.push_back(make_device(DeviceOptions{"cuda", cfg.threads, false, 0, math}));
        ceilings.push_back(std::make_unique<Ceiling>(*devices.back(), cfg.ceiling_n));
        backends.push_back({devices.back().get(), math == "pedantic" ? "cuda" : "cuda-" + math, ceilings.back().get(), peak});
      }
      benchmark::AddCustomContext("cuda_device", devices.back()->name());
      benchmark::AddCustomContext("cuda_fp32_peak_gflops", std::to_string(peak));
      std::string modes;
      for (const std::string& m : cfg.cublas_math) modes += (modes.empty() ? "" : ",") + m;
      benchmark::AddCustomContext("cublas_math", modes);
      std::fprintf(stderr, "# bench_gemm: cuda: %s, fp32 peak %.0f GFLOP/s, cuBLAS math %s\n",
                   devices.back()->name().c_str(), peak, modes.c_str());
    } else {
      std::fprintf(stderr, "# bench_gemm: cuBLAS rows skipped (%s)\n",
                   cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
    }
    std::fprintf(stderr, "# bench_gemm: timed per GEMM over loops of back-to-back GEMMs (~%.0f ms a loop; CUDA: "
                 "between two events)\n", kLoopSeconds * 1e3);
    std::fprintf(stderr, "# bench_gemm: batch %d at K = %s (local batch batch/K), %d thread(s), ceiling = square "
                 "sgemm %d^3; cpu: %s; libraries: %s\n",
                 cfg.batch, ks.c_str(), cfg.threads, cfg.ceiling_n, devices.front()->name().c_str(), libs.c_str());
    register_backends(backends, cfg);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
