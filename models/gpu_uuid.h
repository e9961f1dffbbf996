// gpu_uuid.h — which physical GPU a CUDA device index is, for the node's one-rank-per-GPU check.
// Plain C++ (no CUDA types); answers with an empty list without the CUDA backend or a GPU.
#pragma once

#include <array>
#include <vector>

namespace dpscale {

// A GPU's UUID (cudaDeviceProp::uuid): the same GPU has the same UUID in every process,
// whatever each process's CUDA_VISIBLE_DEVICES numbering.
using GpuUuid = std::array<unsigned char, 16>;

// The UUIDs of the GPUs this process sees, in CUDA device order.
std::vector<GpuUuid> cuda_gpu_uuids();

}  // namespace dpscale
