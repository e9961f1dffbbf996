// cuda_upload_lane.h — the CUDA backend's UploadLane (upload_lane.h): pinned host memory and a
// copy stream ordered against the compute stream by events; see cuda_upload_lane.cu.
#pragma once

#include <memory>

#include "../upload_lane.h"

namespace dpscale {

// `compute` is the device's compute stream (a cudaStream_t, passed opaquely).
std::unique_ptr<UploadLane> make_cuda_upload_lane(void* compute);

}  // namespace dpscale
