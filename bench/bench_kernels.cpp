// bench_kernels.cpp — the element-wise passes of a training step through CpuDevice, in GB/s,
// against a plain memcpy moving the same number of bytes.
//
//   bench_kernels [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json] ...
//
// Bytes moved = bytes read + bytes written by the pass, counted once each (no write-allocate):
//   bias_relu      y[r,c] = relu(y + b[c]) in place      2·r·c·4 + c·4
//   relu_backward  dx = relu'(dx, y) in place             3·n·4
//   softmax_xent   z[r,10] -> dz[r,10], labels[r]         (2·r·10 + r)·4
//   sgd            w -= lr·g in place (momentum 0)        3·n·4
//   sgd_momentum   v = μv + g; w -= lr·v                   5·n·4
// The ceiling for a pass moving T bytes is memcpy of T/2 bytes (T/2 read + T/2 written), timed
// the same way; counters GBps and pct_of_memcpy. Two sizes per pass: "in_cache" (the whole
// working set ~1.5 MB, within L2+L3) and "dram" (~192 MB, far past any last-level cache: the
// machines we run on have 32-256 MB). Names: kernels/<pass>/<size class>/n:<elements>.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench_args.h"
#include "models/cpu/cpu_device.h"
#include "core/errors.h"

namespace dpscale::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// memcpy GB/s for a given traffic (read + write) in bytes: best of 5 after one untimed copy
// (a ceiling: interference on a shared machine only slows a copy down). Cached per traffic
// size, so each pass is compared with a copy of its own footprint.
class MemcpyCeiling {
 public:
  double gbps(size_t traffic) {
    auto it = cache_.find(traffic);
    if (it != cache_.end()) return it->second;
    const size_t half = traffic / 2;
    std::vector<char> src(half, 1), dst(half, 0);
    std::memcpy(dst.data(), src.data(), half);
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = Clock::now();
      std::memcpy(dst.data(), src.data(), half);
      benchmark::ClobberMemory();
      best = std::min(best, seconds_since(t0));
    }
    return cache_[traffic] = static_cast<double>(traffic) / best / 1e9;
  }

 private:
  std::map<size_t, double> cache_;
};

struct Pass {
  std::string name;
  size_t traffic = 0;               // bytes read + written per call
  std::function<void()> run;        // one call of the pass
};

// The timed loop every pass shares.
void run_pass(benchmark::State& state, Pass& p, MemcpyCeiling* ceiling) {
  const double ceil_gbps = ceiling ? ceiling->gbps(p.traffic) : 0.0;
  p.run();  // warm-up (first touch happened at allocation)
  double total = 0.0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    p.run();
    benchmark::ClobberMemory();
    const double t = seconds_since(t0);
    state.SetIterationTime(t);
    total += t;
  }
  const double gbps = static_cast<double>(p.traffic) * static_cast<double>(state.iterations()) / total / 1e9;
  state.counters["GBps"] = gbps;
  state.counters["bytes"] = static_cast<double>(p.traffic);
  if (ceiling) state.counters["pct_of_memcpy"] = 100.0 * gbps / ceil_gbps;
}

// Owns the buffers of every registered pass (all float, zero-initialised then filled).
class Buffers {
 public:
  explicit Buffers(Device& dev) : dev_(dev) {}
  float* floats(size_t n, float value) {
    bufs_.emplace_back(dev_, n);
    dev_.fill(bufs_.back().data(), value, static_cast<int64_t>(n));
    return bufs_.back().data();
  }
  int32_t* labels(size_t n) {
    auto* p = reinterpret_cast<int32_t*>(floats(n, 0.0f));
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(i % 10);
    return p;
  }

 private:
  Device& dev_;
  std::vector<DeviceBuffer<float>> bufs_;
};

std::vector<Pass> make_passes(CpuDevice& dev, Buffers& buf, const std::string& cls, size_t n) {
  std::vector<Pass> passes;
  const int cols = 2048;  // the medium model's widest hidden layer
  const int rows = static_cast<int>(n / cols);
  const int classes = 10;
  const int xent_rows = static_cast<int>(n / classes);
  auto tag = [&](const char* pass, size_t elems) {
    std::string s = "kernels/";
    s += pass;
    s += "/" + cls + "/n:" + std::to_string(elems);
    return s;
  };
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
                        dev.softmax_xent(z, labels, xent_rows, classes, 1.0f / xent_rows, dz, scalars,
                                         scalars + 1, 1.0f);
                      }});
  }
  {
    float* w = buf.floats(n, 0.5f);
    const float* g = buf.floats(n, 1e-3f);
    passes.push_back({tag("sgd", n), 3 * n * sizeof(float),
                      [&dev, w, g, n] { dev.sgd(w, g, nullptr, static_cast<int64_t>(n), 0.01f, 0.0f, 0.0f); }});
  }
  {
    // The per-step non-finite check: one read-only pass; training runs it over the
    // gradients and the parameters, i.e. twice this per step at n = the parameter count.
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
                      [&dev, w, g, v, n] { dev.sgd(w, g, v, static_cast<int64_t>(n), 0.01f, 0.9f, 0.0f); }});
  }
  return passes;
}

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_kernels", [&] {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    CpuDevice dev(1);
    Buffers buffers(dev);
    MemcpyCeiling ceiling;
    // in_cache: 128 Ki floats = 512 KB per array (≤ 1.5 MB per pass); dram: 16 Mi floats =
    // 64 MB per array (128-320 MB per pass).
    std::vector<Pass> passes;
    for (const auto& [cls, n] : {std::pair<std::string, size_t>{"in_cache", size_t{1} << 17},
                                 std::pair<std::string, size_t>{"dram", size_t{1} << 24}}) {
      for (Pass& p : make_passes(dev, buffers, cls, n)) passes.push_back(std::move(p));
    }
    // The memcpy rows: one per distinct traffic size, so the table shows the ceilings too.
    std::map<size_t, std::string> copies;
    for (const Pass& p : passes) {
      const std::string cls = p.name.find("/dram/") != std::string::npos ? "dram" : "in_cache";
      copies.emplace(p.traffic, "kernels/memcpy/" + cls + "/bytes:" + std::to_string(p.traffic));
    }
    std::vector<std::vector<char>> copy_bufs;
    for (const auto& [traffic, name] : copies) {
      copy_bufs.emplace_back(traffic, 1);  // src = first half, dst = second half
      char* base = copy_bufs.back().data();
      const size_t half = traffic / 2;
      passes.push_back({name, traffic, [base, half] { std::memcpy(base + half, base, half); }});
    }
    for (Pass& p : passes) {
      const bool is_copy = p.name.rfind("kernels/memcpy/", 0) == 0;
      benchmark::RegisterBenchmark(p.name.c_str(), [&p, &ceiling, is_copy](benchmark::State& st) {
        run_pass(st, p, is_copy ? nullptr : &ceiling);
      })->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
    std::fprintf(stderr, "# bench_kernels: CpuDevice, 1 thread, %s\n", dev.name().c_str());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
