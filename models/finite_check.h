// finite_check.h — is a float finite, and where is the first one that is not.
//
// The predicate is written once, `DPSCALE_HD`, for the CPU loops and the CUDA kernel
// (models/cuda/kernels.cu, flag_nonfinite) alike. It tests the exponent bits, not std::isfinite:
// a non-finite float (±inf, any NaN) is exactly one whose 8 exponent bits are all ones, and a
// bit test stays true under -ffast-math, where the compiler may assume isfinite() is always true.
//
// Where non-finite values are looked for (each names what it found, see docs/ARCHITECTURE.md):
//   data      .npy features and IDX images at load      file, row, column
//   --init    each tensor of the checkpoint at load      tensor, element [row, col]
//   training  the flat gradient and parameter buffers    tensor, element, step
//   --save    the weights about to be written            tensor (nothing is written)
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "elementwise.h"

namespace dpscale {

namespace ew {
DPSCALE_HD inline bool finite_bits(uint32_t bits) { return (bits & 0x7f800000u) != 0x7f800000u; }

DPSCALE_HD inline bool is_finite(float v) {
#if defined(__CUDA_ARCH__)
  return finite_bits(__float_as_uint(v));
#else
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return finite_bits(bits);
#endif
}
}  // namespace ew

// Index of the first non-finite value of x[0, n), or -1 when all are finite.
inline int64_t first_nonfinite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!ew::is_finite(x[i])) return i;
  }
  return -1;
}

// "nan", "inf" or "-inf": how a message names the value found.
inline std::string nonfinite_name(float v) {
  if (v != v) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace dpscale

namespace dpscale {

class ParamLayout;

// The first non-finite value of a flat buffer laid out as `layout` (parameters or gradients), in
// forward order (layers.0.weight, layers.0.bias, layers.1.weight, ...) — the layer nearest the
// data first, where a bad input shows — as "layers.0.weight[12, 345] is nan"; "" when every
// value is finite. The loss slot of a gradient buffer is not a tensor and is not looked at.
std::string describe_first_nonfinite(const ParamLayout& layout, const float* buf);

}  // namespace dpscale
