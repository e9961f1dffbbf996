// nccl_shared_gpu.h — what NCCL is told so that K ranks can share one GPU (--share-gpu).
//
// NCCL refuses two ranks of one communicator on one GPU ("Duplicate GPU detected"): it compares
// each pair of ranks' host (a hash of the host name and boot id) and GPU (PCI bus id). Under
// --share-gpu every rank names a host of its own (NCCL_HOSTID, which NCCL reads in place of the
// host name and boot id), so no two ranks are on one host as NCCL sees them, and they talk as
// hosts do: over the network transport, here NCCL's socket transport on the loopback interface
// (which NCCL leaves out unless named). Its shared-memory and peer-to-peer transports connect
// ranks of one host only, so they are not used anyway; they are switched off as well, and so are
// NVLink SHARP and multi-node NVLink, which need distinct GPUs, so that nothing maps one GPU's
// memory into another rank of the same GPU. For correctness at K > GPUs only: every byte goes
// through host sockets and the ranks' kernels share one GPU, so the times mean nothing.
//
// The variables must be set before the process's first NCCL call (NCCL reads them once):
// the trainers set them in the rank's set-up, before the communicator exists.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dpscale {

// NAME, value pairs for `rank` of a job on host `host` (NCCL_HOSTID differs per rank).
std::vector<std::pair<std::string, std::string>> nccl_shared_gpu_env(int rank, const std::string& host);

// Sets them in this process (overwriting: the transport is the point of the option).
void apply_nccl_shared_gpu_env(int rank);

}  // namespace dpscale
