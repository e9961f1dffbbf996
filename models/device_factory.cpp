// device_factory.cpp — picks the backend (--backend auto|cpu|cuda) and the CPU's GEMM library
// (--gemm auto|openblas|blis|onednn).
#include <string>

#include "cpu/cpu_device.h"
#include "device.h"
#include "core/errors.h"
#include "gemm/gemm_choice.h"
#include "gemm/gemm_probe.h"
#include "gpu_uuid.h"
#if DPSCALE_HAVE_CUDA
#include "cuda/cuda_device.h"
#endif

namespace dpscale {

const char* backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

bool cuda_compiled() { return DPSCALE_HAVE_CUDA != 0; }

int cuda_device_count() {
#if DPSCALE_HAVE_CUDA
  return cuda_visible_devices();
#else
  return 0;
#endif
}

std::vector<GpuUuid> cuda_gpu_uuids() {
#if DPSCALE_HAVE_CUDA
  return cuda_visible_uuids();
#else
  return {};
#endif
}

double gpu_fp32_peak_gflops(int index) {
#if DPSCALE_HAVE_CUDA
  return cuda_fp32_peak_gflops(index);
#else
  (void)index;
  return 0.0;
#endif
}

const char* const* cublas_math_names() {
  static const char* const names[] = {"pedantic", "default", "tf32", nullptr};
  return names;
}

std::string cublas_math_of(const DeviceOptions& opts) {
  if (opts.cublas_math.empty()) return opts.tf32 ? "tf32" : "pedantic";
  std::string all;
  for (const char* const* n = cublas_math_names(); *n; ++n) {
    if (opts.cublas_math == *n) return *n;
    all += all.empty() ? "" : ", ";
    all += *n;
  }
  throw InputError("--cublas-math: unknown mode '" + opts.cublas_math + "' (use " + all + ")");
}

std::unique_ptr<Device> make_device(const DeviceOptions& opts) {
  const std::string math = cublas_math_of(opts);  // refused before any device starts
  if (opts.gemm != "auto") gemm_library_missing(opts.gemm);  // InputError for an unknown name
  if (opts.backend != "auto" && opts.backend != "cpu" && opts.backend != "cuda") {
    throw InputError("--backend: unknown backend '" + opts.backend + "' (use auto, cpu or cuda)");
  }
  if (opts.backend == "cuda" || (opts.backend == "auto" && cuda_device_count() > 0)) {
    if (!cuda_compiled()) {
      throw InputError("--backend cuda: this build has no CUDA backend (no CUDA toolkit at configure time)");
    }
    const int n = cuda_device_count();
    if (n == 0) throw InputError("--backend cuda: no CUDA device answers on this machine");
#if DPSCALE_HAVE_CUDA
    return make_cuda_device(opts.gpu_index % n, math);
#endif
  }
  return make_cpu_device(opts);
}

std::unique_ptr<Device> make_cpu_device(const DeviceOptions& opts) {
  if (opts.threads < 1) throw InputError("--threads must be at least 1 (got " + std::to_string(opts.threads) + ")");
  if (opts.gemm != "auto") {
    return std::make_unique<CpuDevice>(opts.threads, make_gemm_library(opts.gemm, opts.threads), "requested", "");
  }
  const GemmChoice c = choose_gemm(opts.gemm_shapes.empty() ? std::vector<GemmShape>{probe_shape()} : opts.gemm_shapes,
                                   opts.threads);
  return std::make_unique<CpuDevice>(opts.threads, make_gemm_library(c.library, opts.threads), c.how, c.passed_over());
}

}  // namespace dpscale
