// nccl_communicator.h — the NCCL Communicator for the CUDA backend (declared without CUDA types
// so plain C++ can include it).
//
// One NCCL communicator per run, built from an ncclUniqueId that rank 0 makes and broadcasts
// over MPI (ncclCommInitRank under the collective watchdog); a dedicated comm stream. Each
// all-reduce first makes the comm stream wait on an event recorded on the compute stream right
// after its gradient was written, so it can start while backward goes on; finish() orders the
// compute stream after the comm stream on the device; drain() waits on the host (polling
// ncclCommGetAsyncError so a failed peer surfaces as an error, not a hang). Gradients travel as
// fp32, or bf16/fp16 (set_grad_format; accumulation: nccl_communicator.cpp).
#pragma once

#include <mpi.h>

#include <memory>

#include "communicator.h"
#include "models/device.h"

namespace dpscale {

class CollectiveWatchdog;
// `watchdog` (may be null) bounds the host's waits; on a timeout the NCCL communicator is aborted
// (ncclCommAbort) before MPI_Abort ends the job.
std::unique_ptr<Communicator> make_nccl_communicator(Device& device, MPI_Comm world,
                                                     CollectiveWatchdog* watchdog = nullptr);
// "2.28.9" — the NCCL library this binary runs with.
std::string nccl_version_string();

}  // namespace dpscale
