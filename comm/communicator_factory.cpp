// communicator_factory.cpp — NCCL for the CUDA backend, MPI for the CPU backend.
#include "communicator_factory.h"

#include <cstdlib>
#include <string>

#include "core/errors.h"
#include "mpi_communicator.h"
#if DPSCALE_HAVE_CUDA
#include "nccl_communicator.h"
#endif

namespace dpscale {

void check_comm_options(Backend backend, const LinkModel& link, AllreduceAlgo algo) {
  if (backend != Backend::cuda) return;
  if (link.enabled()) throw InputError("--link emulation applies to the MPI (CPU) backend only; NCCL uses the real link");
  // hier is dpscale's own MPI composition; NCCL already picks per call among its ring, tree and
  // (where the hardware has them) NVLS/CollNet algorithms, hierarchical across nodes, so there is
  // nothing for --allreduce to choose on this backend.
  if (algo != AllreduceAlgo::native) {
    throw InputError(std::string("--allreduce ") + allreduce_algo_name(algo) +
                     " applies to the MPI (CPU) backend only; NCCL runs its own algorithms (hierarchical across "
                     "nodes already): use --allreduce native");
  }
}

void check_grad_format(Backend backend, GradFormat fmt) {
  if (backend != Backend::cuda || fmt != GradFormat::bf16) return;
  // ncclBfloat16 exists from NCCL 2.10 on.
  const std::string v = nccl_version();
  const size_t dot = v.find('.');
  if (dot == std::string::npos) return;  // unknown: NCCL itself will refuse the type
  const int major = std::atoi(v.c_str()), minor = std::atoi(v.c_str() + dot + 1);
  if (major < 2 || (major == 2 && minor < 10)) {
    throw InputError("--grad-comm bf16 needs NCCL 2.10 or later (ncclBfloat16); this run has NCCL " + v);
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
