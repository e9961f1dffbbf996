// cuda_timer.h — the CUDA backend's IntervalTimer (event pairs on a stream); see cuda_timer.cu.
#pragma once

#include <memory>

#include "../interval_timer.h"

namespace dpscale {

// `stream` is a cudaStream_t, passed opaquely so plain C++ can include this header.
std::unique_ptr<IntervalTimer> make_cuda_interval_timer(void* stream);

}  // namespace dpscale
