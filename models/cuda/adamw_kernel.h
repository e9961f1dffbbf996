// adamw_kernel.h — the CUDA backend's AdamW pass (adamw_kernel.cu): adamw.h's update per
// element, the finite check folded in as the SGD kernel has it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "models/adamw.h"

namespace dpscale::cuda {

void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s, float* nonfinite_flag,
           cudaStream_t stream);

}  // namespace dpscale::cuda
