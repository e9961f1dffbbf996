// system_info.h — the "system" object every sweep line carries, so a results file explains
// itself later: host, CPU and GPU model, device and core counts, CUDA/NCCL/MPI versions, link.
//
// Gathered once per sweep from /proc/cpuinfo, `nvidia-smi` (when present) and `mpirun
// --version`; NCCL's version comes from each record (only the trainers load NCCL).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dpscale {

struct SystemQuery {
  std::string mpi_version;    // mpi_version_line()
  std::string link = "none";  // the config's link and dilation
  std::string link_dilation = "1";
  std::string nvidia_smi = "nvidia-smi";
};

nlohmann::ordered_json describe_system(const SystemQuery& q);

std::string host_name();
std::string cpu_model();   // /proc/cpuinfo "model name", or "" if unknown

// GPU names, one per device, from `nvidia-smi --query-gpu=name`; empty when there is none.
std::vector<std::string> gpu_names(const std::string& nvidia_smi = "nvidia-smi");

}  // namespace dpscale
