// grad_format.h — the conversion arithmetic of the gradients' wire format (--grad-comm fp32 |
// bf16 | fp16; its names and bytes: contract/grad_wire.h), as DDP's bf16_compress_hook and
// Horovod's fp16 compression do it: each gradient is rounded to 2 bytes for the all-reduce and
// widened back afterwards.
//
// Every function is `DPSCALE_HD inline` (as models/elementwise.h): the MPI path calls them in
// plain loops on the host, a CUDA kernel can call the same functions on the device, so both
// backends round alike.
//   bf16: the top 16 bits of an fp32 (8-bit exponent, 7-bit mantissa): fp32's range, ~3 digits.
//   fp16: IEEE binary16 (5-bit exponent, 10-bit mantissa): ~3.3 digits, max 65504, subnormals
//         down to 2^-24; larger magnitudes become ±inf.
// Both round to nearest, ties to even; NaN stays NaN (quiet).
#pragma once

#include <cstdint>
#include <cstring>

#include "contract/grad_wire.h"
#include "models/hd.h"

namespace dpscale {

DPSCALE_HD inline uint32_t float_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
DPSCALE_HD inline float bits_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

DPSCALE_HD inline uint16_t float_to_bf16(float x) {
  const uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN: keep it quiet
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate. Overflow of the
  // largest finite values carries into the exponent and gives inf, as it should.
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
DPSCALE_HD inline float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

DPSCALE_HD inline uint16_t float_to_fp16(float x) {
  const uint32_t u = float_bits(x);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (a < 0x38800000u) {
    // Below fp16's smallest normal (2^-14): a subnormal m · 2^-24, m = round(|x| · 2^24).
    if (a < 0x33000000u) return sign;  // below half of 2^-24 (ties at exactly half go to 0, even)
    const uint32_t e = a >> 23;                   // biased fp32 exponent, 102..112
    const uint32_t mant = (a & 0x7fffffu) | 0x800000u;  // 24-bit significand
    const uint32_t shift = 126u - e;              // |x|·2^24 = mant >> shift (shift 14..24)
    uint32_t m = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  const uint32_t r = a - 0x38000000u;  // exponent - 112, still in fp32's layout
  return static_cast<uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}
DPSCALE_HD inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));  // inf, NaN
  if (e == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(m) * 5.9604644775390625e-8f;  // m · 2^-24
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

DPSCALE_HD inline uint16_t encode_grad(GradFormat f, float x) {
  return f == GradFormat::bf16 ? float_to_bf16(x) : float_to_fp16(x);
}
DPSCALE_HD inline float decode_grad(GradFormat f, uint16_t h) {
  return f == GradFormat::bf16 ? bf16_to_float(h) : fp16_to_float(h);
}

}  // namespace dpscale
