// gemm_probe.cpp — the GEMM probe of machine_state.h: one single-threaded sgemm loop per CPU at
// once, the slowest CPU's rate. Apart from machine_state.cpp so the parsers (and their fuzz
// build) do not need BLAS.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "harness/sweep/machine_state.h"

namespace dpscale {

double probe_gflops(double seconds, int threads) {
  constexpr int n = 192;  // three 144 KiB matrices: in a core's L2 on most CPUs, so memory is not what is timed
  threads = std::max(1, threads);
  openblas_set_num_threads(1);  // each probe thread is one CPU's worth of work
  std::vector<double> rate(static_cast<size_t>(threads), 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
      long calls = 0;
      const auto start = std::chrono::steady_clock::now();
      double elapsed = 0;
      do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        ++calls;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (elapsed < seconds);
      rate[static_cast<size_t>(t)] = 2.0 * n * n * n * static_cast<double>(calls) / elapsed / 1e9;
    });
  }
  for (auto& th : pool) th.join();
  return *std::min_element(rate.begin(), rate.end());
}

}  // namespace dpscale
