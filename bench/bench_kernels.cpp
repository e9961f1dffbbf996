// bench_kernels.cpp — the element-wise passes of a training step and the optimizer pass with its
// finite check, through Device: the CPU backend always, the CUDA backend too when the binary has
// it and a GPU answers (as bench_gemm).
//
//   bench_kernels [--backends=cpu,cuda] [--models=small,medium,large,xlarge]
//                 [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json] ...
//
// Element-wise passes, in GB/s against a copy moving the same number of bytes. Bytes moved =
// bytes read + bytes written by the pass, counted once each (no write-allocate):
//   bias_relu       y[r,c] = relu(y + b[c]) in place      2·r·c·4 + c·4
//   relu_backward   dx = relu'(dx, y) in place             3·n·4
//   softmax_xent    z[r,10] -> dz[r,10], labels[r]         (2·r·10 + r)·4
//   sgd             w -= lr·g in place (momentum 0)        3·n·4
//   flag_nonfinite  the finite check's pass of its own     n·4
//   sgd_momentum    v = μv + g; w -= lr·v                   5·n·4
// The ceiling for a pass moving T bytes is a copy of T/2 bytes (T/2 read + T/2 written), timed the
// same way: memcpy on the CPU, a device-to-device copy on the GPU; counters GBps and
// pct_of_memcpy. Two sizes per pass: "in_cache" (~1.5 MB of working set) and "dram" (~192 MB, past
// any last-level cache). Names: kernels/<pass>/<size class>/n:<elements> on the CPU,
// kernels-cuda/<pass>/... on the GPU.
//
// The optimizer pass and the per-step NaN/inf check, at each preset's parameter count (the flat
// buffer's floats): optimizer/<backend>/<preset>/n:<floats>. Every iteration runs, interleaved,
//   plain     the update alone (sgd, momentum 0): the floor, an update with no check
//   separate  the check in passes of its own: clear the flag, a pass over the gradients (loss slot
//             included), the update, a pass over the weights — the step's check before it was
//             folded into the update
//   fused     the update with the check folded in (Device::sgd with a flag): what training runs
// Manual time = fused. Counters plain_ms, separate_ms, fused_ms (means over the iterations) and
// separate_over_plain, fused_over_plain (ratios of the sums): what the check costs each way. Timed
// on the CPU backend in the thread's CPU time (thread_cpu_s: robust on a shared machine), on a GPU
// by events around each call.
//
// Timing of the passes: the device's IntervalTimer around each call (CPU: the host clock; CUDA: an
// event pair on the compute stream, read after the call: no launch latency inside).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "core/errors.h"
#include "models/device.h"
#include "models/interval_timer.h"
#include "models/param_layout.h"

namespace dpscale::bench {
namespace {

// Seconds of one call of `f`, on the device's own clock.
double time_call(IntervalTimer& timer, const std::function<void()>& f) {
  timer.start();
  f();
  timer.stop();
  return timer.take_seconds();
}

// This thread's CPU time (s). A pass on the CPU backend runs on this thread alone: its CPU time is
// its cost whatever else the machine's cores run (on a shared machine, most of the wall clock's
// noise is time the thread was not on a core), and a memory-bound loop stalls on the core.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The copy ceiling for a traffic (read + write) in bytes: best of 5 after one untimed copy (a
// ceiling: interference only slows a copy down). Cached per traffic size, so each pass is compared
// with a copy of its own footprint.
class CopyCeiling {
 public:
  explicit CopyCeiling(Device& dev) : dev_(dev), timer_(dev.make_interval_timer()) {}
  double gbps(size_t traffic) {
    auto it = cache_.find(traffic);
    if (it != cache_.end()) return it->second;
    const size_t half = traffic / 2;
    DeviceBuffer<char> src(dev_, half), dst(dev_, half);
    const auto copy = [&] {
      if (dev_.host_visible()) {
        std::memcpy(dst.data(), src.data(), half);
        benchmark::ClobberMemory();
      } else {
        dev_.copy(dst.data(), src.data(), half);
      }
    };
    copy();
    double best = 1e30;
    for (int i = 0; i < 5; ++i) best = std::min(best, time_call(*timer_, copy));
    return cache_[traffic] = static_cast<double>(traffic) / best / 1e9;
  }

 private:
  Device& dev_;
  std::unique_ptr<IntervalTimer> timer_;
  std::map<size_t, double> cache_;
};

struct Pass {
  std::string name;
  size_t traffic = 0;         // bytes read + written per call
  std::function<void()> run;  // one call of the pass
};

// The timed loop every pass shares.
void run_pass(benchmark::State& state, Device& dev, Pass& p, CopyCeiling* ceiling) {
  const double ceil_gbps = ceiling ? ceiling->gbps(p.traffic) : 0.0;
  const std::unique_ptr<IntervalTimer> timer = dev.make_interval_timer();
  time_call(*timer, p.run);  // warm-up (first touch happened at allocation)
  double total = 0.0;
  for (auto _ : state) {
    const double t = time_call(*timer, [&] {
      p.run();
      benchmark::ClobberMemory();
    });
    state.SetIterationTime(t);
    total += t;
  }
  const double gbps = static_cast<double>(p.traffic) * static_cast<double>(state.iterations()) / total / 1e9;
  state.counters["GBps"] = gbps;
  state.counters["bytes"] = static_cast<double>(p.traffic);
  if (ceiling) state.counters["pct_of_memcpy"] = 100.0 * gbps / ceil_gbps;
}

// Owns the buffers of every registered pass (float, filled on the device).
class Buffers {
 public:
  explicit Buffers(Device& dev) : dev_(dev) {}
  float* floats(size_t n, float value) {
    bufs_.emplace_back(dev_, n);
    dev_.fill(bufs_.back().data(), value, static_cast<int64_t>(n));
    return bufs_.back().data();
  }
  int32_t* labels(size_t n) {
    labels_.emplace_back(dev_, n);
    std::vector<int32_t> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<int32_t>(i % 10);
    dev_.upload(labels_.back().data(), host.data(), n * sizeof(int32_t));
    return labels_.back().data();
  }

 private:
  Device& dev_;
  std::vector<DeviceBuffer<float>> bufs_;
  std::vector<DeviceBuffer<int32_t>> labels_;
};

std::vector<Pass> make_passes(Device& dev, Buffers& buf, const std::string& prefix, const std::string& cls, size_t n) {
  std::vector<Pass> passes;
  const int cols = 2048;  // the medium model's widest hidden layer
  const int rows = static_cast<int>(n / cols);
  const int classes = 10;
  const int xent_rows = static_cast<int>(n / classes);
  auto tag = [&](const char* pass, size_t elems) { return prefix + "/" + pass + "/" + cls + "/n:" + std::to_string(elems); };
  {
    float* y = buf.floats(static_cast<size_t>(rows) * cols, 0.5f);
    const float* b = buf.floats(cols, -0.25f);
    passes.push_back({tag("bias_relu", static_cast<size_t>(rows) * cols),
                      (2 * static_cast<size_t>(rows) * cols + cols) * sizeof(float),
                      [&dev, y, b, rows, cols] { dev.bias_act(y, b, rows, cols, true); }});
  }
  {
    float* dx = buf.floats(n, 0.5f);
    const float* y = buf.floats(n, 1.0f);
    passes.push_back({tag("relu_backward", n), 3 * n * sizeof(float),
                      [&dev, dx, y, n] { dev.relu_backward(dx, y, static_cast<int64_t>(n)); }});
  }
  {
    const float* z = buf.floats(static_cast<size_t>(xent_rows) * classes, 0.1f);
    const int32_t* labels = buf.labels(static_cast<size_t>(xent_rows));
    float* dz = buf.floats(static_cast<size_t>(xent_rows) * classes, 0.0f);
    float* scalars = buf.floats(2, 0.0f);
    passes.push_back({tag("softmax_xent", static_cast<size_t>(xent_rows) * classes),
                      (2 * static_cast<size_t>(xent_rows) * classes + xent_rows) * sizeof(float),
                      [&dev, z, labels, dz, scalars, xent_rows, classes] {
                        dev.softmax_xent(z, labels, xent_rows, classes, 1.0f / xent_rows, dz, scalars, scalars + 1, 1.0f);
                      }});
  }
  {
    float* w = buf.floats(n, 0.5f);
    const float* g = buf.floats(n, 1e-3f);
    passes.push_back({tag("sgd", n), 3 * n * sizeof(float),
                      [&dev, w, g, n] { dev.sgd(w, g, nullptr, static_cast<int64_t>(n), 0.01f, 0.0f, 0.0f, nullptr); }});
  }
  {
    const float* g = buf.floats(n, 1e-3f);
    float* flag = buf.floats(1, 0.0f);
    passes.push_back({tag("flag_nonfinite", n), n * sizeof(float),
                      [&dev, g, flag, n] { dev.flag_nonfinite(g, static_cast<int64_t>(n), flag); }});
  }
  {
    float* w = buf.floats(n, 0.5f);
    const float* g = buf.floats(n, 1e-3f);
    float* v = buf.floats(n, 0.0f);
    passes.push_back({tag("sgd_momentum", n), 5 * n * sizeof(float),
                      [&dev, w, g, v, n] { dev.sgd(w, g, v, static_cast<int64_t>(n), 0.01f, 0.9f, 0.0f, nullptr); }});
  }
  return passes;
}

// The optimizer pass with the check three ways (top of file), interleaved per iteration, on a
// flat buffer of `n` floats (the preset's ParamLayout: padding included) and a gradient buffer of
// n + 1 (the loss slot). Buffers live for the benchmark only: the presets' together would not fit
// a small machine.
void run_optimizer(benchmark::State& state, Device& dev, int64_t n) {
  DeviceBuffer<float> w(dev, static_cast<size_t>(n)), g(dev, static_cast<size_t>(n + 1)), flag(dev, 1);
  dev.fill(w.data(), 0.5f, n);
  dev.fill(g.data(), 1e-3f, n + 1);
  dev.fill(flag.data(), 0.0f, 1);
  const float lr = 1e-6f;  // the weights barely move over thousands of iterations: no overflow
  const std::unique_ptr<IntervalTimer> device_timer = dev.make_interval_timer();
  // The CPU backend: the thread's CPU time (above); a GPU: events around the call.
  const auto timed = [&](const std::function<void()>& f) {
    if (!dev.host_visible()) return time_call(*device_timer, f);
    const double t0 = thread_cpu_s();
    f();
    return thread_cpu_s() - t0;
  };
  const auto plain = [&] { dev.sgd(w.data(), g.data(), nullptr, n, lr, 0.0f, 0.0f, nullptr); };
  const auto separate = [&] {
    dev.fill(flag.data(), 0.0f, 1);
    dev.flag_nonfinite(g.data(), n + 1, flag.data());
    dev.sgd(w.data(), g.data(), nullptr, n, lr, 0.0f, 0.0f, nullptr);
    dev.flag_nonfinite(w.data(), n, flag.data());
  };
  const auto fused = [&] { dev.sgd(w.data(), g.data(), nullptr, n, lr, 0.0f, 0.0f, flag.data()); };
  timed(plain);  // warm-up
  timed(separate);
  timed(fused);
  double t_plain = 0.0, t_separate = 0.0, t_fused = 0.0;
  for (auto _ : state) {
    t_plain += timed(plain);
    t_separate += timed(separate);
    const double t = timed(fused);
    t_fused += t;
    state.SetIterationTime(t);
  }
  float raised = 0.0f;
  dev.download(&raised, flag.data(), sizeof raised);
  if (raised != 0.0f) state.SkipWithError("the finite check flagged finite buffers");
  const double iters = static_cast<double>(state.iterations());
  state.counters["floats"] = static_cast<double>(n);
  state.counters["plain_ms"] = 1e3 * t_plain / iters;
  state.counters["separate_ms"] = 1e3 * t_separate / iters;
  state.counters["fused_ms"] = 1e3 * t_fused / iters;
  state.counters["separate_over_plain"] = t_separate / t_plain;
  state.counters["fused_over_plain"] = t_fused / t_plain;
  state.counters["GBps"] = 3.0 * 4.0 * static_cast<double>(n) * iters / t_fused / 1e9;  // w, g read; w written
}

struct BenchBackend {
  std::string name;  // cpu | cuda
  std::unique_ptr<Device> dev;
  std::unique_ptr<CopyCeiling> ceiling;
  std::unique_ptr<Buffers> buffers;
  std::vector<Pass> passes;
};

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_kernels", [&] {
    std::vector<std::string> wanted = {"cpu", "cuda"};
    std::vector<std::string> models = {"small", "medium", "large", "xlarge"};
    if (auto v = take_flag(argc, argv, "--backends")) wanted = split_list(*v);
    if (auto v = take_flag(argc, argv, "--models")) models = split_list(*v);
    for (const std::string& b : wanted) {
      if (b != "cpu" && b != "cuda") throw InputError("--backends: unknown backend '" + b + "' (use cpu, cuda)");
    }
    std::vector<int64_t> floats;
    for (const std::string& m : models) floats.push_back(ParamLayout(parse_model(m)).param_buffer_count());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

    std::vector<std::unique_ptr<BenchBackend>> backends;
    for (const std::string& b : wanted) {
      if (b == "cuda" && !(cuda_compiled() && cuda_device_count() > 0)) {
        std::fprintf(stderr, "# bench_kernels: CUDA rows skipped (%s)\n",
                     cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
        continue;
      }
      auto be = std::make_unique<BenchBackend>();
      be->name = b;
      be->dev = make_device(DeviceOptions{b, 1, false, 0});
      be->ceiling = std::make_unique<CopyCeiling>(*be->dev);
      be->buffers = std::make_unique<Buffers>(*be->dev);
      const std::string prefix = b == "cpu" ? "kernels" : "kernels-" + b;
      // in_cache: 128 Ki floats = 512 KB per array (<= 1.5 MB per pass); dram: 16 Mi floats =
      // 64 MB per array (128-320 MB per pass).
      for (const auto& [cls, n] : {std::pair<std::string, size_t>{"in_cache", size_t{1} << 17},
                                   std::pair<std::string, size_t>{"dram", size_t{1} << 24}}) {
        for (Pass& p : make_passes(*be->dev, *be->buffers, prefix, cls, n)) be->passes.push_back(std::move(p));
      }
      std::fprintf(stderr, "# bench_kernels: %s: %s\n", b.c_str(), be->dev->name().c_str());
      if (b == "cuda") benchmark::AddCustomContext("cuda_device", be->dev->name());
      backends.push_back(std::move(be));
    }
    for (const auto& be : backends) {
      BenchBackend* b = be.get();
      for (Pass& p : b->passes) {
        benchmark::RegisterBenchmark(p.name.c_str(), [b, &p](benchmark::State& st) {
          run_pass(st, *b->dev, p, b->ceiling.get());
        })->UseManualTime()->Unit(benchmark::kMicrosecond);
      }
      // The memcpy rows of the CPU: one per distinct traffic size, so the table shows the ceilings.
      if (b->name == "cpu") {
        std::map<size_t, std::string> copies;
        for (const Pass& p : b->passes) {
          const std::string cls = p.name.find("/dram/") != std::string::npos ? "dram" : "in_cache";
          copies.emplace(p.traffic, "kernels/memcpy/" + cls + "/bytes:" + std::to_string(p.traffic));
        }
        for (const auto& [traffic, name] : copies) {
          auto copy_pass = std::make_shared<Pass>();
          auto bytes = std::make_shared<std::vector<char>>(traffic, 1);  // src = first half, dst = second half
          const size_t half = traffic / 2;
          *copy_pass = Pass{name, traffic, [bytes, half] { std::memcpy(bytes->data() + half, bytes->data(), half); }};
          benchmark::RegisterBenchmark(name.c_str(), [b, copy_pass](benchmark::State& st) {
            run_pass(st, *b->dev, *copy_pass, nullptr);
          })->UseManualTime()->Unit(benchmark::kMicrosecond);
        }
      }
      for (size_t i = 0; i < models.size(); ++i) {
        const int64_t n = floats[i];
        const std::string name = "optimizer/" + b->name + "/" + models[i] + "/n:" + std::to_string(n);
        benchmark::RegisterBenchmark(name.c_str(), [b, n](benchmark::State& st) { run_optimizer(st, *b->dev, n); })
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
