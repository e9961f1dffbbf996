// nccl_shared_gpu.cpp — the environment of nccl_shared_gpu.h.
#include "nccl_shared_gpu.h"

#include <unistd.h>

#include <cstdlib>

namespace dpscale {

std::vector<std::pair<std::string, std::string>> nccl_shared_gpu_env(int rank, const std::string& host) {
  return {
      {"NCCL_HOSTID", "dpscale-shared-gpu-" + host + "-rank" + std::to_string(rank)},
      {"NCCL_NET", "Socket"},
      {"NCCL_SOCKET_IFNAME", "lo"},
      {"NCCL_IB_DISABLE", "1"},
      {"NCCL_P2P_DISABLE", "1"},
      {"NCCL_SHM_DISABLE", "1"},
      {"NCCL_NVLS_ENABLE", "0"},
      {"NCCL_MNNVL_ENABLE", "0"},
  };
}

void apply_nccl_shared_gpu_env(int rank) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  for (const auto& [name, value] : nccl_shared_gpu_env(rank, host)) ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace dpscale
