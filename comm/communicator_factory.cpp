// communicator_factory.cpp — NCCL for the CUDA backend, MPI for the CPU backend.
#include "communicator_factory.h"

#include "models/errors.h"
#include "mpi_communicator.h"
#if DPSCALE_HAVE_CUDA
#include "nccl_communicator.h"
#endif

namespace dpscale {

void check_comm_options(Backend backend, const LinkModel& link, AllreduceAlgo algo) {
  if (backend != Backend::cuda) return;
  if (link.enabled()) throw InputError("--link emulation applies to the MPI (CPU) backend only; NCCL uses the real link");
  if (algo != AllreduceAlgo::native) {
    throw InputError(std::string("--allreduce ") + allreduce_algo_name(algo) +
                     " applies to the MPI (CPU) backend only; NCCL runs its own algorithms");
  }
}

void check_grad_format(Backend backend, GradFormat fmt) {
  if (backend == Backend::cuda && fmt != GradFormat::fp32) {
    throw InputError(std::string("--grad-comm ") + grad_format_name(fmt) +
                     " is implemented on the MPI (CPU) backend only; NCCL sends fp32 gradients");
  }
}

std::unique_ptr<Communicator> make_communicator(Device& device, MPI_Comm world, AllreduceAlgo algo,
                                                const LinkModel& link, CollectiveWatchdog* watchdog) {
  check_comm_options(device.backend(), link, algo);
  if (device.backend() == Backend::cuda) {
#if DPSCALE_HAVE_CUDA
    return make_nccl_communicator(device, world, watchdog);
#endif
  }
  return std::make_unique<MpiCommunicator>(world, algo, link, watchdog);
}

std::string nccl_version() {
#if DPSCALE_HAVE_CUDA
  return nccl_version_string();
#else
  return "";
#endif
}

}  // namespace dpscale
