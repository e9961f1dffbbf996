// gemm_probe.h — the one GEMM probe: how fast a GEMM library runs here, timed one way.
//
// Its users, each on the library the run computes with:
//   --gemm auto (gemm_choice.h)      each library's rate on the step's GEMM list (GemmPass)
//   --link-dilation auto:TFLOPS and  the device's rate on the model's largest forward GEMM
//   dpscale predict                  (measure_gemm_flops: Device::gemm, so the chosen library)
//   the sweep's machine state        the slowest of one single-threaded sgemm loop per CPU, all
//   (harness/results/machine_state.h)  at once (probe_gflops)
// The timing rule is shared: one untimed call first (first touch, the library's buffers and
// kernels), then the best of several timed calls — best, not median: on a shared machine
// interference only ever slows a call down.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gemm_library.h"
#include "models/device.h"
#include "models/mlp_spec.h"
#include "step_gemms.h"

namespace dpscale {

// Seconds of the fastest of at least `min_runs` timed calls of `fn` that together last at least
// `min_seconds`, after one untimed call.
double best_seconds(const std::function<void()>& fn, int min_runs, double min_seconds);

// The operands of a list of GEMMs, allocated once per distinct shape (256-byte aligned, as
// CpuDevice allocates); one pass runs every GEMM of the list once, in its order.
class GemmPass {
 public:
  explicit GemmPass(std::vector<GemmShape> shapes);
  void run(GemmLibrary& lib);
  double seconds(GemmLibrary& lib);  // one pass, steady clock
  double flops() const;

 private:
  // A float array on 256-byte boundaries: what CpuDevice::alloc_bytes gives the trainers.
  struct Floats {
    std::unique_ptr<float, void (*)(void*)> p{nullptr, nullptr};
    explicit Floats(long long count);
    float* data() { return p.get(); }
  };
  struct Operands {
    Floats a, b, c;
  };
  std::vector<GemmShape> shapes_;
  std::vector<size_t> op_of_;  // shapes_[i] runs on ops_[op_of_[i]]
  std::vector<Operands> ops_;
};

// FLOP/s of the forward GEMM of the model's largest layer at `batch` rows on `dev`: at least
// three timed runs over at least 0.25 s, the best.
double measure_gemm_flops(Device& dev, const MlpSpec& spec, int batch);
// The same measurement on one GEMM of any model's step (a transformer's largest forward GEMM).
double measure_gemm_flops(Device& dev, const GemmShape& shape);

// The sweep's machine probe: `threads` concurrent loops of single-threaded n³ sgemm (n = 192:
// three 144 KiB matrices, in a core's L2 on most CPUs, so memory is not what is timed) on GEMM
// library `library` (a name of gemm_library_names()) for `seconds`; the slowest loop's GFLOP/s.
double probe_gflops(double seconds, int threads, const std::string& library);
// The probe's shape, for a caller that resolves --gemm auto on it.
GemmShape probe_shape();

}  // namespace dpscale
