// communicator_factory.h — picks the Communicator for a device: NCCL for CUDA, MPI for CPU.
#pragma once

#include <memory>

#include "allreduce_algos.h"
#include "communicator.h"
#include "contract/link_model.h"
#include "models/device.h"
#include "watchdog.h"

namespace dpscale {

// Collective: every rank of `world` must call it. Runs check_comm_options first.
// `watchdog` (may be null) bounds every wait of the communicator's collectives.
std::unique_ptr<Communicator> make_communicator(Device& device, MPI_Comm world, AllreduceAlgo algo,
                                                const LinkModel& link, CollectiveWatchdog* watchdog = nullptr);

}  // namespace dpscale
