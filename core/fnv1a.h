// fnv1a.h — FNV-1a, 64-bit: the one hash dpscale uses to compare things across ranks (replica
// weights, option fingerprints). Not cryptographic; it only has to tell different bytes apart.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dpscale {

inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ULL;

// Continues a hash `h` over n bytes (start with kFnv1aOffset).
inline uint64_t fnv1a64(const void* data, size_t n, uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace dpscale
