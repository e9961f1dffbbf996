// gpt_ops_cuda.h — the CUDA backend's GptOps (models/gpt/gpt_ops.h), includable from plain C++.
// The implementation (gpt_ops_cuda.cu): kernels for the embedding's gather and scatter-add,
// LayerNorm, the causal softmax and GELU, and cuBLAS strided-batched GEMMs for attention, all on
// the device's compute stream.
#pragma once

#include <memory>

#include "models/gpt/gpt_ops.h"

namespace dpscale {

// `dev` must be a CudaDevice (its stream and math mode are taken).
std::unique_ptr<GptOps> make_cuda_gpt_ops(Device& dev);

}  // namespace dpscale
