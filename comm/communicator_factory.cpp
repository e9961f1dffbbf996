// communicator_factory.cpp — NCCL for the CUDA backend, MPI for the CPU backend.
#include "communicator_factory.h"

#include "models/errors.h"
#include "mpi_communicator.h"
#if DPSCALE_HAVE_CUDA
#include "nccl_communicator.h"
#endif

namespace dpscale {

std::unique_ptr<Communicator> make_communicator(Device& device, MPI_Comm world, AllreduceAlgo algo,
                                                const LinkModel& link) {
  if (device.backend() == Backend::cuda) {
    if (link.enabled()) throw InputError("--link emulation applies to the MPI (CPU) backend only; NCCL uses the real link");
    if (algo != AllreduceAlgo::native) throw InputError("--allreduce ring|star applies to the MPI (CPU) backend only");
#if DPSCALE_HAVE_CUDA
    return make_nccl_communicator(device, world);
#endif
  }
  return std::make_unique<MpiCommunicator>(world, algo, link);
}

std::string nccl_version() {
#if DPSCALE_HAVE_CUDA
  return nccl_version_string();
#else
  return "";
#endif
}

}  // namespace dpscale
