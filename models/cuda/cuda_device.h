// cuda_device.h — the CUDA backend's entry points, includable from plain C++ (no CUDA types).
// The implementation (cuda_device.cu, kernels.cu) runs cuBLAS for GEMMs and launches kernels
// built on the same elementwise.h functions the CPU backend loops over.
#pragma once

#include <memory>
#include <string>

#include "../device.h"
#include "../gpu_uuid.h"

namespace dpscale {

// Number of CUDA devices that answer; 0 when there is no driver or no GPU (never throws).
int cuda_visible_devices();
// The UUIDs of the CUDA devices that answer, in device order (none when none answers).
std::vector<GpuUuid> cuda_visible_uuids();
// GPU `index`'s fp32 peak in GFLOP/s: SMs × fp32 lanes per SM × 2 (an FMA is two flops) × the
// peak SM clock the driver reports. 0 where this file does not know the architecture's lanes.
double cuda_fp32_peak_gflops(int index);
// A CudaDevice on GPU `index` with its own compute stream and cuBLAS handle, in cuBLAS math mode
// `math` (device.h: pedantic | default | tf32; the checked word of cublas_math_of()).
std::unique_ptr<Device> make_cuda_device(int index, const std::string& math);

}  // namespace dpscale
