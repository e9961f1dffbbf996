// communicator_factory.h — picks the Communicator for a device: NCCL for CUDA, MPI for CPU.
#pragma once

#include <memory>

#include "allreduce_algos.h"
#include "communicator.h"
#include "contract/link_model.h"
#include "models/device.h"

namespace dpscale {

// Collective: every rank of `world` must call it. Runs check_comm_options first.
std::unique_ptr<Communicator> make_communicator(Device& device, MPI_Comm world, AllreduceAlgo algo,
                                                const LinkModel& link);

}  // namespace dpscale
