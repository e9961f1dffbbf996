// cuda_check.h — one checking macro per API, naming the call, file and line (nccl-tests'
// CUDACHECK / llm.c's cudaCheck). A failure throws dpscale::DeviceError; main() turns it into
// one line and, in a multi-rank job, MPI_Abort so no peer waits forever.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace dpscale {

class DeviceError : public std::runtime_error {
 public:
  explicit DeviceError(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] inline void cuda_fail(const char* call, const char* msg, const char* file, int line) {
  throw DeviceError(std::string(call) + " failed: " + msg + " at " + file + ":" + std::to_string(line));
}

}  // namespace dpscale

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) ::dpscale::cuda_fail(#call, cudaGetErrorString(err_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                            \
  do {                                                                                \
    cublasStatus_t st_ = (call);                                                      \
    if (st_ != CUBLAS_STATUS_SUCCESS) ::dpscale::cuda_fail(#call, cublasGetStatusString(st_), __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: catches bad launch configurations at once.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
