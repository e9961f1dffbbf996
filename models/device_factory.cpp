// device_factory.cpp — picks the backend: --backend auto|cpu|cuda.
#include <string>

#include "cpu/cpu_device.h"
#include "device.h"
#include "errors.h"
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

std::unique_ptr<Device> make_device(const DeviceOptions& opts) {
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
    return make_cuda_device(opts.gpu_index % n, opts.tf32);
#endif
  }
  return std::make_unique<CpuDevice>(opts.threads);
}

}  // namespace dpscale
