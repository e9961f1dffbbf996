// gemm_probe.cpp — times one representative GEMM, best of several runs.
#include "gemm_probe.h"

#include <algorithm>
#include <chrono>

namespace dpscale {

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
  // Best of several runs over at least kMinProbeSeconds: a single short GEMM is at the mercy of
  // whatever else the machine does for those milliseconds, and F scales every modelled time.
  constexpr double kMinProbeSeconds = 0.25;
  constexpr int kMinTimedRuns = 3;
  double best = 1e30, spent = 0.0;
  for (int rep = 0; rep <= kMinTimedRuns || spent < kMinProbeSeconds; ++rep) {
    dev.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    dev.gemm(false, true, batch, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f, y.data(), out);
    dev.synchronize();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) {  // the first run warms caches and BLAS buffers
      best = std::min(best, t);
      spent += t;
    }
  }
  return 2.0 * batch * out * in / best;
}

}  // namespace dpscale
