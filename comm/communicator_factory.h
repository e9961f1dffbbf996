// communicator_factory.h — picks the Communicator for a device: NCCL for CUDA, MPI for CPU.
#pragma once

#include <memory>

#include "allreduce_algos.h"
#include "communicator.h"
#include "link_model.h"
#include "models/device.h"

namespace dpscale {

// InputError for combinations that cannot work (link emulation or a non-native algorithm on
// NCCL). Collective: every rank of `world` must call it.
std::unique_ptr<Communicator> make_communicator(Device& device, MPI_Comm world, AllreduceAlgo algo,
                                                const LinkModel& link);

// "nccl 2.28.9" or "" when NCCL is not compiled in.
std::string nccl_version();

}  // namespace dpscale
