// memory_check.h — sizes that cannot overflow, and memory asked for before it is allocated.
//
// Every size derived from a file header or a flag (an .npy shape, an IDX header, a width list
// times a batch) is multiplied with checked_mul, so 2^62 rows of 784 columns is "too large", not
// a wrapped-around small number that a later resize() turns into a crash. Before the model's
// buffers are allocated, mlp_bytes() says what they need, and check_fits() compares it with the
// device's memory (CPU: physical memory shared by this node's ranks; CUDA: the GPU's) and
// refuses with the amount, instead of std::bad_alloc or the OOM killer ending the run unnamed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlp_spec.h"

namespace dpscale {

// a·b, or nullopt when the product does not fit in 64 bits.
inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// "1.5 GiB", "512 MiB", "3.2 KiB", "12 bytes".
std::string format_bytes(uint64_t bytes);

// Bytes one Mlp replica allocates for `max_batch` rows: parameters, gradients (+ the loss slot),
// the momentum buffer when used, one activation buffer per layer, two dX ping-pong buffers.
// nullopt when the count overflows 64 bits.
std::optional<uint64_t> mlp_bytes(const MlpSpec& spec, int64_t max_batch, bool momentum);

// Throws InputError "<what> needs <N> (<detail>)[ x <sharing> ranks on this node], more than
// this machine's <M> of <where>" when need × sharing exceeds `have` (have 0 = unknown: passes).
void check_fits(const std::string& what, std::optional<uint64_t> need, int sharing, uint64_t have,
                const std::string& where);

// Physical memory of this machine in bytes (0 if unknown).
uint64_t physical_memory_bytes();

}  // namespace dpscale
