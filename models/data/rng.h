// rng.h — the documented, platform-independent random numbers behind weights and data.
//
// Counter-based SplitMix64 (Steele, Lea & Flood 2014): value i of stream s under seed S is
//   mix64(key(S, s) + (i + 1) * 0x9E3779B97F4A7C15),  key(S, s) = mix64(S ^ mix64(s + 1))
// where mix64 is SplitMix64's output function. Being a pure function of (seed, stream, index)
// it needs no state, gives the same bits on every platform and compiler, and lets every rank
// build identical weights and data without communicating. Floats are made from the top bits
// with exact integer arithmetic; normals use Box–Muller in double, rounded once to float.
#pragma once

#include <cmath>
#include <cstdint>

namespace dpscale {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class CounterRng {
 public:
  constexpr CounterRng(uint64_t seed, uint64_t stream) : key_(mix64(seed ^ mix64(stream + 1))) {}

  // The i-th raw 64-bit value of this stream.
  constexpr uint64_t bits(uint64_t i) const { return mix64(key_ + (i + 1) * kGolden); }

  // Uniform in [0, 1) with 24 bits: exactly representable as float.
  float uniform01(uint64_t i) const {
    return static_cast<float>(bits(i) >> 40) * (1.0f / 16777216.0f);
  }
  // Uniform in [-bound, bound), as torch.nn.init.uniform_(-bound, bound).
  float uniform_symmetric(uint64_t i, float bound) const {
    return bound * (2.0f * uniform01(i) - 1.0f);
  }
  // Standard normal, value i uses raw values 2i and 2i+1.
  float normal(uint64_t i) const {
    const double u1 = (static_cast<double>(bits(2 * i) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(bits(2 * i + 1) >> 11) * 0x1.0p-53;      // [0, 1)
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  // Uniform integer in [0, n) by multiply-shift of the top 32 bits (bias below 2^-32 * n).
  uint32_t below(uint64_t i, uint32_t n) const {
    return static_cast<uint32_t>(((bits(i) >> 32) * n) >> 32);
  }

 private:
  uint64_t key_;
};

}  // namespace dpscale
