// memory_check.cpp — the model's memory plan and the refusal that names the amount.
#include "memory_check.h"

#include <unistd.h>

#include <cstdio>

#include "core/errors.h"

namespace dpscale {

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::optional<uint64_t> mlp_bytes(const MlpSpec& spec, int64_t max_batch, bool momentum) {
  if (max_batch < 0) return std::nullopt;
  const uint64_t batch = static_cast<uint64_t>(max_batch);
  // Parameters and widths in 64 bits: each width is at most 2^16, so the count itself is exact.
  uint64_t params = 0, act_floats = 0;
  for (int l = 0; l < spec.n_layers(); ++l) {
    const uint64_t in = static_cast<uint64_t>(spec.widths[l]), out = static_cast<uint64_t>(spec.widths[l + 1]);
    params += in * out + out + 2 * 63;  // and at most 63 floats of padding before each tensor (param_layout.h)
    const auto act = checked_mul(batch, out);
    if (!act) return std::nullopt;
    const auto sum = checked_add(act_floats, *act);
    if (!sum) return std::nullopt;
    act_floats = *sum;
  }
  const auto dbufs = checked_mul(batch, 2 * static_cast<uint64_t>(spec.max_width()));
  if (!dbufs) return std::nullopt;
  // params + grads (+1 slot) + velocity, activations, dX buffers; then bytes.
  uint64_t floats = params * (momentum ? 3 : 2) + 1;
  for (uint64_t part : {act_floats, *dbufs}) {
    const auto s = checked_add(floats, part);
    if (!s) return std::nullopt;
    floats = *s;
  }
  return checked_mul(floats, sizeof(float));
}

void check_fits(const std::string& what, std::optional<uint64_t> need, int sharing, uint64_t have,
                const std::string& where) {
  const uint64_t k = sharing > 1 ? static_cast<uint64_t>(sharing) : 1;
  const std::optional<uint64_t> total = need ? checked_mul(*need, k) : std::nullopt;
  if (!total) throw InputError(what + " needs more than 16 EiB (its size overflows 64 bits)");
  if (have == 0 || *total <= have) return;
  std::string msg = what + " needs " + format_bytes(*need);
  if (k > 1) msg += " per rank x " + std::to_string(k) + " ranks on this node = " + format_bytes(*total);
  throw InputError(msg + ", more than this machine's " + format_bytes(have) + " of " + where);
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace dpscale
