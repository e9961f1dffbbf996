// device_factory.cpp — picks the backend: --backend auto|cpu|cuda.
#include <string>

#include "cpu/cpu_device.h"
#include "device.h"
#include "core/errors.h"
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
  return std::make_unique<CpuDevice>(opts.threads);
}

}  // namespace dpscale
