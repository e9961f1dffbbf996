// gemm_probe.h — this rank's measured GEMM rate, for --link-dilation auto:TFLOPS.
//
// F = target FLOP/s ÷ measured FLOP/s: how many times slower this device runs the model's own
// largest forward GEMM than the target GPU would. Multiplying modelled link times by F keeps
// the target's comm-to-compute ratio γ on this machine.
#pragma once

#include "models/device.h"
#include "models/mlp_spec.h"

namespace dpscale {

// FLOP/s of the forward GEMM of the model's largest layer at `batch` rows: one untimed run,
// then the best of three.
double measure_gemm_flops(Device& dev, const MlpSpec& spec, int batch);

}  // namespace dpscale
