// cuda_stamp_clock.h — the CUDA backend's StampClock (stamp_clock.h): an event per stamp on a
// stream, read against the last anchor; see cuda_stamp_clock.cu.
#pragma once

#include <memory>

#include "../stamp_clock.h"

namespace dpscale {

// `stream` is a cudaStream_t, passed opaquely so plain C++ can include this header.
std::unique_ptr<StampClock> make_cuda_stamp_clock(void* stream);

}  // namespace dpscale
