// gemm_probe.cpp — the one GEMM probe (gemm_probe.h).
#include "gemm_probe.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdlib>
#include <new>
#include <thread>

#include "models/data/rng.h"

namespace dpscale {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

double best_seconds(const std::function<void()>& fn, int min_runs, double min_seconds) {
  fn();  // untimed: first touch, the library's buffers, its kernel choice
  double best = 1e30, spent = 0.0;
  for (int run = 0; run < min_runs || spent < min_seconds; ++run) {
    const auto t0 = Clock::now();
    fn();
    const double t = since(t0);
    best = std::min(best, t);
    spent += t;
  }
  return best;
}

GemmPass::Floats::Floats(long long count) {
  const size_t bytes = ((static_cast<size_t>(count) * sizeof(float) + 255) / 256) * 256;
  void* raw = std::aligned_alloc(256, bytes == 0 ? 256 : bytes);
  if (!raw) throw std::bad_alloc();
  p = {static_cast<float*>(raw), &std::free};
}

GemmPass::GemmPass(std::vector<GemmShape> shapes) : shapes_(std::move(shapes)) {
  // Small values of both signs: no denormals, no overflow, whatever the library's order.
  const CounterRng rng(11, 5);
  uint64_t i = 0;
  std::map<std::string, size_t> seen;
  for (const GemmShape& s : shapes_) {
    const auto [it, fresh] = seen.emplace(s.call_key(), ops_.size());
    op_of_.push_back(it->second);
    if (!fresh) continue;
    Operands o{Floats(s.a_count()), Floats(s.b_count()), Floats(s.c_count())};
    for (long long j = 0; j < s.a_count(); ++j) o.a.data()[j] = rng.uniform_symmetric(i++, 0.5f);
    for (long long j = 0; j < s.b_count(); ++j) o.b.data()[j] = rng.uniform_symmetric(i++, 0.5f);
    std::fill_n(o.c.data(), s.c_count(), 0.0f);
    ops_.push_back(std::move(o));
  }
}

void GemmPass::run(GemmLibrary& lib) {
  for (size_t i = 0; i < shapes_.size(); ++i) {
    const GemmShape& s = shapes_[i];
    Operands& o = ops_[op_of_[i]];
    lib.sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, o.a.data(), s.lda, o.b.data(), s.ldb, 0.0f, o.c.data(), s.ldc);
  }
}

double GemmPass::seconds(GemmLibrary& lib) {
  const auto t0 = Clock::now();
  run(lib);
  return since(t0);
}

double GemmPass::flops() const {
  double f = 0.0;
  for (const GemmShape& s : shapes_) f += s.flops();
  return f;
}

double measure_gemm_flops(Device& dev, const GemmShape& g) {
  DeviceBuffer<float> a(dev, static_cast<size_t>(g.a_count())), b(dev, static_cast<size_t>(g.b_count())),
      c(dev, static_cast<size_t>(g.c_count()));
  dev.fill(a.data(), 0.5f, static_cast<int64_t>(a.size()));
  dev.fill(b.data(), 0.25f, static_cast<int64_t>(b.size()));
  // At least 0.25 s of runs, as below.
  const double best = best_seconds(
      [&] {
        dev.synchronize();
        dev.gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, 1.0f, a.data(), g.lda, b.data(), g.ldb, 0.0f, c.data(), g.ldc);
        dev.synchronize();
      },
      3, 0.25);
  return g.flops() / best;
}

double measure_gemm_flops(Device& dev, const MlpSpec& spec, int batch) {
  int layer = 0;
  for (int l = 1; l < spec.n_layers(); ++l) {
    if (int64_t{spec.widths[l]} * spec.widths[l + 1] > int64_t{spec.widths[layer]} * spec.widths[layer + 1]) layer = l;
  }
  const int in = spec.widths[layer], out = spec.widths[layer + 1];
  DeviceBuffer<float> x(dev, static_cast<size_t>(batch) * in), w(dev, static_cast<size_t>(out) * in),
      y(dev, static_cast<size_t>(batch) * out);
  dev.fill(x.data(), 0.5f, static_cast<int64_t>(x.size()));
  dev.fill(w.data(), 0.25f, static_cast<int64_t>(w.size()));
  // At least 0.25 s of runs: a single short GEMM is at the mercy of whatever else the machine
  // does for those milliseconds, and F scales every modelled time.
  const double best = best_seconds(
      [&] {
        dev.synchronize();
        // (B,in) x (out,in)^T -> (B,out), β = 0
        dev.gemm(false, true, batch, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f, y.data(), out);
        dev.synchronize();
      },
      3, 0.25);
  return 2.0 * batch * out * in / best;
}

GemmShape probe_shape() {
  constexpr int n = 192;
  return {0, GemmKind::forward, false, false, n, n, n, n, n, n};
}

double probe_gflops(double seconds, int threads, const std::string& library) {
  threads = std::max(1, threads);
  const GemmShape s = probe_shape();
  std::vector<double> rate(static_cast<size_t>(threads), 0.0);
  std::vector<std::unique_ptr<GemmLibrary>> libs;
  // Each probe thread is one CPU's worth of work: one library thread per call.
  for (int t = 0; t < threads; ++t) libs.push_back(make_gemm_library(library, 1));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      GemmPass pass({s});
      GemmLibrary& lib = *libs[static_cast<size_t>(t)];
      long calls = 0;
      const auto start = Clock::now();
      double elapsed = 0;
      do {
        pass.run(lib);
        ++calls;
        elapsed = since(start);
      } while (elapsed < seconds);
      rate[static_cast<size_t>(t)] = s.flops() * static_cast<double>(calls) / elapsed / 1e9;
    });
  }
  for (auto& th : pool) th.join();
  return *std::min_element(rate.begin(), rate.end());
}

}  // namespace dpscale
