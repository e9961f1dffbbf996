// nccl_wire.cuh — the conversions of NCCL's 2-byte gradients (--grad-comm bf16|fp16): fp32
// gradients packed into a 2-byte staging buffer before the all-reduce and widened back after,
// with grad_format.h's arithmetic (the MPI path's, so both backends round alike).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "grad_format.h"

namespace dpscale::nccl_wire {

// wire[i] = encode(f, x[i]) for i < n.
void pack(GradFormat f, const float* x, uint16_t* wire, size_t n, cudaStream_t s);
// x[i] = decode(f, wire[i]) for i < n, except i == skip (the loss slot, summed in fp32 on its
// own); skip = n for none.
void unpack(GradFormat f, const uint16_t* wire, float* x, size_t n, size_t skip, cudaStream_t s);

}  // namespace dpscale::nccl_wire
