// machine_fingerprint.h — which machine a measurement was made on, as far as comparing two
// measurements cares: the CPU model, the count of CPUs and the GPU model (empty: none). The host
// name is not part of it (CI machines of one kind have new names every time).
//
// Read from a sweep line's `system` object (harness/sweep/sweep_line.cpp) to refuse comparing
// files of two machines, and taken of this machine (CPU part) to key the cached --gemm auto
// choice (models/gemm/gemm_cache.h).
#pragma once

#include <string>

namespace dpscale {

struct MachineFingerprint {
  std::string cpu_model;
  int cpu_count = 0;
  std::string gpu_model;
  bool known = false;  // false: the line carries no system object (a bare trainer record)
  bool operator==(const MachineFingerprint&) const = default;
  // "AMD EPYC 7B13 x2 CPUs, no GPU"
  std::string describe() const {
    if (!known) return "an unknown machine (no system object)";
    return (cpu_model.empty() ? std::string("unknown CPU") : cpu_model) + " x" + std::to_string(cpu_count) +
           " CPUs, " + (gpu_model.empty() ? std::string("no GPU") : gpu_model);
  }
};

}  // namespace dpscale
